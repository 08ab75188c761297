package trace

import (
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// A turn outside the window is not returned, only counted in the totals:
// of its messages only the facts the store read with each entry are used
// (store.MessageFacts: role, time, usage, tool-call ids; a message whose
// facts are not known is decoded), tallied the way message, step and
// finish build and sum a returned turn. Requests, tokens, cost and tool
// calls come from the replies; the duration from the prompt's timestamp
// to the latest of the replies, their trace records' doneAt and the
// results of their tool calls.

// liteTurn tallies a turn outside the window.
type liteTurn struct {
	usage   Usage
	started int64
	ended   int64
	// calls are the tool calls of the turn's steps in order, for
	// matching results as message does (the latest step first).
	calls []liteCall
	steps int32
	used  bool
}

type liteCall struct {
	id   string
	step int32 // the index of its step in the turn
	done bool
}

// tally adds message entry e to turn ti, which is outside the window.
func (b *builder) tally(ti int, turn *Turn, e *store.Entry, rec *stepRecord) {
	f := e.MessageFacts()
	if f == nil {
		m, err := e.Message()
		if err != nil {
			return
		}
		if f = store.FactsOf(m); f == nil {
			return
		}
	}
	if b.lite == nil {
		b.lite = make([]liteTurn, len(b.turns))
	}
	l := &b.lite[ti]
	l.used = true
	switch f.Role {
	case llm.RoleUser:
		if e.ID == turn.ID {
			l.started = f.Timestamp
		}
	case llm.RoleAssistant:
		u := &l.usage
		u.addRequest(f.Usage())
		for _, id := range f.ToolCalls {
			l.calls = append(l.calls, liteCall{id: id, step: l.steps})
		}
		l.steps++
		u.ToolCalls += len(f.ToolCalls)
		l.ended = max(l.ended, f.Timestamp)
		if rec != nil {
			l.ended = max(l.ended, ms(rec.data.DoneAt))
		}
	case llm.RoleToolResult:
		for end := len(l.calls); end > 0; { // step by step, the latest first
			start := end - 1
			for start > 0 && l.calls[start-1].step == l.calls[end-1].step {
				start--
			}
			for k := start; k < end; k++ {
				if c := &l.calls[k]; c.id == f.ToolCallID && !c.done {
					c.done = true
					l.ended = max(l.ended, f.Timestamp)
					return
				}
			}
			end = start
		}
	}
}

// liteTurn returns the tally of turn ti (nil: none, the turn is in the
// window or has no message).
func (b *builder) liteTurn(ti int) *liteTurn {
	if ti < len(b.lite) && b.lite[ti].used {
		return &b.lite[ti]
	}
	return nil
}

// finish sets t's usage from the tally, as finish does for a returned
// turn (its status is not needed: the turn is not returned).
func (l *liteTurn) finish(t *Turn) {
	t.StartedAt, t.EndedAt = l.started, l.ended
	t.Usage = l.usage
	t.Usage.CacheHitRatio = hitRatio(l.usage.Input, l.usage.CacheRead, l.usage.CacheWrite)
	if t.StartedAt > 0 && t.EndedAt > t.StartedAt {
		t.Usage.DurationMs = t.EndedAt - t.StartedAt
	}
}

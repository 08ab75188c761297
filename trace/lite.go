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

// tally adds message entry e (index i) to turn ti, which is outside the
// window.
func (b *builder) tally(ti, i int, e *store.Entry, rec *stepRef) {
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
	l := b.liteOf(ti)
	l.used = true
	switch f.Role {
	case llm.RoleUser:
		if i == int(b.starts[ti]) {
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
			l.ended = max(l.ended, ms(rec.doneAt))
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

// liteOf returns the tally of turn ti. On a path a turn's entries are
// contiguous: one tally is kept, added to the sum when the next turn
// begins (its calls' slice reused); otherwise each turn has its own.
func (b *builder) liteOf(ti int) *liteTurn {
	if !b.path {
		if b.lite == nil {
			b.lite = make([]liteTurn, len(b.starts))
		}
		return &b.lite[ti]
	}
	if ti != b.curTurn {
		b.flushCur()
		b.curTurn = ti
	}
	return &b.cur
}

// flushCur adds the current tally to the sum and clears it.
func (b *builder) flushCur() {
	b.cur.addTo(b.sumOf(b.curTurn))
	b.cur = liteTurn{calls: b.cur.calls[:0]}
}

// flushLite adds every tally to the sum (after the walk).
func (b *builder) flushLite() {
	b.flushCur()
	for k := range b.lite {
		b.lite[k].addTo(b.sumOf(k))
	}
	b.lite = nil
}

// sumOf is the sum turn ti's tally goes to: the turns before the window
// or those after it (totals adds them in turn order, the window between).
func (b *builder) sumOf(ti int) *Usage {
	if ti < b.from {
		return &b.liteSum
	}
	return &b.liteAfter
}

// addTo adds the tally's usage to sum as totals adds a returned turn's
// (its duration from its prompt to its last reply, record or result).
func (l *liteTurn) addTo(sum *Usage) {
	if !l.used {
		return
	}
	u := &l.usage
	sum.Requests += u.Requests
	sum.Input += u.Input
	sum.Output += u.Output
	sum.CacheRead += u.CacheRead
	sum.CacheWrite += u.CacheWrite
	sum.ToolCalls += u.ToolCalls
	sum.Cost += u.Cost
	if l.started > 0 && l.ended > l.started {
		sum.DurationMs += l.ended - l.started
	}
}

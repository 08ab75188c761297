package trace

import (
	"encoding/json"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// A turn outside the window is not returned, only counted in the totals:
// its messages are read into liteMessage, the few fields the totals need
// (no text, no thinking, no arguments, no tool output is decoded), and
// tallied the way message, step and finish build and sum a returned
// turn. Requests, tokens, cost and tool calls come from the replies;
// the duration from the prompt's timestamp to the latest of the replies,
// their trace records' doneAt and the results of their tool calls.

// liteMessage is what the totals read of a message.
type liteMessage struct {
	Role       string          `json:"role"`
	Timestamp  int64           `json:"timestamp"`
	Usage      llm.Usage       `json:"usage"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"toolCallId"`
	cost       llm.Cost        // Usage.Cost points here when readLite reads one
}

// liteBody is an entry body as tally reads it.
type liteBody struct {
	Message liteMessage `json:"message"`
}

// liteBlock is what the totals read of an assistant content block.
type liteBlock struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// liteTurn tallies a turn outside the window.
type liteTurn struct {
	usage   Usage
	started int64
	ended   int64
	// calls are the tool calls of each step, for matching results as
	// message does.
	calls [][]liteCall
}

type liteCall struct {
	id   string
	done bool
}

// tally adds message entry e to turn ti, which is outside the window.
func (b *builder) tally(ti int, turn *Turn, e *store.Entry, traces map[string]stepRecord) {
	if b.lite == nil {
		b.lite = map[int]*liteTurn{}
	}
	l := b.lite[ti]
	if l == nil {
		l = &liteTurn{}
		b.lite[ti] = l
	}
	body := &b.liteBody // scratch: nothing of it is kept
	*body = liteBody{}
	m := &body.Message
	blocks := b.blocks[:0]
	if !readLite(e, m, &blocks) {
		*body = liteBody{}
		if e.Decode(body) != nil {
			return
		}
		blocks = blocks[:0]
		if m.Role == llm.RoleAssistant && len(m.Content) > 0 && json.Unmarshal(m.Content, &blocks) != nil {
			return
		}
	}
	b.blocks = blocks
	switch m.Role {
	case llm.RoleUser:
		if e.ID == turn.ID {
			l.started = m.Timestamp
		}
	case llm.RoleAssistant:
		u := &l.usage
		u.addRequest(m.Usage)
		var calls []liteCall
		for _, c := range blocks {
			if c.Type == "toolCall" {
				calls = append(calls, liteCall{id: c.ID})
			}
		}
		u.ToolCalls += len(calls)
		l.calls = append(l.calls, calls)
		l.ended = max(l.ended, m.Timestamp)
		if r, ok := traces[e.ID]; ok {
			l.ended = max(l.ended, ms(r.data.DoneAt))
		}
	case llm.RoleToolResult:
		for si := len(l.calls) - 1; si >= 0; si-- {
			for k := range l.calls[si] {
				if c := &l.calls[si][k]; c.id == m.ToolCallID && !c.done {
					c.done = true
					l.ended = max(l.ended, m.Timestamp)
					return
				}
			}
		}
	}
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

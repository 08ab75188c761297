package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Stream event types. "start" is reported once when the reply begins; the
// block events follow. Every *_start has exactly one *_end.
const (
	EvStart         = "start"
	EvTextStart     = "text_start"
	EvTextDelta     = "text_delta"
	EvTextEnd       = "text_end"
	EvThinkingStart = "thinking_start"
	EvThinkingDelta = "thinking_delta"
	EvThinkingEnd   = "thinking_end"
	EvToolCallStart = "toolcall_start"
	EvToolCallDelta = "toolcall_delta"
	EvToolCallEnd   = "toolcall_end"
)

// StreamEvent is one step of a streamed reply; its JSON form is the
// assistantMessageEvent of the wire's message_update.
type StreamEvent struct {
	Type         string    `json:"type"`
	ContentIndex int       `json:"contentIndex"`
	ID           string    `json:"id,omitempty"`
	Name         string    `json:"name,omitempty"`
	Delta        string    `json:"delta,omitempty"`
	ToolCall     *ToolCall `json:"toolCall,omitempty"`
}

// IsDelta reports whether the event appends text to a block.
func (e *StreamEvent) IsDelta() bool {
	return e.Type == EvTextDelta || e.Type == EvThinkingDelta || e.Type == EvToolCallDelta
}

// Builder assembles an AssistantMessage from stream steps and reports each
// step. Providers drive it; it keeps block indexes and guarantees that open
// blocks are closed before the message ends.
type Builder struct {
	msg     *AssistantMessage
	emit    func(StreamEvent, *AssistantMessage)
	started bool
	open    []int // indexes of open blocks, in opening order
	args    map[int]*strings.Builder
	text    map[int]*strings.Builder
}

// NewBuilder starts a reply for req. emit may be nil.
func NewBuilder(req *Request, api string, emit func(StreamEvent, *AssistantMessage)) *Builder {
	if emit == nil {
		emit = func(StreamEvent, *AssistantMessage) {}
	}
	m := req.Model
	return &Builder{
		msg: &AssistantMessage{
			Role: RoleAssistant, Content: []Content{}, API: api, Provider: m.Provider, Model: m.ID,
			StopReason: StopStop, Timestamp: req.Timestamp, ThinkingLevel: req.ThinkingLevel,
		},
		emit: emit,
		args: map[int]*strings.Builder{},
		text: map[int]*strings.Builder{},
	}
}

// Message returns the message being built (owned by the builder until
// Finish or Fail).
func (b *Builder) Message() *AssistantMessage { return b.msg }

// Started reports whether Start was called.
func (b *Builder) Started() bool { return b.started }

// Start reports the beginning of the reply (idempotent).
func (b *Builder) Start() {
	if b.started {
		return
	}
	b.started = true
	b.emit(StreamEvent{Type: EvStart}, b.msg)
}

// SetUsage replaces the usage of the partial message.
func (b *Builder) SetUsage(u Usage) { b.msg.Usage = u }

// TextStart opens a text block and returns its index.
func (b *Builder) TextStart() int {
	return b.openBlock(Text(""), EvTextStart)
}

// ThinkingStart opens a thinking block and returns its index.
func (b *Builder) ThinkingStart() int {
	return b.openBlock(&ThinkingContent{Type: "thinking"}, EvThinkingStart)
}

// ToolCallStart opens a tool-call block and returns its index.
func (b *Builder) ToolCallStart(id, name string) int {
	b.Start()
	idx := len(b.msg.Content)
	b.msg.Content = append(b.msg.Content, NewToolCall(id, name, nil))
	b.open = append(b.open, idx)
	b.args[idx] = &strings.Builder{}
	b.emit(StreamEvent{Type: EvToolCallStart, ContentIndex: idx, ID: id, Name: name}, b.msg)
	return idx
}

func (b *Builder) openBlock(c Content, typ string) int {
	b.Start()
	idx := len(b.msg.Content)
	b.msg.Content = append(b.msg.Content, c)
	b.open = append(b.open, idx)
	b.text[idx] = &strings.Builder{}
	b.emit(StreamEvent{Type: typ, ContentIndex: idx}, b.msg)
	return idx
}

// Delta appends s to the open block idx (text, thinking or tool arguments).
// Empty deltas are ignored.
func (b *Builder) Delta(idx int, s string) {
	if s == "" || idx < 0 || idx >= len(b.msg.Content) {
		return
	}
	switch c := b.msg.Content[idx].(type) {
	case *TextContent:
		sb := b.text[idx]
		sb.WriteString(s)
		c.Text = sb.String()
		b.emit(StreamEvent{Type: EvTextDelta, ContentIndex: idx, Delta: s}, b.msg)
	case *ThinkingContent:
		sb := b.text[idx]
		sb.WriteString(s)
		c.Thinking = sb.String()
		b.emit(StreamEvent{Type: EvThinkingDelta, ContentIndex: idx, Delta: s}, b.msg)
	case *ToolCall:
		b.args[idx].WriteString(s)
		b.emit(StreamEvent{Type: EvToolCallDelta, ContentIndex: idx, Delta: s}, b.msg)
	}
}

// SetSignature sets the signature of a thinking block.
func (b *Builder) SetSignature(idx int, sig string) {
	if idx >= 0 && idx < len(b.msg.Content) {
		if t, ok := b.msg.Content[idx].(*ThinkingContent); ok {
			t.ThinkingSignature = sig
		}
	}
}

// End closes block idx. For a tool call the accumulated arguments are
// parsed; text that is not a JSON object is kept in RawArguments and the
// arguments become {}.
func (b *Builder) End(idx int) {
	pos := -1
	for i, o := range b.open {
		if o == idx {
			pos = i
			break
		}
	}
	if pos < 0 {
		return
	}
	b.open = append(b.open[:pos], b.open[pos+1:]...)
	switch c := b.msg.Content[idx].(type) {
	case *TextContent:
		delete(b.text, idx)
		b.emit(StreamEvent{Type: EvTextEnd, ContentIndex: idx}, b.msg)
	case *ThinkingContent:
		delete(b.text, idx)
		b.emit(StreamEvent{Type: EvThinkingEnd, ContentIndex: idx}, b.msg)
	case *ToolCall:
		raw := b.args[idx].String()
		delete(b.args, idx)
		c.Arguments, c.RawArguments = ParseArguments(raw)
		tc := *c
		b.emit(StreamEvent{Type: EvToolCallEnd, ContentIndex: idx, ToolCall: &tc}, b.msg)
	}
}

// ParseArguments turns streamed argument text into a compact JSON object.
// Empty text is {}; text that is not a JSON object yields {} and the text
// itself as the second result.
func ParseArguments(raw string) (json.RawMessage, string) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" {
		return json.RawMessage(`{}`), ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(trimmed)); err == nil && buf.Len() > 0 && buf.Bytes()[0] == '{' {
		return json.RawMessage(buf.Bytes()), ""
	}
	return json.RawMessage(`{}`), raw
}

// closeAll closes every open block in opening order.
func (b *Builder) closeAll() {
	for len(b.open) > 0 {
		b.End(b.open[0])
	}
}

// Finish ends the reply normally. An empty stopReason becomes toolUse when
// the message has tool calls and stop otherwise.
func (b *Builder) Finish(stopReason string) *AssistantMessage {
	b.Start()
	b.closeAll()
	if stopReason == "" {
		stopReason = StopStop
		if len(b.msg.ToolCalls()) > 0 {
			stopReason = StopToolUse
		}
	}
	b.msg.StopReason = stopReason
	return b.msg
}

// Fail ends the reply with err: open blocks are closed, the stop reason
// becomes aborted (context cancellation or ErrAborted) or error, and the
// message text is recorded. It returns the message and err as a *Error.
func (b *Builder) Fail(err error) (*AssistantMessage, error) {
	b.closeAll()
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Kind: ErrOther, Message: err.Error()}
		if errors.Is(err, context.Canceled) {
			e = Aborted()
		}
	}
	if e.Kind == ErrAborted {
		b.msg.StopReason = StopAborted
		b.msg.ErrorMessage = AbortMessage
	} else {
		b.msg.StopReason = StopError
		b.msg.ErrorMessage = e.Message
		if e.RetryAfter > 0 {
			b.msg.RetryAfterMs = e.RetryAfter.Milliseconds()
		}
	}
	return b.msg, e
}

// Aborted is the error providers return when their context is cancelled.
func Aborted() *Error { return &Error{Kind: ErrAborted, Message: AbortMessage} }

package rpc

import (
	"bytes"
	"encoding/json"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// compactEvent applies the compact_events shapes: tool results in
// turn_end shrink to their identity, and message_start / entry_appended
// omit the body of tool results and of user messages with images.
// message_end and tool_execution_end stay complete.
func compactEvent(e events.Event) events.Event {
	switch ev := e.(type) {
	case events.TurnEnd:
		out := compactTurnEnd{Message: ev.Message, ToolResults: make([]compactResult, 0, len(ev.ToolResults))}
		for _, r := range ev.ToolResults {
			out.ToolResults = append(out.ToolResults, compactResult{r.ToolCallID, r.ToolName, r.IsError, r.Timestamp, true})
		}
		return out
	case events.MessageStart:
		if heavy(ev.Message) {
			return compactMessageStart{Message: omitContent(ev.Message)}
		}
	case events.EntryAppended:
		if ev.Entry.Type == store.TypeMessage {
			if m, err := ev.Entry.Message(); err == nil && heavy(m) {
				body, _ := json.Marshal(struct {
					Message json.RawMessage `json:"message"`
				}{omitContent(m)})
				return events.EntryAppended{Entry: ev.Entry.WithBody(body)}
			}
		}
	}
	return e
}

// heavy reports whether a message's body is omitted in compact shapes.
func heavy(m llm.Message) bool {
	switch m := m.(type) {
	case *llm.ToolResultMessage:
		return true
	case *llm.UserMessage:
		return len(m.Content.Images()) > 0
	}
	return false
}

// omitContent re-encodes m with "content":"" followed by "contentOmitted":true.
func omitContent(m llm.Message) json.RawMessage {
	raw, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	i := bytes.Index(raw, []byte(`"content":`))
	if i < 0 {
		return raw
	}
	start := i + len(`"content":`)
	dec := json.NewDecoder(bytes.NewReader(raw[start:]))
	var skip json.RawMessage
	if err := dec.Decode(&skip); err != nil {
		return raw
	}
	end := start + int(dec.InputOffset())
	out := append([]byte{}, raw[:start]...)
	out = append(out, `"","contentOmitted":true`...)
	return append(out, raw[end:]...)
}

type compactResult struct {
	ToolCallID     string `json:"toolCallId"`
	ToolName       string `json:"toolName"`
	IsError        bool   `json:"isError"`
	Timestamp      int64  `json:"timestamp"`
	ContentOmitted bool   `json:"contentOmitted"`
}

type compactTurnEnd struct {
	Message     *llm.AssistantMessage `json:"message"`
	ToolResults []compactResult       `json:"toolResults"`
}

func (compactTurnEnd) Type() string { return "turn_end" }

type compactMessageStart struct {
	Message json.RawMessage `json:"message"`
}

func (compactMessageStart) Type() string { return "message_start" }

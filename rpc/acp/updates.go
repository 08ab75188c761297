package acp

import (
	"encoding/json"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
)

// Update kinds (the sessionUpdate discriminator).
const (
	updUserChunk    = "user_message_chunk"
	updAgentChunk   = "agent_message_chunk"
	updThoughtChunk = "agent_thought_chunk"
	updToolCall     = "tool_call"
	updToolUpdate   = "tool_call_update"
	updPlan         = "plan"
	updUsage        = "usage_update"
	updMode         = "current_mode_update"
	updConfig       = "config_option_update"
	updCommands     = "available_commands_update"
	updInfo         = "session_info_update"
)

// translator maps one session's events to session/update payloads. The
// events carry every fact an update shows (a call's target path, the diff
// its tool computed): nothing is read from disk here. Events of a session
// arrive one at a time (the session's bus serialises them), so a
// translator needs no lock.
type translator struct {
	running map[string]bool   // open calls by the model's id: in_progress was reported
	asks    map[string]string // permission request id -> model's tool call id
	ids     *callIDs          // model ids -> the session's unique ACP ids
}

func newTranslator() *translator {
	return &translator{running: map[string]bool{}, asks: map[string]string{}, ids: newCallIDs()}
}

// translate returns the updates of e, in order (often none).
func (t *translator) translate(e events.Event) []any {
	switch e := e.(type) {
	case events.MessageUpdate:
		ev := e.AssistantMessageEvent
		if ev.Delta == "" {
			return nil
		}
		switch ev.Type {
		case llm.EvTextDelta:
			return []any{contentChunk{SessionUpdate: updAgentChunk, Content: contentBlock{Type: "text", Text: ev.Delta}}}
		case llm.EvThinkingDelta:
			return []any{contentChunk{SessionUpdate: updThoughtChunk, Content: contentBlock{Type: "text", Text: ev.Delta}}}
		}
	case events.ToolExecutionStart:
		return []any{t.start(e)}
	case events.PermissionRequest:
		// A sub-agent's ask (depth 1) names the child's tool call, not one
		// of this session's.
		if e.Context != nil && e.Context.ToolCallID != "" && e.Context.Depth == 0 {
			t.asks[e.RequestID] = e.Context.ToolCallID
		}
	case events.PermissionResolved:
		id, ok := t.asks[e.RequestID]
		delete(t.asks, e.RequestID)
		if running, open := t.running[id]; ok && open && !running && e.Decision.Allows() {
			t.running[id] = true
			return []any{toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: t.ids.get(id), Status: statusInProgress}}
		}
	case events.ToolExecutionUpdate:
		u := toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: t.ids.get(e.ToolCallID),
			Content: []toolCallContent{{Type: "content", Content: &contentBlock{Type: "text", Text: capTail(e.Partial, maxToolText)}}}}
		if running, open := t.running[e.ToolCallID]; open && !running {
			t.running[e.ToolCallID] = true
			u.Status = statusInProgress
		}
		return []any{u}
	case events.ToolExecutionEnd:
		return []any{t.end(e)}
	case events.TodoUpdated:
		return []any{planFromTodos(e.Items)}
	}
	return nil
}

// start announces a tool call as pending.
func (t *translator) start(e events.ToolExecutionStart) toolCallStart {
	t.running[e.ToolCallID] = false
	u := toolCallStart{
		SessionUpdate: updToolCall, ToolCallID: t.ids.open(e.ToolCallID), Title: toolTitle(e.ToolName, e.Args),
		Kind: toolKind(e.ToolName), Status: statusPending, Locations: toolLocations(e.ToolName, e.Args, e.Path),
		RawInput: rawOrNil(e.Args),
	}
	if e.ViaCodemode { // folded under the codemode call in the client
		u.Title = "codemode › " + u.Title
		u.Meta = map[string]any{MetaAma: toolCallMeta{ParentToolCallID: t.ids.get(e.ParentToolCallID)}}
	}
	return u
}

// end reports the outcome: completed or failed, the diff the tool of a
// successful write or edit computed first, then the result text and
// images.
func (t *translator) end(e events.ToolExecutionEnd) toolCallUpdate {
	delete(t.running, e.ToolCallID)
	u := toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: t.ids.end(e.ToolCallID), Status: statusCompleted}
	if e.IsError || e.Result.IsError {
		u.Status = statusFailed
	}
	if u.Status == statusCompleted {
		u.Content = diffContent(e.Diff)
	}
	u.Content = append(u.Content, resultItems(e.Result.Content)...)
	u.RawOutput = rawOutput(e.Result.IsError || e.IsError, e.Result.Details)
	return u
}

// toolRawOutput is the rawOutput of a finished call.
type toolRawOutput struct {
	IsError bool            `json:"isError"`
	Details json.RawMessage `json:"details,omitempty"`
}

func rawOutput(isError bool, details json.RawMessage) toolRawOutput {
	return toolRawOutput{IsError: isError, Details: rawOrNil(details)}
}

// rawOrNil drops empty and invalid JSON (a RawMessage must be valid to be
// encoded).
func rawOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	return raw
}

// planFromTodos is the plan update of a todo list: every item an entry
// (priority medium; done becomes completed).
func planFromTodos(items []plan.TodoItem) planUpdate {
	entries := make([]planEntry, 0, len(items))
	for _, it := range items {
		status := "pending"
		switch it.Status {
		case plan.TodoInProgress:
			status = "in_progress"
		case plan.TodoDone:
			status = "completed"
		}
		entries = append(entries, planEntry{Content: it.Text, Priority: "medium", Status: status})
	}
	return planUpdate{SessionUpdate: updPlan, Entries: entries}
}

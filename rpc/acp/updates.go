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

// translator maps one session's events to session/update payloads. It
// keeps what later updates of a tool call need (the text of a file before
// a write or edit, for the diff). Events of a session arrive one at a time
// (the session's bus serialises them), so a translator needs no lock.
type translator struct {
	cwd   string
	calls map[string]*toolState // by the model's tool call id
	asks  map[string]string     // permission request id -> model's tool call id
	ids   *callIDs              // model ids -> the session's unique ACP ids
}

type toolState struct {
	name    string
	args    json.RawMessage
	path    string  // absolute target of write/edit
	oldText *string // text before the change (nil: the file did not exist)
	diffOK  bool    // oldText is known and small enough
	running bool    // in_progress was reported
}

func newTranslator(cwd string) *translator {
	return &translator{cwd: cwd, calls: map[string]*toolState{}, asks: map[string]string{}, ids: newCallIDs()}
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
		if st := t.calls[id]; ok && st != nil && !st.running && e.Decision.Allows() {
			st.running = true
			return []any{toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: t.ids.get(id), Status: statusInProgress}}
		}
	case events.ToolExecutionUpdate:
		u := toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: t.ids.get(e.ToolCallID),
			Content: []toolCallContent{{Type: "content", Content: &contentBlock{Type: "text", Text: capTail(e.Partial, maxToolText)}}}}
		if st := t.calls[e.ToolCallID]; st != nil && !st.running {
			st.running = true
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

// start announces a tool call as pending. For write and edit it reads the
// target first, so the final update can carry a diff.
func (t *translator) start(e events.ToolExecutionStart) toolCallStart {
	st := &toolState{name: e.ToolName, args: e.Args}
	t.calls[e.ToolCallID] = st
	if e.ToolName == "write" || e.ToolName == "edit" {
		if a := parseArgs(e.Args); a.Path != "" {
			st.path = absPath(t.cwd, a.Path)
			if text, exists, ok := readForDiff(st.path); ok {
				st.diffOK = true
				if exists {
					st.oldText = &text
				}
			}
		}
	}
	u := toolCallStart{
		SessionUpdate: updToolCall, ToolCallID: t.ids.open(e.ToolCallID), Title: toolTitle(e.ToolName, e.Args),
		Kind: toolKind(e.ToolName), Status: statusPending, Locations: toolLocations(e.ToolName, e.Args, t.cwd),
		RawInput: rawOrNil(e.Args),
	}
	if e.ViaCodemode { // folded under the codemode call in the client
		u.Title = "codemode › " + u.Title
		u.Meta = map[string]any{MetaAma: toolCallMeta{ParentToolCallID: t.ids.get(e.ParentToolCallID)}}
	}
	return u
}

// end reports the outcome: completed or failed, the diff of a successful
// write or edit first, then the result text and images.
func (t *translator) end(e events.ToolExecutionEnd) toolCallUpdate {
	st := t.calls[e.ToolCallID]
	delete(t.calls, e.ToolCallID)
	u := toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: t.ids.end(e.ToolCallID), Status: statusCompleted}
	if e.IsError || e.Result.IsError {
		u.Status = statusFailed
	}
	if st != nil && u.Status == statusCompleted && st.diffOK {
		if d, ok := st.diff(); ok {
			u.Content = append(u.Content, d)
		}
	}
	u.Content = append(u.Content, resultItems(e.Result.Content)...)
	u.RawOutput = rawOutput(e.Result.IsError || e.IsError, e.Result.Details)
	return u
}

// diff is the diff of a finished write or edit: the new text is the write's
// content, or the file as the edit left it.
func (st *toolState) diff() (toolCallContent, bool) {
	var newText string
	switch st.name {
	case "write":
		newText = parseArgs(st.args).Content
		if len(newText) > maxDiffBytes {
			return toolCallContent{}, false
		}
	case "edit":
		text, exists, ok := readForDiff(st.path)
		if !ok || !exists {
			return toolCallContent{}, false
		}
		newText = text
	default:
		return toolCallContent{}, false
	}
	return diffItem(st.path, st.oldText, newText), true
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

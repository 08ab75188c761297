package acp

import (
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// replayUpdates turns a session's history (the projected messages of its
// active branch) into the updates session/load sends before its answer:
// user_message_chunk for user text and images, agent_thought_chunk and
// agent_message_chunk for assistant thinking and text, and one tool_call
// per tool call carrying its final status and result text (no diff: diffs
// are sent live only). System, custom and summary messages are not
// replayed. Each tool call gets its own ACP id from ids (a model that
// reused an id shows as several calls) and the first later result with
// the model's id.
func replayUpdates(msgs []llm.Message, cwd string, ids *callIDs) []any {
	var out []any
	waiting := map[string][]*toolCallStart{} // model id -> calls without a result, oldest first
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			out = append(out, userChunks(m.Content)...)
		case *llm.AssistantMessage:
			for _, c := range m.Content {
				switch b := c.(type) {
				case *llm.ThinkingContent:
					if b.Thinking != "" && !b.Redacted {
						out = append(out, contentChunk{SessionUpdate: updThoughtChunk, Content: contentBlock{Type: "text", Text: b.Thinking}})
					}
				case *llm.TextContent:
					if b.Text != "" {
						out = append(out, contentChunk{SessionUpdate: updAgentChunk, Content: contentBlock{Type: "text", Text: b.Text}})
					}
				case *llm.ToolCall:
					u := replayToolCall(b, ids.open(b.ID), cwd)
					ids.end(b.ID)
					waiting[b.ID] = append(waiting[b.ID], u)
					out = append(out, u)
				}
			}
		case *llm.ToolResultMessage:
			if q := waiting[m.ToolCallID]; len(q) > 0 {
				q[0].finish(m)
				waiting[m.ToolCallID] = q[1:]
			}
		}
	}
	return out
}

// userChunks are the user_message_chunk updates of a user message.
func userChunks(c llm.UserContent) []any {
	if !c.IsBlocks {
		if c.Text == "" {
			return nil
		}
		return []any{contentChunk{SessionUpdate: updUserChunk, Content: contentBlock{Type: "text", Text: c.Text}}}
	}
	var out []any
	for _, b := range c.Blocks {
		switch b := b.(type) {
		case *llm.TextContent:
			if b.Text != "" {
				out = append(out, contentChunk{SessionUpdate: updUserChunk, Content: contentBlock{Type: "text", Text: b.Text}})
			}
		case *llm.ImageContent:
			out = append(out, contentChunk{SessionUpdate: updUserChunk, Content: contentBlock{Type: "image", Data: b.Data, MimeType: b.MimeType}})
		}
	}
	return out
}

// replayToolCall is a past tool call as one tool_call update, pending
// until finish gives it its result. Its location is resolved as the live
// call's was (tools.Env.Target), against the session directory.
func replayToolCall(tc *llm.ToolCall, id, cwd string) *toolCallStart {
	target := (&tools.Env{Cwd: cwd}).Target(tc.Name, tc.Arguments)
	return &toolCallStart{
		SessionUpdate: updToolCall, ToolCallID: id, Title: toolTitle(tc.Name, tc.Arguments),
		Kind: toolKind(tc.Name), Status: statusPending, Locations: toolLocations(tc.Name, tc.Arguments, target),
		RawInput: rawOrNil(tc.Arguments),
	}
}

// finish makes a replayed call completed or failed with its result.
func (u *toolCallStart) finish(res *llm.ToolResultMessage) {
	u.Status = statusCompleted
	if res.IsError {
		u.Status = statusFailed
	}
	u.Content = resultItems(res.Content)
	u.RawOutput = rawOutput(res.IsError, res.Details)
}

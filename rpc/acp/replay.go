package acp

import (
	"github.com/armadra/ama-rpc/llm"
)

// replayUpdates turns a session's history (the projected messages of its
// active branch) into the updates session/load sends before its answer:
// user_message_chunk for user text and images, agent_thought_chunk and
// agent_message_chunk for assistant thinking and text, and one tool_call
// per tool call carrying its final status and result text (no diff: diffs
// are sent live only). System, custom and summary messages are not
// replayed.
func replayUpdates(msgs []llm.Message, cwd string) []any {
	results := map[string]*llm.ToolResultMessage{}
	for _, m := range msgs {
		if r, ok := m.(*llm.ToolResultMessage); ok {
			results[r.ToolCallID] = r
		}
	}
	var out []any
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
					out = append(out, replayToolCall(b, results[b.ID], cwd))
				}
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

// replayToolCall is a past tool call as one tool_call update: completed or
// failed with its result, pending when the history has no result.
func replayToolCall(tc *llm.ToolCall, res *llm.ToolResultMessage, cwd string) toolCallStart {
	u := toolCallStart{
		SessionUpdate: updToolCall, ToolCallID: tc.ID, Title: toolTitle(tc.Name, tc.Arguments),
		Kind: toolKind(tc.Name), Status: statusPending, Locations: toolLocations(tc.Name, tc.Arguments, cwd),
		RawInput: rawOrNil(tc.Arguments),
	}
	if res != nil {
		u.Status = statusCompleted
		if res.IsError {
			u.Status = statusFailed
		}
		u.Content = resultItems(res.Content)
		u.RawOutput = rawOutput(res.IsError, res.Details)
	}
	return u
}

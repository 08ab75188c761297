package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/armadra/ama-rpc/llm"
)

// Marker texts of the messages the session has no OpenAI role for.
const (
	compactionPrefix = "The conversation before this point was compacted. Summary of it:\n\n<summary>\n"
	branchPrefix     = "The conversation came back from a side branch. Summary of that branch:\n\n<summary>\n"
	summarySuffix    = "\n</summary>"
	noToolOutput     = "(no output)"
)

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildRequest converts an llm.Request into the chat completion request.
func (p *Provider) buildRequest(req *llm.Request) goopenai.ChatCompletionRequest {
	m := req.Model
	cr := goopenai.ChatCompletionRequest{
		Model:         m.ID,
		Stream:        true,
		StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
		Messages:      convertMessages(req.System, req.Messages, acceptsImages(m)),
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = emptySchema
		}
		cr.Tools = append(cr.Tools, goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	if req.MaxTokens > 0 {
		if p.opts.MaxCompletionTokens || openAIReasoningID(m.ID) {
			cr.MaxCompletionTokens = req.MaxTokens
		} else {
			cr.MaxTokens = req.MaxTokens
		}
	}
	cr.ReasoningEffort = p.effort(m, req.ThinkingLevel)
	return cr
}

// effort returns the reasoning_effort value for a thinking level, or "" to
// send none.
func (p *Provider) effort(m *llm.Model, level string) string {
	if !p.opts.ReasoningEffort || !m.Reasoning || level == "" || level == "off" || !llm.ValidThinkingLevel(level) {
		return ""
	}
	if v, ok := p.opts.Efforts[level]; ok {
		return v
	}
	return level
}

// openAIReasoningID reports model ids go-openai validates as OpenAI
// reasoning models, which refuse max_tokens.
func openAIReasoningID(id string) bool {
	for _, pre := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(id, pre) {
			return true
		}
	}
	return false
}

// acceptsImages reports whether the model takes image input; a model
// without an input list is assumed to.
func acceptsImages(m *llm.Model) bool {
	if len(m.Input) == 0 {
		return true
	}
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}

// convertMessages maps the session context onto chat messages.
//
//   - The system prompt is the first message.
//   - Custom messages and summaries are user messages (summaries wrapped in a
//     marker text); system checkpoints are skipped (System is rendered).
//   - Assistant messages keep their text and tool calls; thinking is not
//     resent. Failed replies without content are skipped, and so are tool
//     calls that no tool result answers (the API rejects them).
//   - Tool results are "tool" messages. Their images cannot go there, so
//     they follow the run of tool messages as one user message.
//   - Images for a model without image input become a short note.
func convertMessages(system string, msgs []llm.Message, images bool) []goopenai.ChatCompletionMessage {
	answered := map[string]bool{}
	for _, m := range msgs {
		if tr, ok := m.(*llm.ToolResultMessage); ok {
			answered[tr.ToolCallID] = true
		}
	}
	called := map[string]bool{}

	out := make([]goopenai.ChatCompletionMessage, 0, len(msgs)+1)
	if system != "" {
		out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	var pending []goopenai.ChatMessagePart // images of tool results
	flush := func() {
		if len(pending) > 0 {
			out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, MultiContent: pending})
			pending = nil
		}
	}
	for _, msg := range msgs {
		if _, ok := msg.(*llm.ToolResultMessage); !ok {
			flush()
		}
		switch v := msg.(type) {
		case *llm.UserMessage:
			out = append(out, userMessage(v.Content, images))
		case *llm.CustomMessage:
			out = append(out, userMessage(v.Content, images))
		case *llm.CompactionSummary:
			out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser,
				Content: compactionPrefix + v.Summary + summarySuffix})
		case *llm.BranchSummary:
			out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser,
				Content: branchPrefix + v.Summary + summarySuffix})
		case *llm.AssistantMessage:
			if am, ok := assistantMessage(v, answered); ok {
				for _, tc := range am.ToolCalls {
					called[tc.ID] = true
				}
				out = append(out, am)
			}
		case *llm.ToolResultMessage:
			if !called[v.ToolCallID] {
				// No assistant tool call to attach it to: keep the
				// information as user text rather than fail the request.
				body := llm.JoinText(v.Content, "\n")
				if body == "" {
					body = noToolOutput
				}
				text := "Result of tool " + v.ToolName + " (call " + v.ToolCallID + "):\n" + body
				out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: text})
				continue
			}
			var tm goopenai.ChatCompletionMessage
			tm, pending = toolMessage(v, images, pending)
			out = append(out, tm)
		}
	}
	flush()
	return out
}

func userMessage(c llm.UserContent, images bool) goopenai.ChatCompletionMessage {
	m := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser}
	if !c.IsBlocks {
		m.Content = c.Text
		return m
	}
	hasImage := false
	for _, b := range c.Blocks {
		if _, ok := b.(*llm.ImageContent); ok {
			hasImage = true
			break
		}
	}
	if !hasImage || !images {
		// Plain string content is accepted by every server.
		var sb strings.Builder
		for _, b := range c.Blocks {
			switch v := b.(type) {
			case *llm.TextContent:
				sb.WriteString(v.Text)
			case *llm.ImageContent:
				if sb.Len() > 0 {
					sb.WriteString("\n")
				}
				sb.WriteString(imageOmitted(1))
			}
		}
		m.Content = sb.String()
		return m
	}
	for _, b := range c.Blocks {
		switch v := b.(type) {
		case *llm.TextContent:
			m.MultiContent = append(m.MultiContent, textPart(v.Text))
		case *llm.ImageContent:
			m.MultiContent = append(m.MultiContent, imagePart(v))
		}
	}
	return m
}

func assistantMessage(v *llm.AssistantMessage, answered map[string]bool) (goopenai.ChatCompletionMessage, bool) {
	if v.Failed() && len(v.Content) == 0 {
		return goopenai.ChatCompletionMessage{}, false
	}
	m := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: llm.JoinText(v.Content, "\n\n")}
	for _, c := range v.Content {
		tc, ok := c.(*llm.ToolCall)
		if !ok || !answered[tc.ID] {
			continue
		}
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		m.ToolCalls = append(m.ToolCalls, goopenai.ToolCall{ID: tc.ID, Type: goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: tc.Name, Arguments: args}})
	}
	if m.Content == "" && len(m.ToolCalls) == 0 {
		return m, false // e.g. thinking only
	}
	return m, true
}

func toolMessage(v *llm.ToolResultMessage, images bool, pending []goopenai.ChatMessagePart) (goopenai.ChatCompletionMessage, []goopenai.ChatMessagePart) {
	text := llm.JoinText(v.Content, "\n")
	var imgs []*llm.ImageContent
	for _, c := range v.Content {
		if im, ok := c.(*llm.ImageContent); ok {
			imgs = append(imgs, im)
		}
	}
	if len(imgs) > 0 {
		if images {
			pending = append(pending, textPart("Image output of tool "+v.ToolName+" (call "+v.ToolCallID+"):"))
			for _, im := range imgs {
				pending = append(pending, imagePart(im))
			}
			if text == "" {
				text = "(image output follows in the next message)"
			}
		} else {
			if text != "" {
				text += "\n"
			}
			text += imageOmitted(len(imgs))
		}
	}
	if text == "" {
		text = noToolOutput
	}
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleTool, Content: text, ToolCallID: v.ToolCallID}, pending
}

func textPart(s string) goopenai.ChatMessagePart {
	return goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: s}
}

func imagePart(im *llm.ImageContent) goopenai.ChatMessagePart {
	return goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL,
		ImageURL: &goopenai.ChatMessageImageURL{URL: "data:" + im.MimeType + ";base64," + im.Data}}
}

func imageOmitted(n int) string {
	if n == 1 {
		return "(image omitted: this model does not accept images)"
	}
	return "(" + strconv.Itoa(n) + " images omitted: this model does not accept images)"
}

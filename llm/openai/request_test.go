package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return v
}

func fromJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("expected JSON: %v", err)
	}
	return v
}

func conversation() []llm.Message {
	read := llm.NewToolCall("c1", "read", json.RawMessage(`{"path":"a"}`))
	shot := llm.NewToolCall("c2", "shot", nil)
	lost := llm.NewToolCall("c3", "bash", json.RawMessage(`{"command":"sleep 9"}`))
	return []llm.Message{
		llm.NewUser("hi", 1, ""),
		&llm.AssistantMessage{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
			&llm.ThinkingContent{Type: "thinking", Thinking: "secret thoughts"}, llm.Text("let me look"), read}},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Content{llm.Text("file body")}},
		&llm.UserMessage{Role: llm.RoleUser, Content: llm.BlockContent(llm.Text("see"), llm.Image("AAAA", "image/png"))},
		&llm.AssistantMessage{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "500", Content: []llm.Content{}},
		&llm.CompactionSummary{Role: llm.RoleCompactionSummary, Summary: "S1"},
		&llm.SystemMessage{Role: llm.RoleSystem},
		llm.NewCustom("note", "a note", false, 1),
		&llm.AssistantMessage{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{shot}},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c2", ToolName: "shot",
			Content: []llm.Content{llm.Image("BBBB", "image/jpeg"), llm.Text("took screenshot")}},
		&llm.BranchSummary{Role: llm.RoleBranchSummary, Summary: "B1"},
		&llm.AssistantMessage{Role: llm.RoleAssistant, StopReason: llm.StopAborted, Content: []llm.Content{llm.Text("partial"), lost}},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c9", ToolName: "orphan", Content: []llm.Content{}},
		llm.NewUser("next", 2, ""),
	}
}

func TestRequestConversion(t *testing.T) {
	s := newServer(t, replay(sse(text("ok"), finish("stop"), "[DONE]")))
	req := request(conversation()...)
	req.Model.ID = "o3"
	req.ThinkingLevel = "high"
	req.MaxTokens = 1000
	req.Tools = []llm.ToolDecl{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "now", Description: "Time"},
	}
	p := provider(s, func(o *openai.Options) { o.ReasoningEffort = true })
	if _, err, _ := run(t, p, req); err != nil {
		t.Fatal(err)
	}
	got := decode(t, s.lastBody(t))
	want := fromJSON(t, `{
	  "model": "o3",
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "max_completion_tokens": 1000,
	  "reasoning_effort": "high",
	  "messages": [
	    {"role": "system", "content": "You are a test."},
	    {"role": "user", "content": "hi"},
	    {"role": "assistant", "content": "let me look",
	     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]},
	    {"role": "tool", "content": "file body", "tool_call_id": "c1"},
	    {"role": "user", "content": [{"type": "text", "text": "see"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
	    {"role": "user", "content": "The conversation before this point was compacted. Summary of it:\n\n<summary>\nS1\n</summary>"},
	    {"role": "user", "content": "a note"},
	    {"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
	    {"role": "tool", "content": "took screenshot", "tool_call_id": "c2"},
	    {"role": "user", "content": [{"type": "text", "text": "Image output of tool shot (call c2):"},
	      {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}}]},
	    {"role": "user", "content": "The conversation came back from a side branch. Summary of that branch:\n\n<summary>\nB1\n</summary>"},
	    {"role": "assistant", "content": "partial"},
	    {"role": "user", "content": "Result of tool orphan (call c9):\n(no output)"},
	    {"role": "user", "content": "next"}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "read", "description": "Read a file",
	      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
	    {"type": "function", "function": {"name": "now", "description": "Time", "parameters": {"type": "object", "properties": {}}}}
	  ]
	}`)
	if d := cmp.Diff(want, any(got)); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
}

func TestRequestTextOnlyModel(t *testing.T) {
	s := newServer(t, replay(sse(text("ok"), finish("stop"), "[DONE]")))
	req := request(
		&llm.UserMessage{Role: llm.RoleUser, Content: llm.BlockContent(llm.Text("look:"), llm.Image("AAAA", "image/png"))},
		&llm.AssistantMessage{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{llm.NewToolCall("c1", "shot", nil)}},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "shot",
			Content: []llm.Content{llm.Image("A", "image/png"), llm.Image("B", "image/png")}},
	)
	req.Model.Input = []string{"text"}
	req.MaxTokens = 500
	if _, err, _ := run(t, provider(s, nil), req); err != nil {
		t.Fatal(err)
	}
	got := decode(t, s.lastBody(t))
	msgs := got["messages"].([]any)
	wantMsgs := fromJSON(t, `[
	  {"role": "system", "content": "You are a test."},
	  {"role": "user", "content": "look:\n(image omitted: this model does not accept images)"},
	  {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
	  {"role": "tool", "tool_call_id": "c1", "content": "(2 images omitted: this model does not accept images)"}
	]`)
	if d := cmp.Diff(wantMsgs, any(msgs)); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if got["max_tokens"] != float64(500) || got["max_completion_tokens"] != nil {
		t.Errorf("max tokens fields: %v / %v", got["max_tokens"], got["max_completion_tokens"])
	}
	if _, ok := got["reasoning_effort"]; ok {
		t.Error("reasoning_effort sent to an endpoint that does not take it")
	}
}

func TestReasoningEffortMapping(t *testing.T) {
	presetOpenAI := openai.Presets()[0]
	cases := []struct {
		name      string
		supported bool
		efforts   map[string]string
		reasoning bool
		level     string
		want      any // nil: not sent
	}{
		{"off", true, nil, true, "off", nil},
		{"empty", true, nil, true, "", nil},
		{"medium", true, nil, true, "medium", "medium"},
		{"xhigh passthrough", true, nil, true, "xhigh", "xhigh"},
		{"openai minimal", true, presetOpenAI.Efforts, true, "minimal", "low"},
		{"openai xhigh", true, presetOpenAI.Efforts, true, "xhigh", "high"},
		{"openai high", true, presetOpenAI.Efforts, true, "high", "high"},
		{"non-reasoning model", true, nil, false, "high", nil},
		{"unknown endpoint", false, nil, true, "high", nil},
		{"bogus level", true, nil, true, "turbo", nil},
	}
	s := newServer(t, replay(sse(text("ok"), finish("stop"), "[DONE]")))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := provider(s, func(o *openai.Options) { o.ReasoningEffort, o.Efforts = c.supported, c.efforts })
			req := request()
			req.Model.Reasoning, req.ThinkingLevel = c.reasoning, c.level
			if _, err, _ := run(t, p, req); err != nil {
				t.Fatal(err)
			}
			if got := decode(t, s.lastBody(t))["reasoning_effort"]; got != c.want {
				t.Errorf("reasoning_effort = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMaxTokensField(t *testing.T) {
	s := newServer(t, replay(sse(text("ok"), finish("stop"), "[DONE]")))
	cases := []struct {
		id         string
		completion bool
		field      string
	}{
		{"llama3", false, "max_tokens"},
		{"llama3", true, "max_completion_tokens"},
		{"gpt-5-mini", false, "max_completion_tokens"}, // go-openai refuses max_tokens for these ids
		{"o4-mini", false, "max_completion_tokens"},
	}
	for _, c := range cases {
		p := provider(s, func(o *openai.Options) { o.MaxCompletionTokens = c.completion })
		req := request()
		req.Model.ID, req.MaxTokens = c.id, 64
		if _, err, _ := run(t, p, req); err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		body := decode(t, s.lastBody(t))
		if body[c.field] != float64(64) {
			t.Errorf("%s completion=%t: body %v", c.id, c.completion, body)
		}
	}
	// No cap requested: none sent.
	if _, err, _ := run(t, provider(s, nil), request()); err != nil {
		t.Fatal(err)
	}
	body := decode(t, s.lastBody(t))
	if body["max_tokens"] != nil || body["max_completion_tokens"] != nil {
		t.Errorf("cap sent: %v", body)
	}
}

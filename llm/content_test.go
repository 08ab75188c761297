package llm_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/llm"
)

func encodeNoHTML(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestUserContentKeepsHTML(t *testing.T) {
	m := llm.NewUser("<proposed_plan> & co", 1, "")
	if got, want := encodeNoHTML(t, m), `{"role":"user","content":"<proposed_plan> & co","timestamp":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	b := &llm.UserMessage{Role: "user", Content: llm.BlockContent(llm.Text("<b>")), Timestamp: 2}
	if got, want := encodeNoHTML(t, b), `{"role":"user","content":[{"type":"text","text":"<b>"}],"timestamp":2}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	msgs := []llm.Message{
		llm.NewUser("hi", 1, "steer"),
		&llm.AssistantMessage{Role: "assistant", Content: []llm.Content{llm.Text("a"), &llm.ThinkingContent{Type: "thinking", Thinking: "t"},
			llm.NewToolCall("c1", "read", json.RawMessage(`{"path":"x","z":1}`))}, API: "fake", Provider: "fake", Model: "echo", StopReason: "toolUse", Timestamp: 3},
		&llm.ToolResultMessage{Role: "toolResult", ToolCallID: "c1", ToolName: "read", Content: []llm.Content{llm.Text("ok")}, Timestamp: 4},
		llm.NewCustom("ama.note", "x", false, 5),
	}
	for _, m := range msgs {
		raw := encodeNoHTML(t, m)
		back, err := llm.DecodeMessage(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if again := encodeNoHTML(t, back); again != raw {
			t.Fatalf("round trip changed:\n%s\n%s", raw, again)
		}
	}
}

func TestUsageFinalizeMatchesReferenceArithmetic(t *testing.T) {
	u := llm.Usage{Input: 10, Output: 2}
	u.Finalize(llm.Prices{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25})
	if got := encodeNoHTML(t, u); got != `{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0.00001,"output":0.000004,"cacheRead":0,"cacheWrite":0,"total":0.000014000000000000001}}` {
		t.Fatalf("got %s", got)
	}
}

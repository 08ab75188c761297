package fake

import (
	"context"
	"testing"

	"github.com/armadra/ama-rpc/llm"
)

// A response kept for a prompt (forPrompt) is passed by calls whose last
// user message does not hold it: they take the next free response (or the
// echo), in any order of arrival, and the matching call still gets it.
func TestForPromptKeepsTheResponse(t *testing.T) {
	s, err := ParseScript([]byte(`{"responses":[{"text":"first"},{"forPrompt":"child work","text":"child done"},{"text":"third"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Script: s})
	ask := func(prompt string) string {
		t.Helper()
		req := &llm.Request{Model: Models()[0], Messages: []llm.Message{
			&llm.UserMessage{Role: llm.RoleUser, Content: llm.StringContent(prompt)}}}
		msg, err := p.Stream(context.Background(), req, func(llm.StreamEvent, *llm.AssistantMessage) {})
		if err != nil {
			t.Fatal(err)
		}
		return msg.Text("")
	}
	for _, c := range []struct{ prompt, want string }{
		{"go", "first"},
		{"go on", "third"}, // passes the kept response by
		{"do the child work", "child done"},
		{"and now", "and now"}, // exhausted: the echo
		{"child work again", "child work again"},
	} {
		if got := ask(c.prompt); got != c.want {
			t.Errorf("%q: reply %q, want %q", c.prompt, got, c.want)
		}
	}
}

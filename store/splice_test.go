package store

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/llm"
)

// The entry of a huge prompt is spliced, and its body is what
// encoding/json writes.
func TestMessageEntryOfAHugePrompt(t *testing.T) {
	m := llm.NewUser(strings.Repeat("a<\n\u2028\xff\"", llm.SpliceBytes/4), 5, "")
	e := MessageEntry(m)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Message llm.Message `json:"message"`
	}{m}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.Body(), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
		t.Fatal("spliced body differs from encoding/json")
	}
	if got, err := e.Message(); err != nil || got != m {
		t.Fatalf("Message() = %v, %v", got, err)
	}
}

package trace_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// session builds entries the way the session actor appends them: each new
// entry's parent is the current leaf.
type session struct {
	entries []*store.Entry
	leaf    *string
	n       int
	now     int64
}

func newSession() *session { return &session{now: 1_000_000} }

func (s *session) add(e *store.Entry) string {
	s.n++
	e.ID = fmt.Sprintf("%08x", s.n)
	if s.leaf != nil {
		p := *s.leaf
		e.ParentID = &p
	}
	e.Timestamp = "2026-01-02T03:04:05.000Z"
	s.entries = append(s.entries, e)
	id := e.ID
	s.leaf = &id
	return id
}

// moveLeaf moves the leaf (a rewind); nil = before the root.
func (s *session) moveLeaf(id *string) { s.leaf = id }

func (s *session) tick(ms int64) int64 { s.now += ms; return s.now }

func (s *session) user(text string, origin llm.Origin) string {
	return s.add(store.MessageEntry(llm.NewUser(text, s.tick(1), origin)))
}

type call struct {
	id, name, args string
}

func usage(in, out, cacheRead, cacheWrite int) llm.Usage {
	u := llm.Usage{Input: in, Output: out, CacheRead: cacheRead, CacheWrite: cacheWrite}
	u.Finalize(llm.Prices{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25})
	return u
}

func (s *session) assistant(text string, stop string, u llm.Usage, calls ...call) string {
	content := []llm.Content{}
	if text != "" {
		content = append(content, llm.Text(text))
	}
	for _, c := range calls {
		content = append(content, &llm.ToolCall{Type: "toolCall", ID: c.id, Name: c.name, Arguments: json.RawMessage(c.args)})
	}
	return s.add(store.MessageEntry(&llm.AssistantMessage{Role: llm.RoleAssistant, Content: content, API: "fake",
		Provider: "fake", Model: "echo", Usage: u, StopReason: stop, Timestamp: s.tick(1), ThinkingLevel: "medium"}))
}

func (s *session) result(callID, name, text string, isError bool) string {
	return s.add(store.MessageEntry(&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: callID, ToolName: name,
		Content: []llm.Content{llm.Text(text)}, IsError: isError, Timestamp: s.tick(5)}))
}

// step writes the ama.trace entry of assistant entry id as the session does
// (requestAt, firstTokenAt and doneAt relative to now).
func (s *session) step(assistantID string, attempt, outputTokens int) string {
	base := s.now
	return s.add(store.CustomEntry(trace.CustomType, map[string]any{
		"kind": "step", "attempt": attempt, "assistantEntryId": assistantID,
		"requestAt": base - 300, "firstTokenAt": base - 200, "doneAt": base, "outputTokens": outputTokens,
	}))
}

// reply is an assistant message followed by its trace step.
func (s *session) reply(text string, u llm.Usage, calls ...call) string {
	stop := llm.StopStop
	if len(calls) > 0 {
		stop = llm.StopToolUse
	}
	id := s.assistant(text, stop, u, calls...)
	s.step(id, 1, u.Output)
	return id
}

func (s *session) input(running bool) trace.Input {
	var branch []*store.Entry
	if s.leaf != nil {
		branch = store.NewTree(s.entries, s.leaf).Branch()
	}
	return trace.Input{SessionID: "sid", Cwd: "/work", SessionFile: "/data/s.jsonl", Entries: branch,
		Leaf: s.leaf, Running: running}
}

func (s *session) all(running bool) trace.Input {
	in := s.input(running)
	in.Entries = s.entries
	return in
}

func build(t *testing.T, in trace.Input, q trace.Query) *trace.Result {
	t.Helper()
	r, err := trace.Build(in, q)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

func limit(n float64) *float64 { return &n }

func turnIDs(r *trace.Result) []string {
	out := []string{}
	for _, t := range r.Trace.Turns {
		out = append(out, t.ID)
	}
	return out
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func eqSlice[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v6 "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// sampleSession writes a session file through the real store with an
// entry of every type (store.Bodies), a custom entry of a session kind
// and a leaf line, and returns its lines.
func sampleSession(t *testing.T) [][]byte {
	t.Helper()
	replacement := "shorter"
	u := &llm.Usage{Input: 3, Output: 4}
	entries := []*store.Entry{
		store.MessageEntry(&llm.UserMessage{Role: llm.RoleUser, Content: llm.UserContent{Text: "hi"}, Timestamp: 1}),
		store.MessageEntry(&llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{&llm.ThinkingContent{Type: "thinking", Thinking: "hm"}, &llm.TextContent{Type: "text", Text: "ok"},
			&llm.ToolCall{Type: "toolCall", ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}}, Provider: "fake", Model: "echo", StopReason: "toolUse", Timestamp: 2}),
		store.MessageEntry(&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Content{&llm.TextContent{Type: "text", Text: "x"}}, Timestamp: 3}),
		store.ModelChangeEntry("fake", "echo", ""),
		store.ThinkingLevelEntry("high"),
		store.CustomEntry(session.CustomSeq, map[string]any{"until": 4096}),
		store.CustomEntry("a.host.extension", map[string]any{"anything": []int{1}}),
		store.CustomMessageEntry(&llm.CustomMessage{CustomType: "ama.plan_mode", Content: llm.UserContent{Text: "plan"}, Display: true}),
		store.SessionInfoEntry("named"),
		store.ContextEditEntry("e1", &replacement, "trim"),
		store.CompactionEntry("summary", "e1", 100, u),
		store.BranchSummaryEntry("e1", "summary", nil),
		store.UsageEntry("title", "fake", "echo", *u),
	}
	var parent *string
	for i, e := range entries {
		id := string(rune('a'+i)) + "1"
		e.ID, e.ParentID, e.Timestamp = id, parent, "2026-01-02T03:04:05.000Z"
		parent = &e.ID
	}
	entries = append(entries, func() *store.Entry {
		e := store.LabelEntry("a1", "start")
		e.ID, e.ParentID, e.Timestamp = "z1", parent, "2026-01-02T03:04:05.000Z"
		return e
	}())
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := store.Create(path, store.NewHeader("11111111-2222-4333-8444-555555555555", time.Unix(0, 0), "/w", "1"), entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AppendLeaf(nil, "2026-01-02T03:04:05.000Z"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	seen := map[string]bool{}
	for _, l := range lines {
		var h struct{ Type string }
		_ = json.Unmarshal(l, &h)
		seen[h.Type] = true
	}
	for typ := range store.Bodies() {
		if !seen[typ] {
			t.Fatalf("the sample has no %s entry", typ)
		}
	}
	return lines
}

func sessionFailures(t *testing.T, s *v6.Schema, lines [][]byte) []string {
	t.Helper()
	var out []string
	for i, l := range lines {
		v, err := v6.UnmarshalJSON(bytes.NewReader(l))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); err != nil {
			out = append(out, fmt.Sprintf("line %d: %v", i+1, err))
		}
	}
	return out
}

// Every line the store writes validates against sessionLine: the header,
// an entry of every type, custom entries (a session kind and a host's
// own), a leaf line.
func TestSessionFileValidates(t *testing.T) {
	lines := sampleSession(t)
	if bad := sessionFailures(t, generated(t, "#/$defs/"+SessionLineDef), lines); len(bad) > 0 {
		t.Fatalf("%d of %d lines fail:\n%s", len(bad), len(lines), strings.Join(bad, "\n"))
	}
	t.Logf("%d lines, %d entry types, %d custom kinds described", len(lines), len(store.Bodies()), len(session.CustomKinds()))
}

// A body type or a custom kind's data type that no longer matches what
// the store writes fails: a renamed member of model_change's body, and of
// ama-rpc.seq's data.
func TestDriftedEntryTypeFails(t *testing.T) {
	type renamedBody struct {
		Provider string `json:"provider"`
		ModelID  string `json:"model_id"`
	}
	type renamedSeq struct {
		Upto uint64 `json:"upto"`
	}
	lines := sampleSession(t)
	for def, typ := range map[string]reflect.Type{
		EntryDef(store.TypeModelChange): reflect.TypeFor[renamedBody](),
		CustomDef(session.CustomSeq):    reflect.TypeFor[renamedSeq](),
	} {
		s, err := generate(map[string]reflect.Type{def: typ})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		bad := sessionFailures(t, compileAt(t, doc, "#/$defs/"+SessionLineDef)[0], lines)
		if len(bad) != 1 {
			t.Errorf("%s drifted: %d failing lines, want 1: %v", def, len(bad), bad)
		}
	}
}

// Lines a session file must not have fail: each has one change.
func TestBrokenSessionLinesFail(t *testing.T) {
	s := generated(t, "#/$defs/"+SessionLineDef)
	for _, l := range []string{
		`{"type":"label","targetId":"a1","label":"x","colour":"red","id":"b1","parentId":"a1","timestamp":"t"}`,
		`{"type":"model_change","provider":"p","id":"b1","parentId":null,"timestamp":"t"}`,
		`{"type":"message","message":{"role":"robot","content":"x"},"id":"b1","parentId":null,"timestamp":"t"}`,
		`{"type":"custom","customType":"ama-rpc.seq","data":{"until":"many"},"id":"b1","parentId":null,"timestamp":"t"}`,
		`{"type":"session_info","name":"n","id":"b1","timestamp":"t"}`,
		`{"type":"session","version":2,"id":"x","cwd":"/"}`,
		`{"type":"leaf","id":7}`,
		`{"type":"bookmark","id":"b1","parentId":null,"timestamp":"t"}`,
	} {
		if bad := sessionFailures(t, s, [][]byte{[]byte(l)}); len(bad) != 1 {
			t.Errorf("accepted: %s", l)
		}
	}
}

// The session files kept as fixtures validate: store's test data and the
// prepared session file of the wire-utf8 golden (bytes that are not UTF-8
// read as U+FFFD).
func TestFixtureSessionFilesValidate(t *testing.T) {
	s := generated(t, "#/$defs/"+SessionLineDef)
	files, _ := filepath.Glob("../../store/testdata/*.jsonl")
	n := 0
	check := func(name string, b []byte) {
		for i, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			if !json.Valid(l) || bytes.Contains(l, []byte(`"type":"something_new"`)) {
				// project.jsonl's entry of a type from a later format,
				// which the store keeps as it is: outside the schema.
				continue
			}
			n++
			if bad := sessionFailures(t, s, [][]byte{l}); len(bad) > 0 {
				t.Errorf("%s line %d: %s", name, i+1, bad[0])
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, b)
	}
	c, err := os.ReadFile("../../test/fixtures/rpc/wire-utf8/case.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs struct {
		SessionFile string `json:"sessionFile"`
	}
	if err := json.Unmarshal(c, &cs); err != nil || cs.SessionFile == "" {
		t.Fatalf("wire-utf8 session file: %v", err)
	}
	check("wire-utf8", []byte(strings.ReplaceAll(cs.SessionFile, `\x`, `%`)))
	if n == 0 {
		t.Fatal("no fixture session lines")
	}
	t.Logf("%d fixture session lines", n)
}

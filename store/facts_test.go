package store

import (
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/llm"
)

// TestEntryFacts pins the facts read when an entry is made (Entry.learn)
// to the answers read from the body later, for every way an entry is made.
func TestEntryFacts(t *testing.T) {
	lines := []string{
		`{"type":"message","message":{"role":"system","sections":[]},"id":"a","parentId":null,"timestamp":"t"}`,
		`{"type":"message","message":{"role":"user","content":"hi"},"id":"b","parentId":"a","timestamp":"t"}`,
		`{"type":"message", "message":{"role":"system"},"id":"c","parentId":"b","timestamp":"t"}`,
		`{"type":"message","message":{"role":"sys\u0074em"},"id":"d","parentId":"c","timestamp":"t"}`,
		`{"type":"message","message":{"content":"x","role":"system"},"id":"e","parentId":"d","timestamp":"t"}`,
		`{"type":"message","id":"f","message":{"role":"system"},"parentId":"e","timestamp":"t"}`,
		`{"type":"custom","customType":"plan","data":{},"id":"g","parentId":"f","timestamp":"t"}`,
		`{"type":"custom","data":{},"customType":"late","id":"h","parentId":"g","timestamp":"t"}`,
		`{"type":"custom_message","customType":"es\"c","content":"x","display":true,"id":"i","parentId":"h","timestamp":"t"}`,
		`{"type":"custom","customType":"\u00e9t\u00e9","id":"j","parentId":"i","timestamp":"t"}`,
		`{"type":"label","targetId":"a","id":"k","parentId":"j","timestamp":"t"}`,
		`{"type":"custom","id":"l","parentId":"k","timestamp":"t"}`,
	}
	var entries []*Entry
	for _, l := range lines {
		var e Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		entries = append(entries, &e)
	}
	entries = append(entries,
		MessageEntry(&llm.UserMessage{Role: llm.RoleUser, Content: llm.UserContent{Text: "hello"}}),
		MessageEntry(&llm.SystemMessage{Role: llm.RoleSystem}),
		CustomEntry("permission_mode", map[string]string{"mode": "plan"}),
		CustomMessageEntry(&llm.CustomMessage{CustomType: "note", Content: llm.UserContent{Text: "x"}}),
		RawEntry(TypeCustom, json.RawMessage(`{"customType":"raw"}`)),
		RawEntry(TypeMessage, json.RawMessage(`{"message":{"role":"system"}}`)),
	)
	for _, e := range entries {
		blank := &Entry{Type: e.Type, ID: e.ID, ParentID: e.ParentID, Timestamp: e.Timestamp, Body: e.Body}
		if got, want := isSystemEntry(e), isSystemEntry(blank); got != want {
			t.Errorf("%s %s: isSystemEntry %v, from the body %v", e.Type, e.Body, got, want)
		}
		if got, want := e.CustomType(), blank.CustomType(); got != want {
			t.Errorf("%s %s: CustomType %q, from the body %q", e.Type, e.Body, got, want)
		}
		if got, want := e.WithParent(nil).CustomType(), blank.CustomType(); got != want {
			t.Errorf("%s %s: WithParent CustomType %q, want %q", e.Type, e.Body, got, want)
		}
	}
	if !isSystemEntry(entries[0]) || entries[0].facts&factRole == 0 || entries[6].facts&factCustom == 0 {
		t.Errorf("the fast facts were not recorded at parse time: %v %v", entries[0].facts, entries[6].facts)
	}
}

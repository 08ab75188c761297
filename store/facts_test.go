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
		`{"type":"label","targetId":"a","label":"cp 1","id":"m","parentId":"l","timestamp":"t"}`,
		`{"type":"label","targetId":"","label":"","id":"n","parentId":"m","timestamp":"t"}`,
		`{"type":"label","targetId":"a","label":"x","extra":1,"id":"o","parentId":"n","timestamp":"t"}`,
		`{"type":"label","label":"x","targetId":"a","id":"p","parentId":"o","timestamp":"t"}`,
		`{"type":"label","targetId":"a\"b","label":"x","id":"q","parentId":"p","timestamp":"t"}`,
		`{"type":"label","targetId":"a","label":"x\n","id":"r","parentId":"q","timestamp":"t"}`,
		`{"type":"session_info","name":"my name","id":"s","parentId":"r","timestamp":"t"}`,
		`{"type":"session_info","name":"","id":"t","parentId":"s","timestamp":"t"}`,
		`{"type":"session_info","name":"a","name":"b","id":"u","parentId":"t","timestamp":"t"}`,
		`{"type":"session_info","id":"v","parentId":"u","timestamp":"t"}`,
		`{"type":"session_info","name":"\u00e9","id":"w","parentId":"v","timestamp":"t"}`,
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
		LabelEntry("target", "text"),
		LabelEntry("target", ""),
		SessionInfoEntry("named"),
	)
	for _, e := range entries {
		blank := &Entry{Type: e.Type, ID: e.ID, ParentID: e.ParentID, Timestamp: e.Timestamp}
		blank.setBody(e.Body())
		if got, want := isSystemEntry(e), isSystemEntry(blank); got != want {
			t.Errorf("%s %s: isSystemEntry %v, from the body %v", e.Type, e.Body(), got, want)
		}
		if got, want := e.CustomType(), blank.CustomType(); got != want {
			t.Errorf("%s %s: CustomType %q, from the body %q", e.Type, e.Body(), got, want)
		}
		gt, gl, gok := e.label()
		wt, wl, wok := labelFields(e.Body())
		if e.Type == TypeLabel && (gt != wt || gl != wl || gok != wok) {
			t.Errorf("%s: label %q %q %v, from the body %q %q %v", e.Body(), gt, gl, gok, wt, wl, wok)
		}
		if got, want := e.sessionName(), sessionName(e.Body()); e.Type == TypeSessionInfo && got != want {
			t.Errorf("%s: sessionName %q, from the body %q", e.Body(), got, want)
		}
		if m, err := blank.Message(); e.NotUser() && e.Type == TypeMessage && err == nil {
			if _, user := m.(*llm.UserMessage); user {
				t.Errorf("%s: NotUser, but the body decodes to a user message", e.Body())
			}
		}
		if got, want := e.WithParent(nil).CustomType(), blank.CustomType(); got != want {
			t.Errorf("%s %s: WithParent CustomType %q, want %q", e.Type, e.Body(), got, want)
		}
	}
	if !isSystemEntry(entries[0]) || entries[0].facts&factRole == 0 || entries[6].facts&factCustom == 0 ||
		entries[12].facts&factLabelText == 0 || entries[18].facts&factName == 0 {
		t.Errorf("the fast facts were not recorded at parse time: %v %v", entries[0].facts, entries[6].facts)
	}
}

// TestIDIndex checks the id index against a map through growth and
// repeated ids (the last put wins).
func TestIDIndex(t *testing.T) {
	var entries []*Entry
	want := map[string]int32{}
	var x idIndex // zero value grows on first put
	for i := range 5000 {
		id := string(rune('a'+i%26)) + string(rune('0'+i%7)) + string(rune(i%1500))
		entries = append(entries, &Entry{ID: id})
		x.put(entries, id, int32(i))
		want[id] = int32(i)
	}
	if x.n != len(want) {
		t.Fatalf("n = %d, want %d", x.n, len(want))
	}
	for id, i := range want {
		if got, ok := x.get(entries, id); !ok || got != i {
			t.Fatalf("get(%q) = %d %v, want %d", id, got, ok, i)
		}
	}
	if _, ok := x.get(entries, "absent"); ok {
		t.Fatal("found an absent id")
	}
	y := newIDIndex(10)
	if _, ok := y.get(nil, "x"); ok {
		t.Fatal("found in an empty index")
	}
}

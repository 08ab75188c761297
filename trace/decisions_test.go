package trace

import (
	"encoding/json"
	"testing"
)

// A step's records land on the call they name, a nested call's on the
// call that made it; a record of no call of the step stays on the step;
// records that do not decode are left out.
func TestAttachDecisions(t *testing.T) {
	s := &Step{Tools: []*Tool{{ID: "a"}, {ID: "b"}, {ID: "ab"}}}
	attachDecisions(s, json.RawMessage(`[
		{"toolCallId":"a","effect":"allow"},
		{"toolCallId":"b.1","parentToolCallId":"b","effect":"deny"},
		{"toolCallId":"ab_n2","effect":"allow"},
		{"toolCallId":"b.1.3","parentToolCallId":"b.1","effect":"allow"},
		{"toolCallId":"zzz","effect":"deny"},
		null]`))
	got := map[string]int{}
	for _, tool := range s.Tools {
		got[tool.ID] = len(tool.Decisions)
	}
	if got["a"] != 1 || got["b"] != 2 || got["ab"] != 1 || len(s.Decisions) != 1 || s.Decisions[0].ToolCallID != "zzz" {
		t.Fatalf("attached %v, step %d", got, len(s.Decisions))
	}
	s = &Step{Tools: []*Tool{{ID: "a"}}}
	attachDecisions(s, json.RawMessage(`{"not":"an array"}`))
	if len(s.Tools[0].Decisions) != 0 || len(s.Decisions) != 0 {
		t.Fatal("a malformed record list was attached")
	}
}

package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/plan"
)

func TestDoneIDs(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"none", "implemented", nil},
		{"one", "did it\n[DONE:S1]\n", []string{"S1"}},
		{"spaces", "  \t[DONE:  S2 ]\t ", []string{"S2"}},
		{"several in order", "[DONE:S2]\ntext\n[DONE:S1]", []string{"S2", "S1"}},
		{"dedup case-insensitive keeps first", "[DONE:s1]\n[DONE:S1]\n[DONE:s1]", []string{"s1"}},
		{"crlf", "[DONE:S1]\r\n[DONE:S2]\r\n", []string{"S1", "S2"}},
		{"allowed characters", "[DONE:step_1.a-b]", []string{"step_1.a-b"}},
		{"32 characters", "[DONE:abcdefghijklmnopqrstuvwxyz012345]", []string{"abcdefghijklmnopqrstuvwxyz012345"}},
		{"33 characters", "[DONE:abcdefghijklmnopqrstuvwxyz0123456]", nil},
		{"not alone on line", "finished [DONE:S1]\n[DONE:S2] next", nil},
		{"inline code", "`[DONE:S1]`", nil},
		{"lowercase marker", "[done:S1]", nil},
		{"empty id", "[DONE:]", nil},
		{"bad character", "[DONE:S 1]\n[DONE:S/1]", nil},
		{"placeholder", "[DONE:<step id>]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, plan.DoneIDs(tt.text)); diff != "" {
				t.Errorf("DoneIDs(%q) mismatch (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestApplyDone(t *testing.T) {
	free := plan.TodoItem{ID: "x", Text: "manual", Status: pending}
	tests := []struct {
		name        string
		items       []plan.TodoItem
		ids         []string
		want        []plan.TodoItem
		wantChanged bool
	}{
		{"no ids", []plan.TodoItem{item("S1", inProgress)}, nil, []plan.TodoItem{item("S1", inProgress)}, false},
		{"empty list", nil, []string{"S1"}, []plan.TodoItem{}, false},
		{"advance", []plan.TodoItem{item("S1", inProgress), item("S2", pending), item("S3", pending)}, []string{"S1"},
			[]plan.TodoItem{item("S1", done), item("S2", inProgress), item("S3", pending)}, true},
		{"case-insensitive", []plan.TodoItem{item("S1", inProgress), item("S2", pending)}, []string{"s1"},
			[]plan.TodoItem{item("S1", done), item("S2", inProgress)}, true},
		{"pending step done keeps current", []plan.TodoItem{item("S1", inProgress), item("S2", pending), item("S3", pending)}, []string{"S2"},
			[]plan.TodoItem{item("S1", inProgress), item("S2", done), item("S3", pending)}, true},
		{"several", []plan.TodoItem{item("S1", inProgress), item("S2", pending), item("S3", pending)}, []string{"S2", "S1"},
			[]plan.TodoItem{item("S1", done), item("S2", done), item("S3", inProgress)}, true},
		{"all done", []plan.TodoItem{item("S1", done), item("S2", inProgress)}, []string{"S2"},
			[]plan.TodoItem{item("S1", done), item("S2", done)}, true},
		{"already done", []plan.TodoItem{item("S1", done), item("S2", pending)}, []string{"S1"},
			[]plan.TodoItem{item("S1", done), item("S2", pending)}, false},
		{"unknown id", []plan.TodoItem{item("S1", inProgress)}, []string{"S9"}, []plan.TodoItem{item("S1", inProgress)}, false},
		{"items without planStep ignored", []plan.TodoItem{free, item("S1", inProgress)}, []string{"x"},
			[]plan.TodoItem{free, item("S1", inProgress)}, false},
		{"match by id", []plan.TodoItem{{ID: "a", Text: "t", Status: inProgress, PlanStep: "S1"}, {ID: "b", Text: "u", Status: pending, PlanStep: "S2"}}, []string{"A"},
			[]plan.TodoItem{{ID: "a", Text: "t", Status: done, PlanStep: "S1"}, {ID: "b", Text: "u", Status: inProgress, PlanStep: "S2"}}, true},
		{"first pending may be a free item", []plan.TodoItem{item("S1", inProgress), free}, []string{"S1"},
			[]plan.TodoItem{item("S1", done), {ID: "x", Text: "manual", Status: inProgress}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]plan.TodoItem(nil), tt.items...)
			got, changed := plan.ApplyDone(tt.items, tt.ids)
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if got == nil {
				t.Fatal("nil list")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.items); diff != "" {
				t.Errorf("ApplyDone modified its argument:\n%s", diff)
			}
		})
	}
}

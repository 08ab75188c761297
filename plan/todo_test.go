package plan_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/plan"
)

const (
	pending    = plan.TodoPending
	inProgress = plan.TodoInProgress
	done       = plan.TodoDone
)

func item(id string, status plan.TodoStatus) plan.TodoItem {
	return plan.TodoItem{ID: id, Text: "do " + id, Status: status, PlanStep: id}
}

func TestTodosFromSteps(t *testing.T) {
	tests := []struct {
		name  string
		steps []plan.Step
		want  []plan.TodoItem
	}{
		{"none", nil, []plan.TodoItem{}},
		{"reference", []plan.Step{st("S1", "Read src/hello.ts"), st("S2", "Add the greeting", "S1")}, []plan.TodoItem{
			{ID: "S1", Text: "Read src/hello.ts", Status: inProgress, PlanStep: "S1"},
			{ID: "S2", Text: "Add the greeting", Status: pending, PlanStep: "S2"},
		}},
		{"three", []plan.Step{st("S1", "a"), st("S2'", "b"), st("S3", "c")}, []plan.TodoItem{
			{ID: "S1", Text: "a", Status: inProgress, PlanStep: "S1"},
			{ID: "S2'", Text: "b", Status: pending, PlanStep: "S2'"},
			{ID: "S3", Text: "c", Status: pending, PlanStep: "S3"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plan.TodosFromSteps(tt.steps)
			if got == nil {
				t.Fatal("nil list")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTodoCanBecome(t *testing.T) {
	tests := []struct {
		from, to plan.TodoStatus
		want     bool
	}{
		{pending, pending, true},
		{pending, inProgress, true},
		{pending, done, true},
		{inProgress, pending, true},
		{inProgress, inProgress, true},
		{inProgress, done, true},
		{done, pending, false},
		{done, inProgress, false},
		{done, done, true},
		{"", pending, false},
		{pending, "finished", false},
		{"finished", "finished", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"->"+string(tt.to), func(t *testing.T) {
			if got := tt.from.CanBecome(tt.to); got != tt.want {
				t.Errorf("CanBecome = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSet(t *testing.T) {
	many := make([]plan.TodoItem, plan.MaxTodoItems+1)
	for i := range many {
		many[i] = plan.TodoItem{ID: string(rune('a'+i%26)) + string(rune('a'+i/26)), Text: "x", Status: pending}
	}
	tests := []struct {
		name    string
		items   []plan.TodoItem
		wantErr error
	}{
		{"empty list", nil, nil},
		{"valid, several in progress, reopened", []plan.TodoItem{item("S1", done), item("S2", inProgress), item("S3", inProgress), {ID: "x", Text: "free", Status: pending}}, nil},
		{"max items", many[:plan.MaxTodoItems], nil},
		{"too many", many, plan.ErrTooManyItems},
		{"empty id", []plan.TodoItem{{ID: " ", Text: "a", Status: pending}}, plan.ErrEmptyID},
		{"empty text", []plan.TodoItem{{ID: "a", Text: "", Status: pending}}, plan.ErrEmptyText},
		{"blank text", []plan.TodoItem{{ID: "a", Text: " \t", Status: pending}}, plan.ErrEmptyText},
		{"unknown status", []plan.TodoItem{{ID: "a", Text: "a", Status: "finished"}}, plan.ErrInvalidStatus},
		{"missing status", []plan.TodoItem{{ID: "a", Text: "a"}}, plan.ErrInvalidStatus},
		{"duplicate id", []plan.TodoItem{item("S1", pending), item("S2", pending), item("S1", done)}, plan.ErrDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.Set(tt.items)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Set error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if got != nil {
					t.Errorf("Set returned a list with an error: %v", got)
				}
				return
			}
			if got == nil {
				t.Fatal("nil list")
			}
			if diff := cmp.Diff(tt.items, got, cmpEmpty); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.Transformer("empty", func(s []plan.TodoItem) []plan.TodoItem {
	if s == nil {
		return []plan.TodoItem{}
	}
	return s
})

func TestSetCopies(t *testing.T) {
	in := []plan.TodoItem{item("S1", pending)}
	out, err := plan.Set(in)
	if err != nil {
		t.Fatal(err)
	}
	out[0].Status = done
	if in[0].Status != pending {
		t.Error("Set result shares memory with its argument")
	}
}

func TestUpdate(t *testing.T) {
	text := func(s string) *string { return &s }
	base := []plan.TodoItem{item("S1", inProgress), item("S2", pending), item("S3", done)}
	tests := []struct {
		name    string
		patches []plan.TodoPatch
		want    []plan.TodoItem
		wantErr error
	}{
		{"finish and start next", []plan.TodoPatch{{ID: "S1", Status: done}, {ID: "S2", Status: inProgress, Text: text("write the fix")}},
			[]plan.TodoItem{item("S1", done), {ID: "S2", Text: "write the fix", Status: inProgress, PlanStep: "S2"}, item("S3", done)}, nil},
		{"pending straight to done", []plan.TodoPatch{{ID: "S2", Status: done}},
			[]plan.TodoItem{item("S1", inProgress), item("S2", done), item("S3", done)}, nil},
		{"put back to pending", []plan.TodoPatch{{ID: "S1", Status: pending}},
			[]plan.TodoItem{item("S1", pending), item("S2", pending), item("S3", done)}, nil},
		{"text only on done item", []plan.TodoPatch{{ID: "S3", Text: text("renamed")}},
			[]plan.TodoItem{item("S1", inProgress), item("S2", pending), {ID: "S3", Text: "renamed", Status: done, PlanStep: "S3"}}, nil},
		{"same status is a no-op", []plan.TodoPatch{{ID: "S3", Status: done}}, base, nil},
		{"patches apply in order", []plan.TodoPatch{{ID: "S2", Status: inProgress}, {ID: "S2", Status: done}},
			[]plan.TodoItem{item("S1", inProgress), item("S2", done), item("S3", done)}, nil},
		{"no patches", nil, nil, plan.ErrNoPatches},
		{"unknown id", []plan.TodoPatch{{ID: "S9", Status: done}}, nil, plan.ErrUnknownItem},
		{"ids are case-sensitive", []plan.TodoPatch{{ID: "s1", Status: done}}, nil, plan.ErrUnknownItem},
		{"invalid status", []plan.TodoPatch{{ID: "S1", Status: "nope"}}, nil, plan.ErrInvalidStatus},
		{"empty text", []plan.TodoPatch{{ID: "S1", Text: text("")}}, nil, plan.ErrEmptyText},
		{"reopen refused", []plan.TodoPatch{{ID: "S3", Status: pending}}, nil, plan.ErrTransition},
		{"all or nothing", []plan.TodoPatch{{ID: "S1", Status: done}, {ID: "S3", Status: inProgress}}, nil, plan.ErrTransition},
		{"done then reopened in one call", []plan.TodoPatch{{ID: "S2", Status: done}, {ID: "S2", Status: pending}}, nil, plan.ErrTransition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]plan.TodoItem(nil), base...)
			got, err := plan.Update(base, tt.patches...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Update error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, base); diff != "" {
				t.Errorf("Update modified its argument:\n%s", diff)
			}
		})
	}
}

func TestErrorsNameTheItem(t *testing.T) {
	_, err := plan.Update([]plan.TodoItem{item("S1", done)}, plan.TodoPatch{ID: "S1", Status: pending})
	if want := `items[0] "S1": status change not allowed: done -> pending (use set to reopen)`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	_, err = plan.Set([]plan.TodoItem{item("a", pending), item("a", done)})
	if want := `items[1]: duplicate id "a"`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

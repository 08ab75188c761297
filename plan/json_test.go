package plan_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/plan"
)

func TestJSONKeyOrder(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"step", st("S1", "a"), `{"id":"S1","text":"a"}`},
		{"step with annotations", plan.Step{ID: "S2", Text: "Add the greeting", DependsOn: []string{"S1"}, Agent: "codex"},
			`{"id":"S2","text":"Add the greeting","dependsOn":["S1"],"agent":"codex"}`},
		{"step empty depends", plan.Step{ID: "S2", Text: "b", DependsOn: []string{}}, `{"id":"S2","text":"b"}`},
		{"plan without steps and file", plan.Plan{ID: "p", Version: 1, Status: plan.StatusProposed, Markdown: "# <T> & co", SourceEntryID: "e1"},
			`{"id":"p","version":1,"status":"proposed","markdown":"# <T> & co","steps":[],"sourceEntryId":"e1"}`},
		{"plan pointer", &plan.Plan{ID: "p", Version: 2, Status: plan.StatusApproved, Markdown: "m", Steps: []plan.Step{st("S1", "a")}, SourceEntryID: "e1", FilePath: "/f-v2.md"},
			`{"id":"p","version":2,"status":"approved","markdown":"m","steps":[{"id":"S1","text":"a"}],"sourceEntryId":"e1","filePath":"/f-v2.md"}`},
		{"plan in a struct", struct {
			Plan *plan.Plan `json:"plan"`
		}{&plan.Plan{ID: "p"}}, `{"plan":{"id":"p","version":0,"status":"","markdown":"","steps":[],"sourceEntryId":""}}`},
		{"todo item", item("S1", inProgress), `{"id":"S1","text":"do S1","status":"in_progress","planStep":"S1"}`},
		{"todo item without step", plan.TodoItem{ID: "x", Text: "t", Status: pending}, `{"id":"x","text":"t","status":"pending"}`},
		{"todo list nil", plan.TodoList{}, `{"items":[]}`},
		{"todo list", plan.TodoList{Items: []plan.TodoItem{item("S1", done)}}, `{"items":[{"id":"S1","text":"do S1","status":"done","planStep":"S1"}]}`},
		{"todo list html", plan.TodoList{Items: []plan.TodoItem{{ID: "a", Text: "<b>", Status: done}}}, `{"items":[{"id":"a","text":"<b>","status":"done"}]}`},
		{"todo patch", plan.TodoPatch{ID: "S1", Status: done}, `{"id":"S1","status":"done"}`},
		{"state on", plan.State{Active: true, PrePlanMode: "default", PlanID: "p"}, `{"active":true,"prePlanMode":"default","planId":"p"}`},
		{"state off", plan.State{PrePlanMode: "auto"}, `{"active":false,"prePlanMode":"auto"}`},
		{"steps from parser", func() any { s, _ := plan.ParseSteps(""); return s }(), `[]`},
		{"todos from no steps", plan.TodosFromSteps(nil), `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := marshalNoEscape(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

// marshalNoEscape encodes like the rpc writer (no HTML escaping).
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

func TestPlanJSONEscapesWithDefaultEncoder(t *testing.T) {
	b, err := json.Marshal(plan.Plan{Markdown: "<x>"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"","version":0,"status":"","markdown":"\u003cx\u003e","steps":[],"sourceEntryId":""}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestGoldenPlanRoundTrip decodes the get_plan data of plan.out.jsonl and
// encodes it back byte for byte.
func TestGoldenPlanRoundTrip(t *testing.T) {
	const golden = `{"id":"<uuid>","version":1,"status":"proposed","markdown":"# Add greeting\n## Steps\n- [ ] S1 Read src/hello.ts\n- [ ] S2 Add the greeting [depends: S1]\n## Verification\n- pnpm test","steps":[{"id":"S1","text":"Read src/hello.ts"},{"id":"S2","text":"Add the greeting","dependsOn":["S1"]}],"sourceEntryId":"<id>","filePath":"<root>/home/.local/share/ama/plans/<uuid>-v1.md"}`
	var p plan.Plan
	if err := json.Unmarshal([]byte(golden), &p); err != nil {
		t.Fatal(err)
	}
	b, err := marshalNoEscape(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != golden {
		t.Errorf("round trip:\ngot  %s\nwant %s", b, golden)
	}
	steps, warnings := plan.ParseSteps(p.Markdown)
	if diff := cmp.Diff(p.Steps, steps); diff != "" || warnings != nil {
		t.Errorf("ParseSteps of the golden markdown (-golden +got):\n%s%v", diff, warnings)
	}
	const todos = `{"items":[{"id":"S1","text":"Read src/hello.ts","status":"in_progress","planStep":"S1"},{"id":"S2","text":"Add the greeting","status":"pending","planStep":"S2"}]}`
	b, err = marshalNoEscape(plan.TodoList{Items: plan.TodosFromSteps(steps)})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != todos {
		t.Errorf("todos:\ngot  %s\nwant %s", b, todos)
	}
}

package agents

import (
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

func TestChildModelResolution(t *testing.T) {
	parent := llm.ModelRef{Provider: "p", ID: "parent"}
	cases := []struct {
		name                   string
		call, def, conf, deflt string
		want                   string
	}{
		{"parent", "", "", "", "", "p/parent"},
		{"default model", "", "", "", "d/default", "d/default"},
		{"agents.<type>.model over the default", "", "", "c/conf", "d/default", "c/conf"},
		{"definition over the config", "", "x/def", "c/conf", "d/default", "x/def"},
		{"inherit defers to the config", "", "inherit", "c/conf", "", "c/conf"},
		{"the call over everything", "y/call", "x/def", "c/conf", "d/default", "y/call"},
		{"missing alias: the parent", "", "fast", "c/conf", "", "p/parent"},
		{"not provider/model: next source", "", "bogus", "c/conf", "", "c/conf"},
	}
	for _, c := range cases {
		cfg := Config{External: map[string]ExternalSettings{"explore": {Model: c.conf}}, DefaultModel: c.deflt}.withDefaults()
		task := &Task{reg: &Registry{cfg: cfg}, typ: &Type{Name: "explore", Model: c.def}, req: Request{Model: c.call}}
		got := task.childModel(parent)
		if got.Provider+"/"+got.ID != c.want {
			t.Errorf("%s: %s/%s, want %s", c.name, got.Provider, got.ID, c.want)
		}
	}
}

// agents.explore.model runs the built-in explore type on that model: the
// child's requests go to it, and subagent_start names it.
func TestTypeModelFromConfig(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"look","agent":"explore","background":false}`),
		`C:{"text":"found"}`,
		`{"text":"done"}`)
	r.reg.cfg.External = map[string]ExternalSettings{"explore": {Model: "fake/reasoning"}}
	r.prompt("go")
	var start *events.SubagentStart
	for _, e := range r.rec.all() {
		if s, ok := e.(events.SubagentStart); ok {
			start = &s
		}
	}
	if start == nil || start.Model != "fake/reasoning" {
		t.Fatalf("subagent_start %+v", start)
	}
	r.reqMu.Lock()
	defer r.reqMu.Unlock()
	if len(r.childReqs) == 0 || r.childReqs[0].Model.ID != "reasoning" {
		t.Fatalf("child requests %d", len(r.childReqs))
	}
	for _, req := range r.parentReqs {
		if req.Model.ID != "echo" {
			t.Fatalf("the parent's model changed: %s", req.Model.ID)
		}
	}
}

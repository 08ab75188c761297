package classifier

import (
	"errors"
	"strings"
	"testing"
)

// The configured lists (seed 003): $defaults expands in place, a list
// without it replaces the defaults, nil keeps them, empty entries are
// refused; the system prompt carries the entries, the default prompt is
// unchanged.
func TestExpandPolicy(t *testing.T) {
	def := DefaultPolicy()
	p, err := ExpandPolicy([]string{"Source control: git.example.com"}, nil, []string{"$defaults", "touching prod databases."}, []string{"$defaults"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Environment) != 1 || len(p.Allow) != len(def.Allow) || len(p.SoftDeny) != len(def.SoftDeny)+1 || p.SoftDeny[len(p.SoftDeny)-1] != "touching prod databases" || len(p.HardDeny) != len(def.HardDeny) {
		t.Errorf("expanded %+v", p)
	}
	sys := p.systemPrompt()
	for _, want := range []string{"Environment (", "- Source control: git.example.com.", "- touching prod databases.", def.HardDeny[0]} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Contains(twoStageSystem, "Environment (") {
		t.Error("the default prompt has an environment section")
	}
	r, err := ExpandPolicy(nil, []string{"only tests"}, nil, nil)
	if err != nil || len(r.Allow) != 1 || r.Allow[0] != "only tests" {
		t.Errorf("replaced allow: %+v %v", r.Allow, err)
	}
	if _, err := ExpandPolicy(nil, nil, []string{" "}, nil); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("empty entry: %v", err)
	}
	in := Input{Tool: "bash", Args: []byte(`{"command":"ls"}`), system: p.systemPrompt()}
	got, _, err := BuildStagePrompt(in, StageFast)
	if err != nil || got != sys {
		t.Errorf("BuildStagePrompt does not use the configured lists: %v", err)
	}
}

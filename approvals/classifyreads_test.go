package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// classifyReadOnlyTools (seed 003): in auto mode a read-class call goes to
// the classifier instead of the static allow; the rule tier, allow rules,
// deny rules and the other modes are unchanged, and any config layer may
// turn it on (it only tightens).
func TestClassifyReads(t *testing.T) {
	read := pathCall("read", approvals.ClassRead, "src/a.go")
	for _, c := range []struct {
		name     string
		mode     approvals.Mode
		on       bool
		allow    []string
		deny     []string
		call     approvals.Call
		decision approvals.Decision
		layer    string
		classify bool
	}{
		{"off: static allow", approvals.ModeAuto, false, nil, nil, read, approvals.Allow, "static", false},
		{"on: classifier", approvals.ModeAuto, true, nil, nil, read, approvals.Ask, "classifier", true},
		{"on: an allow rule still lifts it", approvals.ModeAuto, true, []string{"read(src/**)"}, nil, read, approvals.Allow, "allow-rule", false},
		{"on: a deny rule still denies", approvals.ModeAuto, true, nil, []string{"read(src/**)"}, read, approvals.Deny, "deny-rule", false},
		{"on: secrets still ask by rule", approvals.ModeAuto, true, nil, nil, pathCall("read", approvals.ClassRead, ".env"), approvals.Ask, "auto-rule", false},
		{"on: writes in the project stay static", approvals.ModeAuto, true, nil, nil, pathCall("write", approvals.ClassWrite, "src/a.go"), approvals.Allow, "static", false},
		{"on: other modes unchanged", approvals.ModeDefault, true, nil, nil, read, approvals.Allow, "mode", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pol := &approvals.Policy{Mode: c.mode, ClassifyReads: c.on, Allow: mustRules(t, c.allow...), Deny: mustRules(t, c.deny...)}
			v := approvals.Decide(c.call, pol, nil)
			if v.Decision != c.decision || v.Layer != c.layer || v.Classify != c.classify {
				t.Fatalf("got %s by %s (classify %v), want %s by %s (classify %v): %s", v.Decision, v.Layer, v.Classify, c.decision, c.layer, c.classify, v.Reason)
			}
		})
	}
	for _, layers := range [][3]bool{{true, false, false}, {false, true, false}, {false, false, true}} {
		pol, _, err := approvals.BuildPolicy(approvals.Layer{ClassifyReads: layers[0]}, approvals.Layer{ClassifyReads: layers[1]}, approvals.Layer{ClassifyReads: layers[2]})
		if err != nil || !pol.ClassifyReads {
			t.Errorf("layers %v: ClassifyReads %v (%v)", layers, pol != nil && pol.ClassifyReads, err)
		}
	}
}

package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Ask rules (seed 003, ADR-001): deny > ask > allow; an ask rule's call is
// asked even where the mode or an allow tier would allow it; deterministic
// denials still apply; allowlist mode, which never asks, refuses it; in
// auto mode the call keeps its classifier review (Classify with AskRule);
// ask and deny rules fail closed on oversized input and when malformed.
func TestAskRules(t *testing.T) {
	huge := "git push " + strings.Repeat("a", approvals.MaxMatchInput+10)
	for _, tc := range []struct {
		name             string
		mode             approvals.Mode
		allow, deny, ask []string
		call             approvals.Call
		want             approvals.Decision
		layer, rule      string
		classify         bool
	}{
		{"no rule: full-auto allows", approvals.ModeFullAuto, nil, nil, nil, bashCall("git push origin"), approvals.Allow, "mode", "", false},
		{"ask beats the mode's allow", approvals.ModeFullAuto, nil, nil, []string{"bash(git push *)"}, bashCall("git push origin"), approvals.Ask, "ask-rule", "ask:0", false},
		{"ask beats an allow rule", approvals.ModeDefault, []string{"bash(git push *)"}, nil, []string{"bash(git push *)"}, bashCall("git push origin"), approvals.Ask, "ask-rule", "ask:0", false},
		{"deny beats ask", approvals.ModeFullAuto, nil, []string{"bash(git push *)"}, []string{"bash(git push *)"}, bashCall("git push origin"), approvals.Deny, "deny-rule", "", false},
		{"no match: allow rule lifts", approvals.ModeDefault, []string{"bash(git push *)"}, nil, []string{"bash(rm *)"}, bashCall("git push origin"), approvals.Allow, "allow-rule", "allow:0", false},
		{"ask in a chain", approvals.ModeFullAuto, nil, nil, []string{"bash(git push *)"}, bashCall("ls && git push origin"), approvals.Ask, "ask-rule", "ask:0", false},
		{"read tool asked", approvals.ModeDefault, nil, nil, []string{"read(**/*.pem)"}, pathCall("read", approvals.ClassRead, "certs/key.pem"), approvals.Ask, "ask-rule", "ask:0", false},
		{"plan still denies", approvals.ModePlan, nil, nil, []string{"write"}, pathCall("write", approvals.ClassWrite, "a.txt"), approvals.Deny, "plan", "", false},
		{"allowlist refuses", approvals.ModeAllowlist, nil, nil, []string{"read"}, pathCall("read", approvals.ClassRead, "a.txt"), approvals.Deny, "ask-rule", "ask:0", false},
		{"auto keeps the classifier", approvals.ModeAuto, nil, nil, []string{"read"}, pathCall("read", approvals.ClassRead, "a.txt"), approvals.Ask, "ask-rule", "ask:0", true},
		{"auto: an allow rule does not lift", approvals.ModeAuto, []string{"write"}, nil, []string{"write"}, pathCall("write", approvals.ClassWrite, "a.txt"), approvals.Ask, "ask-rule", "ask:0", true},
		{"dangerous keeps its layer", approvals.ModeDefault, nil, nil, []string{"bash"}, bashCall("rm -rf /"), approvals.Ask, "dangerous", "ask:0", false},
		{"oversized input: ask matches", approvals.ModeFullAuto, nil, nil, []string{"bash(git push *)"}, bashCall(huge), approvals.Ask, "", "ask:0", false},
		{"oversized input: allow does not", approvals.ModeDefault, []string{"bash(git push *)"}, nil, nil, bashCall(huge), approvals.Ask, "", "", false},
		{"malformed ask matches broadly", approvals.ModeFullAuto, nil, nil, []string{"bash("}, bashCall("ls"), approvals.Ask, "ask-rule", "ask:0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol, _, err := approvals.BuildPolicy(approvals.Layer{Mode: string(tc.mode), Allow: tc.allow, Deny: tc.deny, Ask: tc.ask}, approvals.Layer{}, approvals.Layer{})
			if err != nil {
				t.Fatal(err)
			}
			v := approvals.Decide(tc.call, pol, nil)
			if v.Decision != tc.want || (tc.layer != "" && v.Layer != tc.layer) || (tc.rule != "" && v.Rule != tc.rule && v.AskRule != tc.rule) || v.Classify != tc.classify {
				t.Errorf("got %s layer %q rule %q askRule %q classify %v (%s); want %s %q %q classify %v",
					v.Decision, v.Layer, v.Rule, v.AskRule, v.Classify, v.Reason, tc.want, tc.layer, tc.rule, tc.classify)
			}
		})
	}
}

// A project may add ask rules (never allow rules).
func TestAskRulesFromProject(t *testing.T) {
	pol, warns, err := approvals.BuildPolicy(approvals.Layer{Mode: "full-auto"}, approvals.Layer{Ask: []string{"bash(git push *)"}, Allow: []string{"bash"}}, approvals.Layer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Ask) != 1 || len(pol.Allow) != 0 || len(warns) != 1 {
		t.Fatalf("ask %v allow %v warns %v", pol.Ask, pol.Allow, warns)
	}
	if v := approvals.Decide(bashCall("git push"), pol, nil); v.Decision != approvals.Ask {
		t.Errorf("project ask rule: %s", v.Decision)
	}
}

// "Allow for this session" does not lift an ask rule's call.
func TestAskRuleBeatsMemory(t *testing.T) {
	pol, _, _ := approvals.BuildPolicy(approvals.Layer{Mode: "default", Ask: []string{"write(secrets/**)"}}, approvals.Layer{}, approvals.Layer{})
	mem := approvals.NewMemory()
	call := pathCall("write", approvals.ClassWrite, "secrets/a.txt")
	mem.Remember(call)
	if v := approvals.Decide(call, pol, mem); v.Decision != approvals.Ask || v.Layer != "ask-rule" {
		t.Errorf("remembered call: %s %s", v.Decision, v.Layer)
	}
	other := pathCall("write", approvals.ClassWrite, "b.txt")
	mem.Remember(other)
	if v := approvals.Decide(other, pol, mem); v.Decision != approvals.Allow {
		t.Errorf("remembered call without ask rule: %s %s", v.Decision, v.Layer)
	}
}

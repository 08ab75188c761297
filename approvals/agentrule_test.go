package approvals

import "testing"

func TestAgentRule(t *testing.T) {
	parse := func(ss ...string) []Rule {
		var out []Rule
		for _, s := range ss {
			r, _ := ParseRule(s)
			out = append(out, r)
		}
		return out
	}
	cases := []struct {
		rules []string
		id    string
		deny  bool
		hit   bool
	}{
		{[]string{"task(claude)"}, "claude", false, true},
		{[]string{"task(claude)"}, "codex", false, false},
		{[]string{"task(acp:*)"}, "acp:ama", false, true},
		{[]string{"task(acp:*)"}, "claude", false, false},
		{[]string{"task"}, "codex", false, true},
		{[]string{"read", "bash(git *)"}, "codex", false, false},
		{[]string{"task(codex)"}, "codex", true, true},
		{[]string{"task(codex)"}, "claude", true, false},
		{[]string{"task"}, "claude", true, true},
		{[]string{"task(("}, "claude", true, true},   // malformed: fails closed as deny
		{[]string{"task(("}, "claude", false, false}, // and never allows
		{[]string{"t*"}, "claude", false, true},
	}
	for _, c := range cases {
		if got := AgentRule(parse(c.rules...), c.id, c.deny) != nil; got != c.hit {
			t.Errorf("%v %s deny=%v: hit %v, want %v", c.rules, c.id, c.deny, got, c.hit)
		}
	}
}

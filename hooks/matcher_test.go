package hooks

import (
	"encoding/json"
	"testing"
)

// The matcher examples of spec §6 and checklist item 9.
func TestMatcherExamples(t *testing.T) {
	cases := []struct {
		matcher, tool, input string
		want                 bool
	}{
		{"bash", "bash", `{}`, true},
		{"bash", "bash_x", `{}`, false},
		{"write|edit", "edit", `{}`, true},
		{"write|edit", "edit_x", `{}`, false},
		{"canvas_*", "canvas_send", `{}`, true},
		{"bash(git push*)", "bash", `{"command":"git push origin main"}`, true},
		{"bash(git push*)", "bash", `{"command":"git status"}`, false},
		{"bash(git *)", "bash", `{"command":"git push"}`, true},
		{"write(src/*)", "write", `{"path":"src/a/b.ts","content":""}`, true},
		{"write(src/*)", "write", `{"path":"lib/a.ts"}`, false},
		{"/^(read|ls)$/", "ls", `{}`, true},
		{"/^(read|ls)$/", "lsx", `{}`, false},
		{"/READ/i", "read", `{}`, true},
		{"bash(a|b)|edit", "edit", `{}`, true},
		{"bash(a|b)|edit", "bash", `{"command":"a|b"}`, true},
		{"bash(a|b)|edit", "bash", `{"command":"a"}`, false},
		{"", "anything", `{}`, true},
		{"*", "anything", `{}`, true},
		{"  ", "anything", `{}`, true},
		{"re?d", "read", `{}`, true},
		{"grep(*.go)", "grep", `{"pattern":"x.go"}`, true},
		{"read(*x*)", "read", `"x"`, true},
		{"todo(*get*)", "todo", `{"action":"get"}`, true},
	}
	for _, c := range cases {
		m, err := ParseMatcher(c.matcher)
		if err != nil {
			t.Fatalf("%q: %v", c.matcher, err)
		}
		if got := m.Match(c.tool, json.RawMessage(c.input)); got != c.want {
			t.Errorf("%q vs %s %s = %v, want %v", c.matcher, c.tool, c.input, got, c.want)
		}
	}
}

func TestMatcherSplitAndMayMatch(t *testing.T) {
	got := splitAlternatives("bash(a|b)| edit ||")
	if len(got) != 2 || got[0] != "bash(a|b)" || got[1] != "edit" {
		t.Fatalf("split = %q", got)
	}
	m, _ := ParseMatcher("bash(git *)")
	if !m.MayMatch("bash") || m.MayMatch("edit") {
		t.Fatal("MayMatch must look at the name only")
	}
}

func TestMatcherBadRegex(t *testing.T) {
	for _, s := range []string{"/(/", "/a/x"} {
		if _, err := ParseMatcher(s); err == nil {
			t.Errorf("%q: want an error", s)
		}
	}
}

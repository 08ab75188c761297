package approvals_test

import (
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/approvals"
)

// Huge or deeply nested inputs stay bounded and fail closed.
func TestPathologicalInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	cases := map[string]string{
		"1 MiB word":     "echo " + strings.Repeat("a", approvals.MaxCommandBytes-10),
		"too large":      "echo " + strings.Repeat("a", approvals.MaxCommandBytes),
		"100k commands":  strings.Repeat("ls;", 100000),
		"nested subst":   strings.Repeat("$(", 3000) + "ls" + strings.Repeat(")", 3000),
		"nested parens":  strings.Repeat("(", 3000) + "ls" + strings.Repeat(")", 3000),
		"brace product":  "echo {1..10}{1..10}{1..10}{1..10}{1..10}",
		"huge sequence":  "rm -rf {1..99999999999}",
		"many operands":  "rm -rf " + strings.Repeat("x/ ", 200000),
		"find fan-out":   "find " + strings.Repeat("/a ", 1000) + "-exec sh -c 'find / -exec sh -c \"xargs rm\" \\;' \\;",
		"long pipeline":  strings.Repeat("cat | ", 50000) + "cat",
		"many heredocs":  strings.Repeat("bash <<EOF\nls\nEOF\n", 20000),
		"printf bomb":    "printf '%0999999999d' 1 | sh",
		"deep eval":      strings.Repeat("eval ", 5000) + "ls",
		"parser stack 1": "x=" + strings.Repeat("$(", 500000),
		"parser stack 2": "echo " + strings.Repeat(`"$(`, 340000),
		"parser stack 3": strings.Repeat("{ ", 500000) + "ls",
		"parser stack 4": strings.Repeat("$((", 340000),
		"parser stack 5": "$((" + strings.Repeat("(", 1000000) + "))",
		"parser stack 6": strings.Repeat("<(", 500000),
		"nested ternary": "echo $((" + strings.Repeat("1?", 500000) + "1))",
		"deep unary":     "echo $((" + strings.Repeat("!", 1000000) + "$(ls)))",
		"deep test":      "[[ " + strings.Repeat("! ", 500000) + "a ]]",
		"deep let":       "let " + strings.Repeat("!", 1000000) + "1",
		"deep bash -c":   strings.Repeat(`bash -c "`, 1) + strings.Repeat(`sh -c \"`, 1) + "ls" + `\""`,
	}
	p := &approvals.Policy{Mode: approvals.ModeFullAuto, Allow: mustRules(t, "bash")}
	for name, cmd := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			a := approvals.AnalyzeShell(cmd, cwd, home)
			_ = a.Danger()
			v := approvals.Decide(bashCall(cmd), p, nil)
			if d := time.Since(start); d > 2*time.Minute { // a guard against blow-ups, not a benchmark
				t.Fatalf("took %v", d)
			}
			if a.Err != nil && v.Decision == approvals.Allow {
				t.Fatalf("unanalysable input allowed: %v", a.Err)
			}
		})
	}
}

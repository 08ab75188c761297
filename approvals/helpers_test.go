package approvals_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

const (
	cwd  = "/home/u/proj"
	home = "/home/u"
)

// bashCall builds a bash call in the test project.
func bashCall(cmd string) approvals.Call {
	in, _ := json.Marshal(map[string]any{"command": cmd})
	return approvals.Call{Tool: "bash", Class: approvals.ClassExecute, Input: in, Cwd: cwd, Home: home}
}

// toolCall builds a call of a tool with the given class and input object.
func toolCall(tool string, class approvals.Class, input map[string]any) approvals.Call {
	in, _ := json.Marshal(input)
	return approvals.Call{Tool: tool, Class: class, Input: in, Cwd: cwd, Home: home}
}

// pathCall builds a file-tool call.
func pathCall(tool string, class approvals.Class, path string) approvals.Call {
	return toolCall(tool, class, map[string]any{"path": path})
}

func mustRules(t testing.TB, list ...string) []approvals.Rule {
	t.Helper()
	var out []approvals.Rule
	for _, s := range list {
		r, err := approvals.ParseRule(s)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", s, err)
		}
		out = append(out, r)
	}
	return out
}

// policy builds a policy with the built-in deny rules plus extras.
func policy(t testing.TB, mode approvals.Mode, allow, deny []string) *approvals.Policy {
	t.Helper()
	p, _, err := approvals.BuildPolicy(approvals.Layer{Mode: string(mode), Allow: allow, Deny: deny}, approvals.Layer{}, approvals.Layer{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func analyze(cmd string) *approvals.Analysis { return approvals.AnalyzeShell(cmd, cwd, home) }

func dangerIDs(a *approvals.Analysis) []string {
	var ids []string
	for _, d := range a.Danger() {
		ids = append(ids, d.ID)
	}
	return ids
}

func hasID(ids []string, id string) bool { return slices.Contains(ids, id) }

// letter abbreviates a verdict like the matrix in the spec: A allow, Q ask,
// C ask with classifier, D deny.
func letter(v approvals.Verdict) string {
	switch v.Decision {
	case approvals.Allow:
		return "A"
	case approvals.Deny:
		return "D"
	}
	if v.Classify {
		return "C"
	}
	return "Q"
}

// sprintf substitutes the command for %s (fmt would also interpret other
// verbs in the forms).
func sprintf(form, cmd string) string { return strings.ReplaceAll(form, "%s", cmd) }

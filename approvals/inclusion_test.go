package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// What plan allows without asking, allowlist allows; what allowlist allows,
// default does not refuse (section 1.1).
func TestModeInclusion(t *testing.T) {
	calls := []approvals.Call{
		pathCall("read", approvals.ClassRead, "a"), pathCall("read", approvals.ClassRead, ".env"),
		pathCall("write", approvals.ClassWrite, "src/a"), pathCall("edit", approvals.ClassWrite, "/tmp/x"),
		toolCall("task", approvals.ClassExecute, nil), toolCall("todo", approvals.ClassExecute, map[string]any{"action": "get"}),
		toolCall("canvas_send", approvals.ClassExecute, nil),
	}
	for _, cmd := range []string{"ls", "git log", "cat .env", "make", "npm test", "rm -rf /", "curl x", "cd src && ls",
		"tree -L 2", "jq . x", "echo x > y", "git push -f", "ls | grep x", "bash -c ls", "LD_PRELOAD=x ls"} {
		calls = append(calls, bashCall(cmd))
	}
	allow := []string{"bash(make)", "write(src/**)"}
	for _, c := range calls {
		plan := approvals.Decide(c, policy(t, approvals.ModePlan, allow, nil), nil)
		list := approvals.Decide(c, policy(t, approvals.ModeAllowlist, allow, nil), nil)
		def := approvals.Decide(c, policy(t, approvals.ModeDefault, allow, nil), nil)
		if plan.Decision == approvals.Allow && list.Decision != approvals.Allow {
			t.Errorf("%s %s: plan allows, allowlist %s", c.Tool, c.Input, list.Decision)
		}
		if list.Decision == approvals.Allow && def.Decision == approvals.Deny {
			t.Errorf("%s %s: allowlist allows, default denies", c.Tool, c.Input)
		}
	}
}

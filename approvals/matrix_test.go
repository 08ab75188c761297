package approvals_test

import (
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// The base matrix (section 1.2): calls × modes, for "no extra rule", "an
// allow rule for the tool" (stands in for a hook allow) and "a deny rule for
// the tool" (stands in for a hook deny). Hooks are not implemented; the
// hook-ask column is not applicable.
func TestMatrix(t *testing.T) {
	type row struct {
		name string
		call approvals.Call
		rule string // tool name for the allow/deny column rules
		want map[approvals.Mode]string
	}
	m := func(plan, allowlist, def, autoEdit, auto, full string) map[approvals.Mode]string {
		return map[approvals.Mode]string{
			approvals.ModePlan: plan, approvals.ModeAllowlist: allowlist, approvals.ModeDefault: def,
			approvals.ModeAutoEdit: autoEdit, approvals.ModeAuto: auto, approvals.ModeFullAuto: full,
		}
	}
	rows := []row{
		{"read src/a.ts", pathCall("read", approvals.ClassRead, "src/a.ts"), "read", m("AAD", "AAD", "AAD", "AAD", "AAD", "AAD")},
		{"read .env", pathCall("read", approvals.ClassRead, ".env"), "read", m("AAD", "AAD", "AAD", "AAD", "QQD", "AAD")},
		{"write in project", pathCall("write", approvals.ClassWrite, "src/new.ts"), "write", m("DDD", "DAD", "QAD", "AAD", "AAD", "AAD")},
		{"write /tmp/x.txt", pathCall("write", approvals.ClassWrite, "/tmp/x.txt"), "write", m("DDD", "DAD", "QAD", "AAD", "QQD", "AAD")},
		// The project's dotenv files (secret paths, seed 000; external agent
		// CLIs load them at start): auto asks even with an allow rule,
		// default asks by mode, auto-edit allows file writes anywhere.
		{"write .env", pathCall("write", approvals.ClassWrite, ".env"), "write", m("DDD", "DAD", "QAD", "AAD", "QQD", "AAD")},
		{"edit .env.development.local", pathCall("edit", approvals.ClassWrite, ".env.development.local"), "edit", m("DDD", "DAD", "QAD", "AAD", "QQD", "AAD")},
		{"write .env.example", pathCall("write", approvals.ClassWrite, ".env.example"), "write", m("DDD", "DAD", "QAD", "AAD", "AAD", "AAD")},
		// ama's safety files: no write in any mode, whatever the rules (seed 003).
		{"edit .ama/hooks.json", pathCall("edit", approvals.ClassWrite, ".ama/hooks.json"), "edit", m("DDD", "DDD", "DDD", "DDD", "DDD", "DDD")},
		{"write ~/.config/ama/hooks.json", pathCall("write", approvals.ClassWrite, "~/.config/ama/hooks.json"), "write", m("DDD", "DDD", "DDD", "DDD", "DDD", "DDD")},
		{"edit ~/.config/ama/config.json", pathCall("edit", approvals.ClassWrite, "/home/u/.config/ama/config.json"), "edit", m("DDD", "DDD", "DDD", "DDD", "DDD", "DDD")},
		{"write ~/.local/share/ama/auth.json", pathCall("write", approvals.ClassWrite, "~/.local/share/ama/auth.json"), "write", m("DDD", "DDD", "DDD", "DDD", "DDD", "DDD")},
		{"bash ls -la", bashCall("ls -la"), "bash", m("AAD", "AAD", "QAD", "QAD", "AAD", "AAD")},
		{"bash git push --force", bashCall("git push --force"), "bash", m("QQD", "DDD", "QQD", "QQD", "QQD", "QQD")},
		{"bash curl", bashCall("curl https://example.com"), "bash", m("DDD", "DAD", "QAD", "QAD", "QQD", "AAD")},
		{"bash node scripts/gen.js", bashCall("node scripts/gen.js"), "bash", m("DDD", "DAD", "QAD", "QAD", "CAD", "AAD")},
	}
	for _, r := range rows {
		for _, mode := range approvals.Modes {
			want := r.want[mode]
			for col, extra := range []struct {
				name        string
				allow, deny []string
			}{{"none", nil, nil}, {"allow-rule", []string{r.rule}, nil}, {"deny-rule", nil, []string{r.rule}}} {
				for _, unattended := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/%s/unattended=%v", r.name, mode, extra.name, unattended)
					t.Run(name, func(t *testing.T) {
						p := policy(t, mode, extra.allow, extra.deny)
						p.Unattended = unattended
						v := approvals.Decide(r.call, p, nil)
						got := letter(v)
						exp := string(want[col])
						if unattended && exp == "Q" {
							exp = "D"
						}
						if got != exp {
							t.Fatalf("got %s (%s: %s), want %s", got, v.Layer, v.Reason, exp)
						}
						if exp == "C" {
							// The caller consults the classifier, then finalizes.
							if f := approvals.Finalize(v, p); unattended && f.Decision != approvals.Deny {
								t.Fatalf("Finalize unattended: %v", f.Decision)
							}
							if a := v.WithClassifier(true, "routine", false); a.Decision != approvals.Allow || a.Auto.Layer != "classifier" {
								t.Fatalf("classifier allow: %+v", a)
							}
							if a := approvals.Finalize(v.WithClassifier(false, "unsure", false), p); (a.Decision == approvals.Deny) != unattended {
								t.Fatalf("classifier ask: %+v", a)
							}
						}
						if mode == approvals.ModeAuto && v.Auto == nil {
							t.Fatal("auto verdict without Auto")
						}
						if mode != approvals.ModeAuto && v.Auto != nil {
							t.Fatal("Auto set outside auto mode")
						}
					})
				}
			}
		}
	}
}

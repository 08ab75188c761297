package approvals_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

func TestModes(t *testing.T) {
	want := []approvals.Mode{"plan", "allowlist", "default", "auto-edit", "auto", "full-auto"}
	if !slices.Equal(approvals.Modes, want) {
		t.Fatalf("Modes = %v", approvals.Modes)
	}
	for i, m := range want {
		got, err := approvals.ParseMode(string(m))
		if err != nil || got != m || m.Strictness() != i || !m.Valid() {
			t.Errorf("%s: %v %v %d", m, got, err, m.Strictness())
		}
	}
	for _, bad := range []string{"", "Auto", "bypass", "yolo", "full_auto"} {
		if _, err := approvals.ParseMode(bad); !errors.Is(err, approvals.ErrInvalidMode) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if approvals.Mode("x").Strictness() != -1 {
		t.Error("unknown strictness")
	}
}

func ruleTexts(rs []approvals.Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	return out
}

// Config layering with trust boundaries (lesson 3).
func TestBuildPolicy(t *testing.T) {
	type L = approvals.Layer
	cases := []struct {
		name            string
		user, proj, cli L
		mode            approvals.Mode
		warns           int
	}{
		{"default", L{}, L{}, L{}, approvals.ModeDefault, 0},
		{"user auto", L{Mode: "auto"}, L{}, L{}, approvals.ModeAuto, 0},
		{"project stricter", L{Mode: "auto"}, L{Mode: "plan"}, L{}, approvals.ModePlan, 0},
		{"project looser ignored", L{Mode: "plan"}, L{Mode: "default"}, L{}, approvals.ModePlan, 1},
		{"project auto ignored", L{}, L{Mode: "auto"}, L{}, approvals.ModeDefault, 1},
		{"project full-auto ignored", L{Mode: "auto-edit"}, L{Mode: "full-auto"}, L{}, approvals.ModeAutoEdit, 1},
		{"project same mode", L{Mode: "default"}, L{Mode: "default"}, L{}, approvals.ModeDefault, 0},
		{"project allowlist", L{}, L{Mode: "allowlist"}, L{}, approvals.ModeAllowlist, 0},
		{"cli relaxes after project", L{}, L{Mode: "plan"}, L{Mode: "full-auto"}, approvals.ModeFullAuto, 0},
		{"project invalid mode", L{}, L{Mode: "yolo"}, L{}, approvals.ModeDefault, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, warns, err := approvals.BuildPolicy(c.user, c.proj, c.cli)
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode != c.mode || len(warns) != c.warns {
				t.Fatalf("mode %s warns %q", p.Mode, warns)
			}
		})
	}

	p, warns, err := approvals.BuildPolicy(
		L{Allow: []string{"bash(npm test*)", "bash(", "bash(npm test*)"}, Deny: []string{"bash(terraform *)"}, AutoSafe: []string{"just test"}},
		L{Allow: []string{"bash"}, Deny: []string{"bash(rm *)", "read(("}, AutoSafe: []string{"curl *"}, DisableBuiltinDeny: []string{"*"}},
		L{Allow: []string{"write(src/**)"}, Deny: []string{"bash(sudo *)"}, AutoSafe: []string{"make fmt"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := ruleTexts(p.Allow); !slices.Equal(got, []string{"bash(npm test*)", "write(src/**)"}) {
		t.Errorf("allow %q", got)
	}
	wantDeny := append(slices.Clone(approvals.BuiltinDeny), "bash(terraform *)", "bash(rm *)", "read((", "bash(sudo *)")
	if got := ruleTexts(p.Deny); !slices.Equal(got, wantDeny) {
		t.Errorf("deny %q", got)
	}
	if !slices.Equal(p.AutoSafe, []string{"just test", "make fmt"}) {
		t.Errorf("autoSafe %q", p.AutoSafe)
	}
	joined := strings.Join(warns, "\n")
	for _, w := range []string{"allow rules", "bash(", "read((", "autoSafeCommands", "built-in deny"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warning about %q missing in %q", w, joined)
		}
	}
	// The malformed project deny rule fails closed: every read is denied.
	if v := approvals.Decide(pathCall("read", approvals.ClassRead, "a"), p, nil); v.Decision != approvals.Deny {
		t.Errorf("malformed deny: %s", v.Decision)
	}

	// Built-in deny removal by exact text.
	p, _, _ = approvals.BuildPolicy(L{DisableBuiltinDeny: []string{"read(**/.ssh/**)"}}, L{}, L{})
	if len(p.Deny) != len(approvals.BuiltinDeny)-1 {
		t.Errorf("disable one: %q", ruleTexts(p.Deny))
	}

	// plan.bash layering.
	for _, c := range []struct {
		user, proj, cli, want string
		warns                 int
	}{
		{"", "", "", "readonly", 0}, {"ask", "", "", "ask", 0}, {"ask", "deny", "", "deny", 0},
		{"deny", "ask", "", "deny", 1}, {"readonly", "ask", "", "readonly", 1}, {"deny", "", "ask", "ask", 0},
		{"", "bogus", "", "readonly", 1},
	} {
		p, warns, err := approvals.BuildPolicy(L{PlanBash: c.user}, L{PlanBash: c.proj}, L{PlanBash: c.cli})
		if err != nil || p.PlanBash != c.want || len(warns) != c.warns {
			t.Errorf("planBash %+v: %q %q %v", c, p.PlanBash, warns, err)
		}
	}

	// Invalid user or CLI values are errors.
	for _, bad := range [][2]L{{{Mode: "yolo"}, {}}, {{}, {Mode: "Auto"}}, {{PlanBash: "x"}, {}}, {{}, {PlanBash: "maybe"}}} {
		if _, _, err := approvals.BuildPolicy(bad[0], L{}, bad[1]); !errors.Is(err, approvals.ErrInvalidConfig) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

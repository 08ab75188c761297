package approvals_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Plan refinement (1.3).
func TestPlanMode(t *testing.T) {
	p := policy(t, approvals.ModePlan, []string{"bash", "write"}, nil)
	todo := func(action string) approvals.Call {
		return toolCall("todo", approvals.ClassExecute, map[string]any{"action": action})
	}
	if v := approvals.Decide(todo("get"), p, nil); v.Decision != approvals.Allow {
		t.Errorf("todo get: %s", v.Decision)
	}
	for _, action := range []string{"set", "update", ""} {
		v := approvals.Decide(todo(action), p, nil)
		if v.Decision != approvals.Deny || !strings.Contains(v.Reason, "<proposed_plan>") || !strings.Contains(v.Reason, "todo") {
			t.Errorf("todo %q: %s %q", action, v.Decision, v.Reason)
		}
	}
	if v := approvals.Decide(toolCall("task", approvals.ClassExecute, map[string]any{"prompt": "x"}), p, nil); v.Decision != approvals.Allow {
		t.Errorf("task: %s", v.Decision)
	}
	for _, c := range []approvals.Call{pathCall("read", approvals.ClassRead, "a"), pathCall("grep", approvals.ClassRead, "."),
		pathCall("ls", approvals.ClassRead, "."), toolCall("glob", approvals.ClassRead, map[string]any{"pattern": "*"})} {
		if v := approvals.Decide(c, p, nil); v.Decision != approvals.Allow {
			t.Errorf("%s: %s", c.Tool, v.Decision)
		}
	}
	for _, c := range []approvals.Call{pathCall("write", approvals.ClassWrite, "a"), pathCall("edit", approvals.ClassWrite, "a"),
		toolCall("canvas_send", approvals.ClassExecute, nil), bashCall("make")} {
		v := approvals.Decide(c, p, nil)
		if v.Decision != approvals.Deny || v.Layer != "plan" || !strings.Contains(v.Reason, "Plan mode") ||
			!strings.Contains(v.Reason, "<proposed_plan>") {
			t.Errorf("%s: %s %s %q", c.Tool, v.Decision, v.Layer, v.Reason)
		}
	}
	// A dangerous command in plan asks instead of being refused silently.
	if v := approvals.Decide(bashCall("git push --force"), p, nil); v.Decision != approvals.Ask || v.AskReason != "dangerous" {
		t.Errorf("dangerous in plan: %+v", v)
	}
	// Deny rules run first.
	pd := policy(t, approvals.ModePlan, nil, []string{"bash(ls*)"})
	if v := approvals.Decide(bashCall("ls"), pd, nil); v.Decision != approvals.Deny || v.Layer != "deny-rule" {
		t.Errorf("deny rule in plan: %+v", v)
	}

	// plan.bash.
	for _, c := range []struct {
		planBash string
		cmd      string
		allow    []string
		want     approvals.Decision
	}{
		{"readonly", "ls", nil, approvals.Allow},
		{"readonly", "make", nil, approvals.Deny},
		{"readonly", "make", []string{"bash(make)"}, approvals.Deny},
		{"", "make", nil, approvals.Deny},
		{"ask", "ls", nil, approvals.Allow},
		{"ask", "make", nil, approvals.Ask},
		{"ask", "make", []string{"bash(make)"}, approvals.Allow},
		{"deny", "ls", nil, approvals.Deny},
		{"deny", "git status", []string{"bash"}, approvals.Deny},
	} {
		pp := policy(t, approvals.ModePlan, c.allow, nil)
		pp.PlanBash = c.planBash
		if v := approvals.Decide(bashCall(c.cmd), pp, nil); v.Decision != c.want {
			t.Errorf("plan.bash=%s %q %v: %s", c.planBash, c.cmd, c.allow, v.Decision)
		}
		pp.Unattended = true
		if v := approvals.Decide(bashCall(c.cmd), pp, nil); c.want == approvals.Ask && v.Decision != approvals.Deny {
			t.Errorf("plan.bash=%s %q unattended: %s", c.planBash, c.cmd, v.Decision)
		}
	}
}

// Allowlist (1.4).
func TestAllowlistMode(t *testing.T) {
	p := policy(t, approvals.ModeAllowlist, []string{"write(src/**)", "bash(pnpm lint*)", "bash(pnpm test*)"}, nil)
	cases := []struct {
		call approvals.Call
		want approvals.Decision
	}{
		{pathCall("read", approvals.ClassRead, "/etc/hosts"), approvals.Allow},
		{toolCall("task", approvals.ClassExecute, nil), approvals.Allow},
		{bashCall("git log"), approvals.Allow},
		{bashCall("pnpm lint --fix"), approvals.Allow},
		{bashCall("pnpm lint && pnpm test"), approvals.Allow},
		{bashCall("pnpm lint && make"), approvals.Deny},
		{pathCall("write", approvals.ClassWrite, "src/a.ts"), approvals.Allow},
		{pathCall("write", approvals.ClassWrite, "lib/a.ts"), approvals.Deny},
		{bashCall("make"), approvals.Deny},
		{bashCall("git push -f"), approvals.Deny},
	}
	for _, c := range cases {
		v := approvals.Decide(c.call, p, nil)
		if v.Decision != c.want {
			t.Errorf("%s %s: %s (%s)", c.call.Tool, c.call.Input, v.Decision, v.Reason)
		}
		if v.Decision == approvals.Deny && !strings.Contains(v.Reason, "Not in the allowlist") {
			t.Errorf("%s: reason %q", c.call.Input, v.Reason)
		}
		if v.Decision == approvals.Ask {
			t.Errorf("allowlist asked")
		}
	}
}

// Auto tiers carry AutoDecision records; WithClassifier and Finalize.
func TestAutoDecisions(t *testing.T) {
	p := policy(t, approvals.ModeAuto, []string{"bash(make build)"}, nil)
	cases := []struct {
		call     approvals.Call
		layer    string
		auto     string
		decision approvals.Decision
		classify bool
	}{
		{pathCall("read", approvals.ClassRead, "a"), "static", "static", approvals.Allow, false},
		{bashCall("ls"), "static", "static", approvals.Allow, false},
		{pathCall("write", approvals.ClassWrite, "a"), "static", "static", approvals.Allow, false},
		{bashCall("make build"), "allow-rule", "rule", approvals.Allow, false},
		{bashCall("curl x"), "auto-rule", "rule", approvals.Ask, false},
		{bashCall("git push -f"), "dangerous", "rule", approvals.Ask, false},
		{bashCall("node x.js"), "classifier", "classifier", approvals.Ask, true},
	}
	for _, c := range cases {
		v := approvals.Decide(c.call, p, nil)
		if v.Layer != c.layer || v.Auto == nil || v.Auto.Layer != c.auto || v.Decision != c.decision || v.Classify != c.classify {
			t.Errorf("%s: %+v auto=%+v", c.call.Input, v, v.Auto)
		}
		if v.Auto != nil && (v.Auto.Reason == "" || v.Auto.Decision != string(v.Decision)) {
			t.Errorf("%s: auto %+v", c.call.Input, v.Auto)
		}
	}
	v := approvals.Decide(bashCall("node x.js"), p, nil)
	a := v.WithClassifier(true, "  routine   build ", true)
	if a.Decision != approvals.Allow || a.Classify || !a.Auto.Cached || a.Auto.Reason != "routine build" {
		t.Errorf("classifier allow %+v %+v", a, a.Auto)
	}
	q := v.WithClassifier(false, "unsure", false)
	if q.Decision != approvals.Ask || q.Auto.Decision != "ask" || q.Classify {
		t.Errorf("classifier ask %+v", q)
	}
	// WithClassifier never overrides a verdict that did not ask for it.
	r := approvals.Decide(bashCall("curl x"), p, nil)
	if r2 := r.WithClassifier(true, "x", false); r2.Decision != approvals.Ask || r2.Auto.Layer != "rule" {
		t.Errorf("classifier overrode rule tier: %+v", r2)
	}
	pu := *p
	pu.Unattended = true
	u := approvals.Decide(bashCall("node x.js"), &pu, nil)
	if u.Decision != approvals.Ask || !u.Classify {
		t.Errorf("unattended classify: %+v", u)
	}
	if f := approvals.Finalize(u.WithClassifier(true, "ok", false), &pu); f.Decision != approvals.Allow {
		t.Errorf("unattended classifier allow: %s", f.Decision)
	}
	if f := approvals.Finalize(u.WithClassifier(false, "no", false), &pu); f.Decision != approvals.Deny || !strings.Contains(f.Reason, "unattended") {
		t.Errorf("unattended classifier ask: %+v", f)
	}
	if f := approvals.Finalize(u, &pu); f.Decision != approvals.Deny {
		t.Errorf("unattended without classifier: %s", f.Decision)
	}
}

// Anything the pipeline cannot judge fails closed and nothing panics.
func TestFailClosed(t *testing.T) {
	raw := func(tool string, class approvals.Class, in string) approvals.Call {
		return approvals.Call{Tool: tool, Class: class, Input: json.RawMessage(in), Cwd: cwd, Home: home}
	}
	for _, mode := range approvals.Modes {
		p := policy(t, mode, []string{"bash", "write", "read"}, nil)
		for _, c := range []approvals.Call{
			raw("bash", approvals.ClassExecute, `{"command": 5}`),
			raw("bash", approvals.ClassExecute, `{}`),
			raw("bash", approvals.ClassExecute, `not json`),
			raw("bash", approvals.ClassExecute, `[1,2]`),
			raw("write", approvals.ClassWrite, `{"path": ["a"]}`),
			raw("write", approvals.ClassWrite, `"x"`),
			bashCall("echo \"unterminated"),
			bashCall("echo \x00"),
		} {
			v := approvals.Decide(c, p, nil)
			if v.Decision == approvals.Allow {
				t.Errorf("%s %s %q: allowed", mode, c.Tool, c.Input)
			}
			if mode == approvals.ModeAllowlist && v.Decision != approvals.Deny {
				t.Errorf("%s %q: %s", mode, c.Input, v.Decision)
			}
		}
	}
	// A bash background-job query is a read.
	q := raw("bash", approvals.ClassExecute, `{"job": "1", "action": "output"}`)
	for _, mode := range approvals.Modes {
		if v := approvals.Decide(q, policy(t, mode, nil, nil), nil); v.Decision != approvals.Allow {
			t.Errorf("job query in %s: %s", mode, v.Decision)
		}
	}
	// Unknown classes are treated as execute; unknown modes as default; nil
	// policy as default.
	if v := approvals.Decide(raw("x", "weird", `{}`), &approvals.Policy{Mode: "bogus"}, nil); v.Decision != approvals.Ask {
		t.Errorf("unknown class/mode: %s", v.Decision)
	}
	if v := approvals.Decide(bashCall("make"), nil, nil); v.Decision != approvals.Ask {
		t.Errorf("nil policy: %s", v.Decision)
	}
	if v := approvals.Decide(pathCall("read", approvals.ClassRead, "a"), nil, nil); v.Decision != approvals.Allow {
		t.Errorf("nil policy read: %s", v.Decision)
	}
	// No cwd: every write counts as outside the project in auto mode.
	c := pathCall("write", approvals.ClassWrite, "a")
	c.Cwd = ""
	if v := approvals.Decide(c, &approvals.Policy{Mode: approvals.ModeAuto}, nil); v.Decision != approvals.Ask {
		t.Errorf("no cwd: %s", v.Decision)
	}
}

func TestVerdictTexts(t *testing.T) {
	p := policy(t, approvals.ModeDefault, nil, []string{"bash(terraform *)"})
	if v := approvals.Decide(bashCall("terraform apply"), p, nil); !strings.Contains(v.Reason, "bash(terraform *)") {
		t.Errorf("deny reason %q", v.Reason)
	}
	if v := approvals.Decide(bashCall("make"), p, nil); v.AskReason != "mode" || v.Reason == "" {
		t.Errorf("mode ask %+v", v)
	}
	v := approvals.Decide(bashCall("rm -rf / && git push -f"), p, nil)
	if v.AskReason != "dangerous" || !hasID(v.Dangerous, "rm-rf-root") || !hasID(v.Dangerous, "git-push-force") ||
		!strings.Contains(v.Reason, "dangerous") {
		t.Errorf("dangerous %+v", v)
	}
	p.Unattended = true
	if v := approvals.Decide(bashCall("make"), p, nil); v.Decision != approvals.Deny || !strings.Contains(v.Reason, "unattended") {
		t.Errorf("unattended %+v", v)
	}
}

package approvals_test

import (
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

func sandboxedPolicy(t *testing.T, mode approvals.Mode, networkDenied bool, allow ...string) *approvals.Policy {
	t.Helper()
	p := policy(t, mode, allow, nil)
	p.Sandbox = approvals.Sandbox{Active: true, NetworkDenied: networkDenied}
	return p
}

func bashOutside(cmd string) approvals.Call {
	in, _ := json.Marshal(map[string]any{"command": cmd, "sandbox": false})
	return approvals.Call{Tool: "bash", Class: approvals.ClassExecute, Input: in, Cwd: cwd, Home: home}
}

// The table of permissions.md section 8 / cache-telemetry-sandbox.md B.4.
func TestSandboxFreePass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    approvals.Mode
		netDeny bool
		call    approvals.Call
		want    approvals.Decision
		pass    bool
	}{
		{"default touch", approvals.ModeDefault, true, bashCall("touch inside.txt"), approvals.Allow, true},
		{"auto-edit build", approvals.ModeAutoEdit, true, bashCall("make build && ./run.sh"), approvals.Allow, true},
		{"python code", approvals.ModeDefault, true, bashCall(`python3 -c "open('/etc/x','w')"`), approvals.Allow, true},
		{"network allowed asks", approvals.ModeDefault, false, bashCall("touch inside.txt"), approvals.Ask, false},
		{"sandbox:false asks", approvals.ModeDefault, true, bashOutside("touch inside.txt"), approvals.Ask, false},
		{"secret argument", approvals.ModeDefault, true, bashCall("cat ~/.ssh/id_rsa"), approvals.Ask, false},
		{"secret in interpreter code", approvals.ModeDefault, true, bashCall(`python3 -c "print(open('.env').read())"`), approvals.Ask, false},
		{"secret in nested layer", approvals.ModeDefault, true, bashCall(`sh -c 'cp $HOME/.aws/credentials x'`), approvals.Ask, false},
		{"secret redirect", approvals.ModeDefault, true, bashCall("wc -l < .env.local"), approvals.Ask, false},
		{"too deep", approvals.ModeDefault, true, bashCall("eval eval eval eval touch x"), approvals.Ask, false},
		{"dangerous still asks", approvals.ModeDefault, true, bashCall("git push --force"), approvals.Ask, false},
		{"deny rule still denies", approvals.ModeDefault, true, bashCall("make deploy"), approvals.Deny, false},
		{"auto: no free pass", approvals.ModeAuto, true, bashCall("touch inside.txt"), approvals.Ask, false},
		{"auto: sandbox:false at the rule tier", approvals.ModeAuto, true, bashOutside("ls"), approvals.Ask, false},
		{"plan unchanged", approvals.ModePlan, true, bashCall("touch inside.txt"), approvals.Deny, false},
		{"plan read-only", approvals.ModePlan, true, bashCall("ls"), approvals.Allow, false},
		{"allowlist unchanged", approvals.ModeAllowlist, true, bashCall("touch inside.txt"), approvals.Deny, false},
		{"full-auto outside", approvals.ModeFullAuto, true, bashOutside("touch x"), approvals.Allow, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sandboxedPolicy(t, tc.mode, tc.netDeny)
			p.Deny = append(p.Deny, mustRules(t, "bash(make deploy)")...)
			v := approvals.Decide(tc.call, p, nil)
			if v.Decision != tc.want || v.Sandboxed != tc.pass {
				t.Fatalf("got %s sandboxed=%v (%s: %s), want %s sandboxed=%v", v.Decision, v.Sandboxed, v.Layer, v.Reason, tc.want, tc.pass)
			}
		})
	}
}

func TestSandboxAutoLeaveSkipsClassifier(t *testing.T) {
	v := approvals.Decide(bashOutside("ls"), sandboxedPolicy(t, approvals.ModeAuto, true), nil)
	if v.Classify || v.Layer != "auto-rule" || v.Auto == nil || v.Auto.Layer != "rule" {
		t.Fatalf("%+v", v)
	}
	// An allow rule still lifts it.
	v = approvals.Decide(bashOutside("ls"), sandboxedPolicy(t, approvals.ModeAuto, true, "bash(ls)"), nil)
	if v.Decision != approvals.Allow {
		t.Fatalf("%+v", v)
	}
	// Without sandbox:false, the safe list decides as before.
	if v := approvals.Decide(bashCall("ls"), sandboxedPolicy(t, approvals.ModeAuto, true), nil); v.Decision != approvals.Allow {
		t.Fatalf("%+v", v)
	}
}

func TestSandboxUnattendedLeaveDenied(t *testing.T) {
	p := sandboxedPolicy(t, approvals.ModeDefault, true)
	p.Unattended = true
	if v := approvals.Decide(bashOutside("touch x"), p, nil); v.Decision != approvals.Deny {
		t.Fatalf("%+v", v)
	}
	if v := approvals.Decide(bashCall("touch x"), p, nil); v.Decision != approvals.Allow || !v.Sandboxed {
		t.Fatalf("%+v", v)
	}
}

func TestRunsSandboxed(t *testing.T) {
	p := sandboxedPolicy(t, approvals.ModeDefault, true)
	job, _ := json.Marshal(map[string]any{"job": "j1", "action": "output"})
	for _, tc := range []struct {
		call approvals.Call
		want bool
	}{
		{bashCall("ls"), true},
		{bashOutside("ls"), false},
		{approvals.Call{Tool: "bash", Input: job}, false},
		{pathCall("read", approvals.ClassRead, "a"), false},
	} {
		if got := approvals.RunsSandboxed(tc.call, p); got != tc.want {
			t.Errorf("%s: got %v", tc.call.Input, got)
		}
	}
	if approvals.RunsSandboxed(bashCall("ls"), policy(t, approvals.ModeDefault, nil, nil)) {
		t.Error("inactive sandbox")
	}
}

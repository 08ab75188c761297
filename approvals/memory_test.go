package approvals_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Session memory (section 10).
func TestMemoryBash(t *testing.T) {
	m := approvals.NewMemory()
	m.Remember(bashCall("npm test --watch=false"))
	covered := []string{"npm test", "npm test --watch=false", "npm   test -- x", "npm test && npm test"}
	notCovered := []string{"npm testing", "npm install", "npm test && curl x", "npm test $(x)", "echo `npm test`",
		"(npm test)", `bash -c "npm test"`, "FOO=1 npm test", "npm", "ls", `npm test "unterminated`}
	for _, cmd := range covered {
		if !m.Covers(bashCall(cmd)) {
			t.Errorf("%q not covered", cmd)
		}
	}
	for _, cmd := range notCovered {
		if m.Covers(bashCall(cmd)) {
			t.Errorf("%q covered", cmd)
		}
	}
	// Nested layers must be covered too.
	m.Remember(bashCall("bash -c 'npm test'"))
	if !m.Covers(bashCall(`bash -c "npm test"`)) {
		t.Error("nested layer grant")
	}
	if m.Covers(bashCall(`bash -c "rm x"`)) {
		t.Error("nested layer not covered should fail")
	}
	m.Clear()
	if m.Covers(bashCall("npm test")) {
		t.Error("Clear")
	}
}

func TestMemoryPathsAndTools(t *testing.T) {
	m := approvals.NewMemory()
	m.Remember(pathCall("write", approvals.ClassWrite, "src/a.ts"))
	for path, want := range map[string]bool{"src/b.ts": true, "src/deep/c.ts": true, cwd + "/src/x": true,
		"lib/x": false, "srcx/a": false, "src/../lib/x": false} {
		if got := m.Covers(pathCall("write", approvals.ClassWrite, path)); got != want {
			t.Errorf("write %s: %v", path, got)
		}
	}
	if m.Covers(pathCall("edit", approvals.ClassWrite, "src/b.ts")) {
		t.Error("grant crossed tools")
	}
	m.Remember(toolCall("canvas_send", approvals.ClassExecute, map[string]any{"text": "a"}))
	if !m.Covers(toolCall("canvas_send", approvals.ClassExecute, map[string]any{"text": "other"})) {
		t.Error("tool grant")
	}
	var nilMem *approvals.Memory
	nilMem.Remember(bashCall("ls"))
	nilMem.Clear()
	if nilMem.Covers(bashCall("ls")) {
		t.Error("nil memory covers")
	}
}

// Memory only lifts a mode-level ask.
func TestMemoryLimits(t *testing.T) {
	m := approvals.NewMemory()
	for _, cmd := range []string{"npm test", "git push --force", "curl x", "node gen.js", "rm -rf /"} {
		m.Remember(bashCall(cmd))
	}
	m.Remember(pathCall("write", approvals.ClassWrite, "src/a.ts"))
	m.Remember(pathCall("write", approvals.ClassWrite, "/tmp/a"))
	cases := []struct {
		mode approvals.Mode
		call approvals.Call
		want approvals.Decision
	}{
		{approvals.ModeDefault, bashCall("npm test"), approvals.Allow},
		{approvals.ModeAutoEdit, bashCall("npm test -- x"), approvals.Allow},
		{approvals.ModeDefault, bashCall("git push --force"), approvals.Ask}, // dangerous
		{approvals.ModeDefault, bashCall("rm -rf /"), approvals.Ask},         // dangerous
		{approvals.ModeAuto, bashCall("curl x"), approvals.Ask},              // rule tier
		{approvals.ModeAuto, bashCall("node gen.js"), approvals.Allow},       // after the rule tier
		{approvals.ModeAuto, pathCall("write", approvals.ClassWrite, "/tmp/a/b"), approvals.Ask},
		{approvals.ModePlan, bashCall("node gen.js"), approvals.Deny},   // plan's refusal
		{approvals.ModeAllowlist, bashCall("npm test"), approvals.Deny}, // not consulted
		{approvals.ModeDefault, pathCall("write", approvals.ClassWrite, "src/b.ts"), approvals.Allow},
	}
	for _, c := range cases {
		v := approvals.Decide(c.call, policy(t, c.mode, nil, nil), m)
		if v.Decision != c.want {
			t.Errorf("%s %s: %s (%s)", c.mode, c.call.Input, v.Decision, v.Reason)
		}
		if v.Decision == approvals.Allow && c.mode != approvals.ModeAuto && v.Layer != "session" {
			t.Errorf("%s %s: layer %s", c.mode, c.call.Input, v.Layer)
		}
	}
	// Plan with plan.bash=ask: memory may lift the ask.
	p := policy(t, approvals.ModePlan, nil, nil)
	p.PlanBash = approvals.PlanBashAsk
	if v := approvals.Decide(bashCall("node gen.js"), p, m); v.Decision != approvals.Allow {
		t.Errorf("plan ask + memory: %s", v.Decision)
	}
}

func TestMemoryConcurrent(t *testing.T) {
	m := approvals.NewMemory()
	p := policy(t, approvals.ModeDefault, nil, nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				cmd := fmt.Sprintf("tool%d run%d", i, j%5)
				m.Remember(bashCall(cmd))
				_ = m.Covers(bashCall(cmd + " x"))
				_ = approvals.Decide(bashCall(cmd), p, m)
				if j == 25 && i == 0 {
					m.Clear()
				}
			}
		}()
	}
	wg.Wait()
}

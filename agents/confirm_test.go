package agents

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
)

// markerAgent puts a program on PATH that leaves a marker file when it
// starts (and exits at once, so the task then fails on initialize).
func markerAgent(t *testing.T, r *rig) (agent, marker string) {
	t.Helper()
	bin := filepath.Join(r.dir, "bin")
	marker = filepath.Join(r.dir, "started")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho x >> '" + marker + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "marker-agent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r.reg.cfg.Trusted = true
	return "acp:marker-agent", marker
}

func rules(t *testing.T, ss ...string) []approvals.Rule {
	var out []approvals.Rule
	for _, s := range ss {
		r, err := approvals.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func runTask(t *testing.T, r *rig, agent string) Result {
	t.Helper()
	task, err := r.reg.Launch(Request{Prompt: "x", Agent: agent, Background: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	<-task.done
	return task.Result()
}

func started(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

func TestFirstRunDenyRule(t *testing.T) {
	r := newRig(t, "full-auto") // even full-auto: the deny rule wins
	agent, marker := markerAgent(t, r)
	r.reg.cfg.Deps.Policy.Deny = rules(t, "task(acp:marker-*)")
	res := runTask(t, r, agent)
	if res.Status != StatusFailed || !strings.HasPrefix(res.Text, "permission_denied") || !strings.Contains(res.Text, "task(acp:marker-*)") {
		t.Fatalf("denied agent: %+v", res)
	}
	if started(marker) || r.appr.asks.Load() != 0 {
		t.Fatal("a denied agent was started or asked for")
	}
}

func TestFirstRunAllowRuleSkipsAsk(t *testing.T) {
	r := newRig(t, "default")
	agent, marker := markerAgent(t, r)
	r.reg.cfg.Deps.Policy.Allow = rules(t, "task(acp:*)")
	runTask(t, r, agent)
	if !started(marker) || r.appr.asks.Load() != 0 {
		t.Fatalf("allow rule: started %v, asks %d", started(marker), r.appr.asks.Load())
	}
}

func TestFirstRunAllowlistWithoutRuleRefuses(t *testing.T) {
	r := newRig(t, "allowlist")
	agent, marker := markerAgent(t, r)
	r.reg.cfg.Deps.Policy.Allow = rules(t, "task(claude)") // another agent's rule
	res := runTask(t, r, agent)
	if res.Status != StatusFailed || !strings.Contains(res.Text, "task(acp:marker-agent)") {
		t.Fatalf("allowlist: %+v", res)
	}
	if started(marker) || r.appr.asks.Load() != 0 {
		t.Fatal("allowlist without a rule started or asked")
	}
}

func TestFirstRunUnattendedRefuses(t *testing.T) {
	r := newRig(t, "default")
	agent, marker := markerAgent(t, r)
	r.reg.cfg.Deps.Policy.Unattended = true
	if res := runTask(t, r, agent); !strings.HasPrefix(res.Text, "permission_denied") || started(marker) {
		t.Fatalf("unattended: %+v started %v", res, started(marker))
	}
}

func TestFirstRunDeclinedNeverStarts(t *testing.T) {
	r := newRig(t, "default")
	agent, marker := markerAgent(t, r)
	r.appr.deny.Store(true)
	res := runTask(t, r, agent)
	if !strings.HasPrefix(res.Text, "permission_denied") || started(marker) {
		t.Fatalf("declined: %+v started %v", res, started(marker))
	}
	// A refusal is not remembered: the next first run asks again.
	r.appr.deny.Store(false)
	runTask(t, r, agent)
	if r.appr.asks.Load() != 2 || !started(marker) {
		t.Fatalf("asks %d started %v", r.appr.asks.Load(), started(marker))
	}
	// Once approved, later runs do not ask.
	runTask(t, r, agent)
	if r.appr.asks.Load() != 2 {
		t.Fatalf("asked again after approval: %d", r.appr.asks.Load())
	}
}

// Concurrent first runs of one agent share one confirmation.
func TestFirstRunConcurrentShareOneAsk(t *testing.T) {
	r := newRig(t, "default")
	r.appr.gate = make(chan struct{})
	agent, marker := markerAgent(t, r)
	var wg sync.WaitGroup
	tasks := make([]*Task, 3)
	for i := range tasks {
		task, err := r.reg.Launch(Request{Prompt: "x", Agent: agent, Background: new(bool)})
		if err != nil {
			t.Fatal(err)
		}
		tasks[i] = task
	}
	// The first asks; wait until its request is out, then answer.
	r.rec.waitFor(t, "the confirmation", func(evs []events.Event) bool {
		for _, e := range evs {
			if e.Type() == "permission_request" {
				return true
			}
		}
		return false
	})
	close(r.appr.gate)
	for _, task := range tasks {
		wg.Add(1)
		go func() { defer wg.Done(); <-task.done }()
	}
	wg.Wait()
	if n := r.appr.asks.Load(); n != 1 {
		t.Fatalf("asks = %d, want 1", n)
	}
	data, _ := os.ReadFile(marker)
	if strings.Count(string(data), "x") != 3 {
		t.Fatalf("started %q times, want 3", data)
	}
}

package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/events"
)

// externalRig is a trusted default-mode parent whose approver allows (or,
// with deny, denies) the agent's own requests; the first-run confirmation
// is skipped by the rule task(<agent>), so every ask is the agent's.
func externalRig(t *testing.T, agent string, deny bool) *rig {
	r := newRig(t, "default")
	r.reg.cfg.Trusted = true
	r.reg.cfg.Deps.Policy.Allow = rules(t, "task("+agent+")")
	r.appr.deny.Store(deny)
	return r
}

func agentAsks(r *rig, agent string) []events.PermissionRequest {
	var out []events.PermissionRequest
	for _, e := range r.rec.all() {
		if pr, ok := e.(events.PermissionRequest); ok && pr.ToolName == "agent:"+agent {
			out = append(out, pr)
		}
	}
	return out
}

func markerExists(rec string) bool {
	_, err := os.Stat(filepath.Join(rec, "marker"))
	return err == nil
}

func TestClaudeDriverApprovedStep(t *testing.T) {
	rec := installFakeCLI(t, "claude", "claude", "tool")
	r := externalRig(t, AgentClaude, false)
	res := runTask(t, r, AgentClaude)
	if res.Status != StatusCompleted || res.StopReason != "end_turn" {
		t.Fatalf("result %+v", res)
	}
	if !strings.HasPrefix(res.Text, "checking. done\n\nTool calls:\n- ✓ execute Bash: touch ") {
		t.Fatalf("report %q", res.Text)
	}
	if !markerExists(rec) {
		t.Fatal("the approved step did not run")
	}
	asks := agentAsks(r, AgentClaude)
	if len(asks) != 1 || asks[0].Context == nil || asks[0].Context.Depth != 1 {
		t.Fatalf("asks %+v", asks)
	}
	origin, _ := json.Marshal(asks[0].Context.Origin)
	if !strings.Contains(string(origin), `"options":[{"optionId":"allow","kind":"allow_once"},{"optionId":"deny","kind":"reject_once"}]`) {
		t.Fatalf("origin %s", origin)
	}
	var input toolView
	_ = json.Unmarshal(asks[0].Input, &input)
	if input.Kind != "execute" || !strings.Contains(input.InputSummary, `"command":"touch `) {
		t.Fatalf("input %s", asks[0].Input)
	}
	info := r.reg.List()[0]
	if info.Usage == nil || info.Usage.Input != 100 || info.Usage.Output != 20 || info.Usage.CacheRead != 30 || info.Usage.TotalTokens != 150 {
		t.Fatalf("usage %+v", info.Usage)
	}
	if info.CostUSD == nil || *info.CostUSD != 0.0123 {
		t.Fatalf("cost %v", info.CostUSD)
	}
	argv := recLines(rec, "argv")
	i := slices.Index(argv, "--permission-mode")
	if i < 0 || argv[i+1] != "manual" || !slices.Contains(argv, "--permission-prompt-tool") || !slices.Contains(argv, "stream-json") {
		t.Fatalf("argv %q", argv)
	}
	j := slices.Index(argv, "--session-id")
	if j < 0 || info.SessionRef == nil || info.SessionRef.SessionID != argv[j+1] {
		t.Fatalf("session %v argv %q", info.SessionRef, argv)
	}
	// The tool was reported to the parent once it started.
	var tools int
	for _, e := range r.rec.all() {
		if u, ok := e.(events.SubagentUpdate); ok && u.Kind == "tool" {
			tools++
		}
	}
	if tools != 1 {
		t.Fatalf("%d tool updates", tools)
	}
}

func TestClaudeDriverDeniedStepDoesNotRun(t *testing.T) {
	rec := installFakeCLI(t, "claude", "claude", "tool")
	r := externalRig(t, AgentClaude, true)
	res := runTask(t, r, AgentClaude)
	if markerExists(rec) {
		t.Fatal("a denied step ran")
	}
	if !strings.Contains(res.Text, "- ✗ execute Bash") {
		t.Fatalf("report %q", res.Text)
	}
	if !strings.Contains(readRec(rec, "in"), `"behavior":"deny"`) {
		t.Fatal("the CLI was not told deny")
	}
}

func TestClaudeDriverRefusesQuestions(t *testing.T) {
	rec := installFakeCLI(t, "claude", "claude", "question")
	r := externalRig(t, AgentClaude, false)
	runTask(t, r, AgentClaude)
	if len(agentAsks(r, AgentClaude)) != 0 || r.appr.asks.Load() != 0 {
		t.Fatal("AskUserQuestion reached the user")
	}
	if !strings.Contains(readRec(rec, "in"), `"behavior":"deny"`) {
		t.Fatal("the question was not refused")
	}
}

func TestCodexDriverApprovedStep(t *testing.T) {
	rec := installFakeCLI(t, "codex", "codex", "tool")
	r := externalRig(t, AgentCodex, false)
	res := runTask(t, r, AgentCodex)
	if res.Status != StatusCompleted || !strings.HasPrefix(res.Text, "ran it\n\nTool calls:\n- ✓ execute $ touch ") {
		t.Fatalf("result %+v", res)
	}
	if !markerExists(rec) {
		t.Fatal("the approved command did not run")
	}
	if e := readRec(rec, "errors"); e != "" {
		t.Fatal(e)
	}
	in := readRec(rec, "in")
	if !strings.Contains(in, `"approvalPolicy":"on-request"`) || !strings.Contains(in, `"sandbox":"read-only"`) || !strings.Contains(in, `"decision":"accept"`) {
		t.Fatalf("codex saw %s", in)
	}
	if argv := recLines(rec, "argv"); len(argv) != 1 || argv[0] != "app-server" {
		t.Fatalf("argv %q", argv)
	}
	info := r.reg.List()[0]
	if info.Usage == nil || info.Usage.Input != 100 || info.Usage.CacheRead != 40 || info.Usage.Output != 10 || info.Usage.TotalTokens != 150 || info.CostUSD != nil {
		t.Fatalf("usage %+v cost %v", info.Usage, info.CostUSD)
	}
	asks := agentAsks(r, AgentCodex)
	if len(asks) != 1 {
		t.Fatalf("asks %d", len(asks))
	}
	origin, _ := json.Marshal(asks[0].Context.Origin)
	if !strings.Contains(string(origin), `"sessionId":"thr_1"`) || !strings.Contains(string(origin), `"optionId":"acceptForSession","kind":"allow_always"`) {
		t.Fatalf("origin %s", origin)
	}

	// A continuation resumes the same thread.
	task, err := r.reg.Launch(Request{TaskID: "t1", Prompt: "again", Background: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	<-task.done
	if !strings.Contains(readRec(rec, "in"), `"method":"thread/resume"`) || !strings.Contains(readRec(rec, "in"), `"threadId":"thr_1"`) {
		t.Fatal("the continuation did not resume the thread")
	}
}

func TestCodexDriverDeclinedStepDoesNotRun(t *testing.T) {
	rec := installFakeCLI(t, "codex", "codex", "tool")
	r := externalRig(t, AgentCodex, true)
	res := runTask(t, r, AgentCodex)
	if markerExists(rec) {
		t.Fatal("a declined command ran")
	}
	if !strings.Contains(readRec(rec, "in"), `"decision":"decline"`) || !strings.Contains(res.Text, "- ✗ execute") {
		t.Fatalf("report %q", res.Text)
	}
}

// Aborting a running external task interrupts the CLI (Claude: an
// interrupt control request; Codex: turn/interrupt) and ends it aborted.
func TestNativeDriverCancel(t *testing.T) {
	for _, tc := range []struct{ agent, noInterrupt string }{
		{AgentClaude, "the CLI got no interrupt"},
		{AgentCodex, "codex got no turn/interrupt"},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			rec := installFakeCLI(t, tc.agent, tc.agent, "hang")
			r := externalRig(t, tc.agent, false)
			task, err := r.reg.Launch(Request{Prompt: "x", Agent: tc.agent, Background: new(bool)})
			if err != nil {
				t.Fatal(err)
			}
			r.rec.waitFor(t, "the agent's text", func(evs []events.Event) bool {
				for _, e := range evs {
					if u, ok := e.(events.SubagentUpdate); ok && u.Kind == "text" {
						return true
					}
				}
				return false
			})
			task.Abort()
			<-task.done
			if res := task.Result(); res.Status != StatusAborted {
				t.Fatalf("result %+v", res)
			}
			if readRec(rec, "interrupted") == "" {
				t.Fatal(tc.noInterrupt)
			}
		})
	}
}

// An untrusted project, or a deny rule, never starts the CLI: the fake
// records its argv first thing, and nothing is recorded.
func TestNativeDriversNeverStartWhenRefused(t *testing.T) {
	for _, agent := range []string{AgentClaude, AgentCodex} {
		rec := installFakeCLI(t, agent, agent, "tool")
		r := newRig(t, "full-auto")
		if res := runTask(t, r, agent); !strings.HasPrefix(res.Text, "agent_untrusted") {
			t.Fatalf("%s untrusted: %+v", agent, res)
		}
		r.reg.cfg.Trusted = true
		r.reg.cfg.Deps.Policy.Deny = rules(t, "task("+agent+")")
		if res := runTask(t, r, agent); !strings.HasPrefix(res.Text, "permission_denied") {
			t.Fatalf("%s denied: %+v", agent, res)
		}
		if readRec(rec, "argv") != "" || readRec(rec, "in") != "" || markerExists(rec) {
			t.Fatalf("%s was started", agent)
		}
	}
}

// agents.<id>.maxMode caps the mode (codex runs read-only without asks in
// a default-mode parent capped to plan); env.passthrough keeps a stripped
// variable; agents.sessionBudgetUsd refuses a run once spent, before any
// process starts.
func TestExternalSettings(t *testing.T) {
	rec := installFakeCLI(t, "codex", "codex", "tool")
	t.Setenv("FOO_API_KEY", "kept")
	r := externalRig(t, AgentCodex, false)
	r.reg.cfg.External = map[string]ExternalSettings{AgentCodex: {MaxMode: "plan", Passthrough: []string{"FOO_API_KEY"}}}
	runTask(t, r, AgentCodex)
	in := readRec(rec, "in")
	if !strings.Contains(in, `"approvalPolicy":"never"`) || !strings.Contains(in, `"sandbox":"read-only"`) {
		t.Fatalf("codex saw %s", in)
	}
	if env := readRec(rec, "env"); strings.TrimSpace(env) != "FOO_API_KEY=kept" {
		t.Fatalf("env %q", env)
	}

	crec := installFakeCLI(t, "claude", "claude", "tool")
	r2 := externalRig(t, AgentClaude, false)
	r2.reg.cfg.ExternalBudgetUSD = 0.01
	if res := runTask(t, r2, AgentClaude); res.Status != StatusCompleted {
		t.Fatalf("first run %+v", res)
	}
	if res := runTask(t, r2, AgentClaude); !strings.HasPrefix(res.Text, "budget_exhausted") {
		t.Fatalf("second run %+v", res)
	}
	if n := strings.Count(readRec(crec, "in"), `"type":"user"`); n != 1 {
		t.Fatalf("claude got %d prompts", n)
	}
}

func TestClampMode(t *testing.T) {
	for _, c := range [][3]string{{"full-auto", "auto-edit", "auto-edit"}, {"default", "auto", "default"}, {"allowlist", "", "plan"}, {"auto", "bogus", "auto"}} {
		if got := clampMode(c[0], c[1]); got != c[2] {
			t.Errorf("clamp(%s, %s) = %s", c[0], c[1], got)
		}
	}
}

// A plan-mode task never starts on an ACP agent that offers no read-only
// mode: no prompt is sent (the marker a prompt would create is absent).
func TestACPPlanNeedsReadOnlyMode(t *testing.T) {
	rec := installFakeCLI(t, "fake-acp", "acp", "")
	r := newRig(t, "plan")
	r.reg.cfg.Trusted = true
	r.reg.cfg.Deps.Policy.Allow = rules(t, "task(acp:fake-acp)")
	res := runTask(t, r, "acp:fake-acp")
	if res.Status != StatusFailed || !strings.Contains(res.Text, "no read-only mode") {
		t.Fatalf("result %+v", res)
	}
	if markerExists(rec) || strings.Contains(readRec(rec, "in"), "session/prompt") {
		t.Fatal("a plan-mode task prompted an agent without a read-only mode")
	}
	// In default mode the same agent runs (in its own mode, with a notice).
	r2 := newRig(t, "default")
	r2.reg.cfg.Trusted = true
	r2.reg.cfg.Deps.Policy.Allow = rules(t, "task(acp:fake-acp)")
	if res := runTask(t, r2, "acp:fake-acp"); res.Status != StatusCompleted || !markerExists(rec) {
		t.Fatalf("default mode: %+v", res)
	}
}

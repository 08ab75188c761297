package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/telemetry"
	"github.com/armadra/ama-rpc/tools"
)

// Red-team tests of nested calls (CallSession.ExecuteTool, a host tool's
// ctx.tools.executeTool): a nested call may never run what the same call
// from the model could not. The side effect checked is the target probe's
// run count.

// nester is a read tool that makes one nested call of target with args
// (before, when set, runs first: a test's hook into the running call).
type nester struct {
	target string
	args   string
	before func(ctx context.Context) context.Context
	got    atomic.Pointer[tools.Result]
}

func (n *nester) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "nester", Description: "Nests a call. For tests.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (n *nester) Permission() string { return tools.PermRead }
func (n *nester) Execute(ctx context.Context, c *tools.Call) (*tools.Result, error) {
	if n.before != nil {
		ctx = n.before(ctx)
	}
	res := c.Session.ExecuteTool(ctx, n.target, json.RawMessage(n.args))
	n.got.Store(res)
	return tools.TextResult("nested: " + llm.JoinText(res.Content, "")), nil
}

// newNestedEnv starts a session with the nester and a probe under opts.
func newNestedEnv(t *testing.T, opts Options, nest *nester, p *probe, approver Approver, mod func(*Deps), script ...fake.Response) *Session {
	t.Helper()
	if len(script) == 0 {
		script = []fake.Response{toolCall("nester", `{}`), reply("done")}
	}
	fp := fake.New(fake.Options{Script: &fake.Script{Responses: script}})
	var n, u atomic.Int64
	deps := &Deps{
		Models:     llm.NewRegistry(fp.Entry()),
		NewEntryID: func() string { return fmt.Sprintf("%08x", n.Add(1)) },
		NewUUID:    func() string { return fmt.Sprintf("uuid-%d", u.Add(1)) },
		Dirs:       Dirs{Data: t.TempDir(), Home: t.TempDir()},
		Approver:   approver,
		Tools:      &testTools{list: []tools.Tool{nest, p}},
		Policy:     &approvals.Policy{Mode: approvals.ModeDefault, PlanBash: approvals.PlanBashReadonly},
		Reporting:  telemetry.NewReporting(),
	}
	if mod != nil {
		mod(deps)
	}
	opts.Cwd, opts.Model = t.TempDir(), llm.ModelRef{Provider: fake.ProviderID, ID: "echo"}
	s, err := New(deps, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Start("new"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s
}

func runNested(t *testing.T, s *Session) {
	t.Helper()
	l := newReplyLog(&recorder{})
	s.Prompt("prompt", PromptInput{Message: "go"}, l.fn("prompt"))
	waitIdle(t, s)
}

func TestNestedCallReach(t *testing.T) {
	child := &ParentLink{TaskData: map[string]string{"taskId": "t1"}}
	for _, tc := range []struct {
		name string
		opts Options
		runs int32
	}{
		// ama's rule: a root session's nested call reaches inactive tools
		// (through the pipeline; full-auto allows).
		{"root, inactive tool", Options{PermissionMode: "full-auto", ActiveTools: []string{"nester"}}, 1},
		// A fork child's disallowed tool is refused for nesting too.
		{"refused tool", Options{PermissionMode: "full-auto", Unavailable: []string{"probe"}}, 0},
		// A sub-agent reaches only its own tool set.
		{"child, tool outside its set", Options{PermissionMode: "full-auto", ActiveTools: []string{"nester"}, Parent: child}, 0},
		{"child, tool in its set", Options{PermissionMode: "full-auto", ActiveTools: []string{"nester", "probe"}, Parent: child}, 1},
		// A read-only type (plan pipeline, asks become denies) never writes.
		{"read-only child", Options{PermissionMode: "plan", ReadOnly: true, Parent: child}, 0},
		{"read-only child, auto-edit parent mode", Options{PermissionMode: "auto-edit", ReadOnly: true, Parent: child, ActiveTools: []string{"nester"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermWrite}
				nest := &nester{target: "probe", args: `{}`}
				ap := &answer{decision: "allow"}
				s := newNestedEnv(t, tc.opts, nest, p, ap, nil)
				defer s.Close()
				runNested(t, s)
				if got := p.runs.Load(); got != tc.runs {
					t.Errorf("probe ran %d times, want %d (nested result %+v)", got, tc.runs, nest.got.Load())
				}
				if tc.opts.ReadOnly && ap.asks.Load() != 0 {
					t.Errorf("a read-only child asked %d times", ap.asks.Load())
				}
			})
		})
	}
}

// A nested call is judged with the mode the session has when it is made:
// switching a full-auto session to plan while a host tool runs stops its
// later nested writes.
func TestNestedCallUsesCurrentMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		var s *Session
		nest := &nester{target: "probe", args: `{}`, before: func(ctx context.Context) context.Context {
			if _, err := s.SetPermissionMode("plan"); err != nil {
				t.Errorf("SetPermissionMode: %v", err)
			}
			return ctx
		}}
		s = newNestedEnv(t, Options{PermissionMode: "full-auto"}, nest, p, &answer{decision: "allow"}, nil)
		defer s.Close()
		runNested(t, s)
		if got := p.runs.Load(); got != 0 {
			t.Errorf("probe ran %d times after the switch to plan", got)
		}
		if res := nest.got.Load(); res == nil || !res.IsError || !strings.Contains(llm.JoinText(res.Content, ""), "Plan mode") {
			t.Errorf("nested result %+v", res)
		}
	})
}

// A nested call made on an ended signal (the caller's, or its parent's
// run aborted) neither asks nor runs.
func TestNestedCallCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		nest := &nester{target: "probe", args: `{}`, before: func(ctx context.Context) context.Context {
			c, cancel := context.WithCancel(ctx)
			cancel()
			return c
		}}
		ap := &answer{decision: "allow"}
		s := newNestedEnv(t, Options{}, nest, p, ap, nil)
		defer s.Close()
		runNested(t, s)
		if p.runs.Load() != 0 || ap.asks.Load() != 0 {
			t.Errorf("probe ran %d times, %d asks", p.runs.Load(), ap.asks.Load())
		}
		if res := nest.got.Load(); res == nil || llm.JoinText(res.Content, "") != "aborted by user" {
			t.Errorf("nested result %+v", res)
		}
	})
}

// A fork child (context:"fork") copies its parent's context, not its
// "allow for this session" grants: the probe the parent allowed for the
// session still needs approval in the child (denied here: it never runs).
func TestForkChildHasNoParentGrants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		nest := &nester{target: "probe", args: `{}`}
		ap := &answer{decision: "allow_session"}
		parent := newNestedEnv(t, Options{}, nest, p, ap, nil, toolCall("nester", `{}`), reply("done"), toolCall("nester", `{}`), reply("done"))
		defer parent.Close()
		runNested(t, parent)
		if p.runs.Load() != 1 || ap.asks.Load() != 1 {
			t.Fatalf("parent: probe ran %d times, %d asks", p.runs.Load(), ap.asks.Load())
		}
		var callID string
		for _, e := range toolCallIDs(t, parent) {
			callID = e
		}
		deny := &answer{decision: "deny"}
		child, _, fallback, err := parent.ForkChild(ForkRequest{ParentToolCallID: callID,
			TaskData: func(string) any { return map[string]string{"taskId": "t1"} },
			Options: Options{Model: llm.ModelRef{Provider: fake.ProviderID, ID: "echo"}, Approver: deny,
				Parent: &ParentLink{}}})
		if err != nil || fallback != "" {
			t.Fatalf("ForkChild: %v %s", err, fallback)
		}
		defer child.Close()
		if err := child.Start("new"); err != nil {
			t.Fatalf("Start: %v", err)
		}
		runNested(t, child)
		if p.runs.Load() != 1 {
			t.Errorf("the fork child ran the probe on its parent's session grant")
		}
		if deny.asks.Load() != 1 {
			t.Errorf("the fork child asked %d times, want 1", deny.asks.Load())
		}
	})
}

// toolCallIDs lists the ids of the tool calls in s's branch.
func toolCallIDs(t *testing.T, s *Session) []string {
	t.Helper()
	ids, err := call(s, func(st *state) []string {
		var out []string
		for _, e := range st.branch() {
			if m, err := e.Message(); err == nil {
				if a, ok := m.(*llm.AssistantMessage); ok {
					for _, tc := range a.ToolCalls() {
						out = append(out, tc.ID)
					}
				}
			}
		}
		return out
	})
	if err != nil || len(ids) == 0 {
		t.Fatalf("no tool calls in the branch: %v", err)
	}
	return ids
}

// A sub-agent that writes a <proposed_plan> is not approved into execution
// by plan.unattended "approve", even when the mode before plan (a fork
// child inherits it from its parent's branch) was full-auto: its plan's
// hand-off never runs the write. A read-only one never leaves plan mode.
func TestReadOnlyChildStaysInPlan(t *testing.T) {
	for _, readOnly := range []bool{true, false} {
		t.Run(map[bool]string{true: "read-only", false: "general child of a plan-mode parent"}[readOnly], func(t *testing.T) {
			childStaysInPlan(t, readOnly)
		})
	}
}

func childStaysInPlan(t *testing.T, readOnly bool) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		s := newNestedEnv(t, Options{PermissionMode: "full-auto", ReadOnly: readOnly, Parent: &ParentLink{TaskData: map[string]string{"taskId": "t1"}}},
			&nester{target: "probe", args: `{}`}, p, &answer{decision: "allow"},
			func(d *Deps) { d.Settings.PlanUnattended = "approve" },
			reply("<proposed_plan>\n1. Write the file.\n</proposed_plan>"), toolCall("probe", `{}`), reply("done"), toolCall("probe", `{}`), reply("done"))
		defer s.Close()
		if _, err := s.SetPermissionMode("plan"); err != nil { // prePlanMode: full-auto
			t.Fatal(err)
		}
		runNested(t, s)
		runNested(t, s)
		if got := p.runs.Load(); got != 0 {
			t.Errorf("the child ran a write %d times after its plan", got)
		}
		if !readOnly {
			return
		}
		if _, err := s.SetPermissionMode("full-auto"); err != nil {
			t.Fatal(err)
		}
		if m, _ := call(s, func(st *state) approvals.Mode { return st.mode }); m != approvals.ModePlan {
			t.Errorf("read-only child left plan mode: %s", m)
		}
	})
}

// stater is a read tool that appends custom entries through its call
// session and then reads the session state back.
type stater struct {
	got tools.CallState
}

func (s *stater) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "nester", Description: "Reads state. For tests.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (s *stater) Permission() string { return tools.PermRead }
func (s *stater) Execute(_ context.Context, c *tools.Call) (*tools.Result, error) {
	c.Session.AppendCustom("k", json.RawMessage(`{"v":1}`))
	c.Session.AppendCustom("k", json.RawMessage(`{"v":2}`))
	c.Session.AppendCustom("empty", nil)
	c.Session.AppendCustom(`we"ird`, json.RawMessage(`[1]`))
	s.got = c.Session.State()
	return tools.TextResult("ok"), nil
}

// CallSession.State collects each custom type's latest data on the branch.
func TestCallSessionStateCustom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &stater{}
		s := newNestedEnv(t, Options{PermissionMode: "full-auto"}, nil, &probe{}, nil, func(d *Deps) {
			d.Tools = &testTools{list: []tools.Tool{st}}
		})
		defer s.Close()
		runNested(t, s)
		// The session's own entries (permission mode, checkpoint) are there too.
		want := map[string]string{"k": `{"v":2}`, "empty": `null`, `we"ird`: `[1]`, "ama-rpc.permission_mode": `{"mode":"full-auto"}`}
		for k, v := range want {
			if got := string(st.got.Custom[k]); got != v {
				t.Errorf("Custom[%q] = %s, want %s", k, got, v)
			}
		}
		if len(st.got.ActiveTools) != 1 || st.got.ActiveTools[0] != "nester" {
			t.Errorf("ActiveTools = %v", st.got.ActiveTools)
		}
	})
}

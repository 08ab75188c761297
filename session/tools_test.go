package session

// Run limits (turns, cost, repeated calls) and the tool phase of a turn
// (runTools, prepare, execute, permit, ask) with a counting probe tool:
// the tests check the side effect (did the tool run?), not only events.

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

func intp(n int) *int { return &n }

// toolLoop is a script whose every reply calls probe with args.
func toolLoop(args string) *fake.Script {
	return &fake.Script{Responses: []fake.Response{toolCall("probe", args)}, WhenExhausted: "repeat-last"}
}

// resultText is the text of a tool_execution_end result.
func resultText(e events.ToolExecutionEnd) string { return llm.JoinText(e.Result.Content, "") }

// TestLimits pins limitReached in a run: the run ends after the turn that
// reaches the limit, agent_settled carries the warning, and follow-ups
// queued meanwhile stay queued.
func TestLimits(t *testing.T) {
	costly := &fake.Script{WhenExhausted: "repeat-last", Responses: []fake.Response{{
		Steps: toolCall("probe", `{}`).Steps, Usage: &fake.UsageSpec{Input: intp(1_000_000), Output: intp(0)}, // $1 a turn
	}}}
	for _, tc := range []struct {
		name     string
		settings Settings
		script   *fake.Script
		calls    int
		runs     int32
		kind     string
		warning  string
	}{
		{"turn limit", Settings{MaxTurns: 2}, toolLoop(`{"n":1}`), 2, 2, "turns", "limit_reached"},
		{"cost limit", Settings{MaxCost: 1.5, NoAutoCompaction: true}, costly /* 1M-token usage would start a threshold compaction */, 2, 2, "cost", "limit_reached"},
		{"repeated identical calls", Settings{}, toolLoop(`{"n":1}`), maxRepeats, maxRepeats - 1, "", "repeated_tool_call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermRead}
				e := newEnv(t, setup{script: tc.script, settings: tc.settings, tools: []tools.Tool{p}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if got := e.fp.Calls(); got != tc.calls {
					t.Errorf("%d model requests, want %d: %s", got, tc.calls, joinTypes(e.rec.types()))
				}
				if got := p.runs.Load(); got != tc.runs {
					t.Errorf("probe ran %d times, want %d", got, tc.runs)
				}
				lr := eventsOf[events.LimitReached](e.rec)
				if tc.kind == "" && len(lr) != 0 || tc.kind != "" && (len(lr) != 1 || string(lr[0].Kind) != tc.kind) {
					t.Errorf("limit_reached %+v, want kind %q", lr, tc.kind)
				}
				if s := eventsOf[events.AgentSettled](e.rec); len(s) != 1 || s[0].Warning != tc.warning {
					t.Errorf("agent_settled %+v, want warning %q", s, tc.warning)
				}
			})
		})
	}
	t.Run("a limit keeps the follow-ups", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := &probe{name: "probe", perm: tools.PermRead, block: make(chan struct{})}
			e := newEnv(t, setup{script: toolLoop(`{}`), settings: Settings{MaxTurns: 1}, tools: []tools.Tool{p}})
			defer e.s.Close()
			l := newReplyLog(e.rec)
			e.s.Prompt("prompt", PromptInput{Message: "go"}, l.fn("go"))
			synctest.Wait() // the tool is running
			e.s.Prompt("follow_up", PromptInput{Message: "later"}, l.fn("f"))
			close(p.block)
			waitIdle(t, e.s)
			if st, _ := e.s.State(); st.PendingMessageCount != 1 {
				t.Errorf("%d queued after the limit, want the follow-up kept", st.PendingMessageCount)
			}
			if e.fp.Calls() != 1 {
				t.Errorf("%d requests, want 1", e.fp.Calls())
			}
		})
	})
}

// TestPermission pins permit and ask: what reaches the approver, what it
// answers, and whether the tool ran.
func TestPermission(t *testing.T) {
	for _, tc := range []struct {
		name     string
		perm     string
		mode     string
		approver *answer
		asks     int32
		runs     int32
		decision events.Approval // permission_resolved decision ("" when not asked)
		result   string          // prefix of the tool result text
	}{
		{"read runs without asking", tools.PermRead, "default", &answer{decision: "deny"}, 0, 1, "", "ok"},
		{"write asks and runs when allowed", tools.PermWrite, "default", &answer{decision: "allow"}, 1, 1, "allow", "ok"},
		{"write asks and does not run when denied", tools.PermWrite, "default", &answer{decision: "deny"}, 1, 0, "deny", "Not run"},
		{"an unknown answer is deny", tools.PermWrite, "default", &answer{decision: "maybe"}, 1, 0, "deny", "Not run"},
		{"no approver denies", tools.PermWrite, "default", nil, 0, 0, "deny", "Not run"},
		{"full-auto runs without asking", tools.PermExecute, "full-auto", &answer{decision: "deny"}, 0, 1, "", "ok"},
		{"auto-edit runs writes", tools.PermWrite, "auto-edit", &answer{decision: "deny"}, 0, 1, "", "ok"},
		{"plan mode refuses writes without asking", tools.PermWrite, "plan", &answer{decision: "allow"}, 0, 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tc.perm}
				c := setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{"x":1}`), reply("done")}},
					mode: tc.mode, tools: []tools.Tool{p}}
				if tc.approver != nil {
					c.approver = tc.approver
				}
				e := newEnv(t, c)
				defer e.s.Close()
				e.runPrompt(t, "go")
				if got := p.runs.Load(); got != tc.runs {
					t.Errorf("probe ran %d times, want %d", got, tc.runs)
				}
				if tc.approver != nil && tc.approver.asks.Load() != tc.asks {
					t.Errorf("approver asked %d times, want %d", tc.approver.asks.Load(), tc.asks)
				}
				res := eventsOf[events.PermissionResolved](e.rec)
				if tc.decision == "" && len(res) != 0 || tc.decision != "" && (len(res) != 1 || res[0].Decision != tc.decision) {
					t.Errorf("permission_resolved %+v, want %q", res, tc.decision)
				}
				if req := eventsOf[events.PermissionRequest](e.rec); len(req) != len(res) || len(req) == 1 && req[0].RequestID != res[0].RequestID {
					t.Errorf("permission_request %+v does not pair with permission_resolved %+v", req, res)
				}
				ends := eventsOf[events.ToolExecutionEnd](e.rec)
				if len(ends) != 1 {
					t.Fatalf("%d tool_execution_end, want 1", len(ends))
				}
				if got := resultText(ends[0]); !strings.HasPrefix(got, tc.result) {
					t.Errorf("tool result %q, want prefix %q", got, tc.result)
				}
				if ends[0].Denied != (tc.runs == 0) {
					t.Errorf("denied %v with %d runs", ends[0].Denied, tc.runs)
				}
			})
		})
	}
}

// TestAskBounds pins ask: an unanswered ask ends at the approval timeout
// (on the fake clock) or when the run is aborted, and is a deny either way.
func TestAskBounds(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := &probe{name: "probe", perm: tools.PermWrite}
			// An approver keeps the contract: once its ctx ended it says deny.
			// (ask itself does not check that ctx; see the report of issue 14.)
			a := &answer{decision: "deny", wait: true}
			e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{}`), reply("done")}},
				tools: []tools.Tool{p}, approver: a, settings: Settings{ApprovalTimeout: time.Minute}})
			defer e.s.Close()
			start := time.Now()
			e.runPrompt(t, "go")
			if got := time.Since(start); got != time.Minute {
				t.Errorf("the ask lasted %v, want the approval timeout", got)
			}
			if req := eventsOf[events.PermissionRequest](e.rec); len(req) != 1 || req[0].TimeoutMs != 60000 {
				t.Errorf("permission_request %+v, want timeoutMs 60000", req)
			}
			if res := eventsOf[events.PermissionResolved](e.rec); len(res) != 1 || res[0].Decision != "deny" {
				t.Errorf("permission_resolved %+v, want deny after the timeout", res)
			}
			if p.runs.Load() != 0 {
				t.Error("the tool ran after an unanswered ask")
			}
		})
	})
	t.Run("abort", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := &probe{name: "probe", perm: tools.PermWrite}
			a := &answer{decision: "allow", wait: true}
			e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{}`), reply("never")}},
				tools: []tools.Tool{p}, approver: a})
			defer e.s.Close()
			l := newReplyLog(e.rec)
			e.s.Prompt("prompt", PromptInput{Message: "go"}, l.fn("go"))
			synctest.Wait() // asking
			if a.asks.Load() != 1 {
				t.Fatal("not asking")
			}
			done := make(chan struct{})
			e.s.Abort(func() { close(done) })
			<-done
			if p.runs.Load() != 0 {
				t.Error("the tool ran after an aborted ask")
			}
			// The approver answered allow once its ctx ended; an aborted run
			// still resolves the ask as deny.
			if res := eventsOf[events.PermissionResolved](e.rec); len(res) != 1 || res[0].Decision != "deny" {
				t.Errorf("permission_resolved %+v, want deny after the abort", res)
			}
			ends := eventsOf[events.ToolExecutionEnd](e.rec)
			if len(ends) != 1 || resultText(ends[0]) != "aborted by user" {
				t.Errorf("tool_execution_end %+v, want aborted by user", ends)
			}
			if e.fp.Calls() != 1 {
				t.Errorf("%d requests after the abort, want 1", e.fp.Calls())
			}
		})
	})
}

// TestPrepare pins prepare's refusals: unknown tools and unparsable
// arguments get an error result and never run.
func TestPrepare(t *testing.T) {
	for _, tc := range []struct {
		name, call, args, want string
	}{
		{"unknown tool", "nope", `{}`, "Tool nope not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermRead}
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall(tc.call, tc.args), reply("done")}}, tools: []tools.Tool{p}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				ends := eventsOf[events.ToolExecutionEnd](e.rec)
				if len(ends) != 1 || !ends[0].IsError || !strings.HasPrefix(resultText(ends[0]), tc.want) {
					t.Errorf("tool_execution_end %+v, want an error %q", ends, tc.want)
				}
				if p.runs.Load() != 0 {
					t.Error("probe ran")
				}
				if e.fp.Calls() != 2 {
					t.Errorf("%d requests, want the error result sent back to the model", e.fp.Calls())
				}
			})
		})
	}
}

// TestExecuteBatch pins execute: a batch of read-only calls runs in
// parallel; a batch with any other call runs one call at a time, in order.
func TestExecuteBatch(t *testing.T) {
	two := func(a, b string) *fake.Script {
		return &fake.Script{Responses: []fake.Response{{Steps: []fake.Step{
			{ToolCall: &fake.ToolCallSpec{Name: a, Arguments: []byte(`{"i":1}`)}},
			{ToolCall: &fake.ToolCallSpec{Name: b, Arguments: []byte(`{"i":2}`)}},
		}}, reply("done")}}
	}
	t.Run("reads run in parallel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := &probe{name: "probe", perm: tools.PermRead, block: make(chan struct{})}
			e := newEnv(t, setup{script: two("probe", "probe"), tools: []tools.Tool{p}})
			defer e.s.Close()
			l := newReplyLog(e.rec)
			e.s.Prompt("prompt", PromptInput{Message: "go"}, l.fn("go"))
			synctest.Wait()
			if got := p.runs.Load(); got != 2 {
				t.Errorf("%d of 2 read calls running at once", got)
			}
			close(p.block)
			waitIdle(t, e.s)
		})
	})
	t.Run("a write serialises the batch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &probe{name: "probe", perm: tools.PermRead, block: make(chan struct{})}
			w := &probe{name: "writer", perm: tools.PermWrite}
			e := newEnv(t, setup{script: two("probe", "writer"), tools: []tools.Tool{r, w}, mode: "full-auto"})
			defer e.s.Close()
			l := newReplyLog(e.rec)
			e.s.Prompt("prompt", PromptInput{Message: "go"}, l.fn("go"))
			synctest.Wait()
			if r.runs.Load() != 1 || w.runs.Load() != 0 {
				t.Errorf("runs read %d write %d, want the write to wait for the read", r.runs.Load(), w.runs.Load())
			}
			close(r.block)
			waitIdle(t, e.s)
			if w.runs.Load() != 1 {
				t.Error("the write never ran")
			}
			var ids []string
			for _, e := range eventsOf[events.ToolExecutionEnd](e.rec) {
				ids = append(ids, e.ToolName)
			}
			if strings.Join(ids, ",") != "probe,writer" {
				t.Errorf("results in order %q", ids)
			}
		})
	})
	t.Run("abort during a serial batch skips the rest", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &probe{name: "probe", perm: tools.PermRead, block: make(chan struct{})}
			w := &probe{name: "writer", perm: tools.PermWrite}
			e := newEnv(t, setup{script: two("probe", "writer"), tools: []tools.Tool{r, w}, mode: "full-auto"})
			defer e.s.Close()
			l := newReplyLog(e.rec)
			e.s.Prompt("prompt", PromptInput{Message: "go"}, l.fn("go"))
			synctest.Wait()
			done := make(chan struct{})
			e.s.Abort(func() { close(done) })
			<-done
			if w.runs.Load() != 0 {
				t.Error("the write ran after the abort")
			}
			var got []string
			for _, e := range eventsOf[events.ToolExecutionEnd](e.rec) {
				got = append(got, resultText(e))
			}
			if strings.Join(got, "|") != "aborted by user|aborted by user" {
				t.Errorf("results %q, want both aborted", got)
			}
			msgs, _ := e.s.Messages()
			results := 0
			for _, m := range msgs {
				if m.MessageRole() == llm.RoleToolResult {
					results++
				}
			}
			if results != 2 {
				t.Errorf("%d tool results in the context, want one per call", results)
			}
		})
	})
}

// TestAutoModeClassifier pins permit's classifier step (state.classifier):
// in auto mode a call the rules leave open goes to the model classifier,
// whose allow runs the tool without asking; its usage is recorded.
func TestAutoModeClassifier(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   string
		runs     int32
		asks     int32
		decision string // AutoDecision.Decision on tool_execution_end
	}{
		{"allow", `{"decision":"allow","reason":"harmless"}`, 1, 0, "allow"},
		{"ask", `{"decision":"ask","reason":"unsure"}`, 0, 1, "ask"},
		{"malformed answer fails closed", `sure, go ahead`, 0, 1, "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermExecute}
				a := &answer{decision: "deny"}
				e := newEnv(t, setup{mode: "auto", tools: []tools.Tool{p}, approver: a, script: &fake.Script{Responses: []fake.Response{
					toolCall("probe", `{"x":1}`), reply(tc.answer), reply("done"),
				}}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if p.runs.Load() != tc.runs || a.asks.Load() != tc.asks {
					t.Errorf("runs %d asks %d, want %d and %d", p.runs.Load(), a.asks.Load(), tc.runs, tc.asks)
				}
				ends := eventsOf[events.ToolExecutionEnd](e.rec)
				if len(ends) != 1 {
					t.Fatalf("%d tool_execution_end", len(ends))
				}
				ad, _ := ends[0].AutoDecision.(*approvals.AutoDecision)
				if ad == nil || ad.Layer != "classifier" || ad.Decision != tc.decision {
					t.Errorf("autoDecision %+v, want layer classifier decision %s", ends[0].AutoDecision, tc.decision)
				}
				var usage bool
				for _, en := range eventsOf[events.EntryAppended](e.rec) {
					usage = usage || en.Entry.Type == store.TypeUsage
				}
				if !usage {
					t.Error("the classifier request's usage was not recorded")
				}
			})
		})
	}
}

package session

// Plan mode: the proposal (planAfterTurn, propose), the responses
// (PlanResponse, planResponse, approve) and the unattended rule.

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/plan"
)

const proposal = "Here is the plan.\n<proposed_plan>\n# Fix\n1. Read the code\n2. Fix the bug\n</proposed_plan>"

// proposed starts a session, enters plan mode from prePlan and runs one
// prompt whose reply proposes a plan; it returns the env and the plan id.
func proposed(t *testing.T, prePlan string, attended bool, settings Settings, more ...fake.Response) (*env, string) {
	t.Helper()
	script := &fake.Script{Responses: append([]fake.Response{reply(proposal)}, more...)}
	e := newEnv(t, setup{script: script, mode: prePlan, settings: settings})
	e.s.SetPlanAttended(attended)
	if _, err := e.s.SetPermissionMode("plan"); err != nil {
		t.Fatal(err)
	}
	e.rec.reset()
	e.runPrompt(t, "make a plan")
	pp := eventsOf[events.PlanProposed](e.rec)
	if len(pp) != 1 {
		t.Fatalf("%d plan_proposed, want 1: %s", len(pp), joinTypes(e.rec.types()))
	}
	return e, pp[0].PlanID
}

// respond sends a plan response and waits until the session is idle.
func respond(t *testing.T, e *env, d PlanDecision) (PlanOutcome, error) {
	t.Helper()
	type res struct {
		o   PlanOutcome
		err error
	}
	ch := make(chan res, 1)
	e.s.PlanResponse(d, func(o PlanOutcome, err error) { e.rec.add(mark("plan")); ch <- res{o, err} })
	waitIdle(t, e.s)
	r := <-ch
	return r.o, r.err
}

func TestPlanProposal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, id := proposed(t, "default", true, Settings{})
		defer e.s.Close()
		pp := eventsOf[events.PlanProposed](e.rec)[0]
		if pp.Version != 1 || len(pp.Steps) != 2 || pp.Markdown != "# Fix\n1. Read the code\n2. Fix the bug" {
			t.Errorf("plan_proposed %+v", pp)
		}
		if _, err := os.Stat(pp.FilePath); err != nil {
			t.Errorf("plan file: %v", err)
		}
		p, err := e.s.Plan("")
		if err != nil || p == nil || p.ID != id || p.Status != plan.StatusProposed {
			t.Errorf("Plan() = %+v, %v; want the awaiting plan", p, err)
		}
		if e.rec.count("plan_resolved") != 0 || e.fp.Calls() != 1 {
			t.Error("an attended proposal was resolved without an answer")
		}
		// The plan-mode reminder went to the model before the prompt's reply.
		if msgs, _ := e.s.Messages(); len(msgs) < 3 {
			t.Errorf("context %d messages, want user, reminder and reply", len(msgs))
		}
	})
}

func TestPlanResponse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        PlanDecision // PlanID filled in
		err      error
		calls    int      // model requests in all
		mode     string   // permission mode afterwards
		users    []string // user messages of the response's run
		status   plan.Status
		fresh    bool
		resolved string
	}{
		{name: "approve", d: PlanDecision{Decision: "approve"}, calls: 2, mode: "default",
			users: []string{"plan:" + plan.ApprovedUserText}, status: plan.StatusApproved, resolved: "approve"},
		{name: "approve into a mode", d: PlanDecision{Decision: "approve", Mode: "auto-edit"}, calls: 2, mode: "auto-edit",
			users: []string{"plan:" + plan.ApprovedUserText}, status: plan.StatusApproved, resolved: "approve"},
		{name: "reject", d: PlanDecision{Decision: "reject"}, calls: 1, mode: "plan", status: plan.StatusRejected, resolved: "reject"},
		{name: "revise with feedback", d: PlanDecision{Decision: "revise", Feedback: "smaller steps"}, calls: 2, mode: "plan",
			users: []string{":smaller steps"}, status: plan.StatusProposed, resolved: "revise"},
		{name: "revise without feedback", d: PlanDecision{Decision: "revise"}, calls: 1, mode: "plan", status: plan.StatusProposed, resolved: "revise"},
		{name: "approve fresh", d: PlanDecision{Decision: "approve_fresh"}, calls: 1, mode: "default", status: plan.StatusApproved, fresh: true, resolved: "approve_fresh"},
		{name: "unknown decision", d: PlanDecision{Decision: "maybe"}, err: ErrInvalidArguments, calls: 1, mode: "plan", status: plan.StatusProposed},
		{name: "bad mode", d: PlanDecision{Decision: "approve", Mode: "yolo"}, err: ErrInvalidArguments, calls: 1, mode: "plan", status: plan.StatusProposed},
		{name: "unknown plan", d: PlanDecision{PlanID: "other", Decision: "approve"}, err: ErrPlanNotFound, calls: 1, mode: "plan", status: plan.StatusProposed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, id := proposed(t, "default", true, Settings{}, reply("working"))
				defer e.s.Close()
				d := tc.d
				if d.PlanID == "" {
					d.PlanID = id
				}
				e.rec.reset()
				out, err := respond(t, e, d)
				if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
					t.Fatalf("PlanResponse error %v, want %v", err, tc.err)
				}
				if tc.err == nil && (out.PlanID != id || out.Decision != d.Decision || (out.Fresh != nil) != tc.fresh) {
					t.Errorf("outcome %+v", out)
				}
				if tc.fresh && (out.Fresh.Mode != tc.mode || out.Fresh.Plan.Status != plan.StatusApproved) {
					t.Errorf("fresh plan %+v", out.Fresh)
				}
				if got := e.fp.Calls(); got != tc.calls {
					t.Errorf("%d model requests, want %d", got, tc.calls)
				}
				if st, _ := e.s.State(); st.PermissionMode != tc.mode {
					t.Errorf("mode %q, want %q", st.PermissionMode, tc.mode)
				}
				if got := userTexts(e.rec); !slices.Equal(got, tc.users) {
					t.Errorf("user messages %q, want %q", got, tc.users)
				}
				if p, _ := e.s.Plan(id); p == nil || p.Status != tc.status {
					t.Errorf("plan %+v, want status %s", p, tc.status)
				}
				res := eventsOf[events.PlanResolved](e.rec)
				if tc.resolved == "" && len(res) != 0 || tc.resolved != "" && (len(res) != 1 || res[0].Decision != tc.resolved) {
					t.Errorf("plan_resolved %+v, want %q", res, tc.resolved)
				}
				// A response that starts a run answers before the run starts.
				if ts := e.rec.types(); len(tc.users) > 0 && indexOf(ts, "mark:plan", 0) > indexOf(ts, "before_agent_start", 0) {
					t.Errorf("the response is answered after its run started: %s", joinTypes(ts))
				}
				if tc.status == plan.StatusApproved && !tc.fresh {
					if todos := e.s.Todos(); len(todos) != 2 {
						t.Errorf("%d todos from the approved plan's steps, want 2", len(todos))
					}
					if _, err := respond(t, e, d); !errors.Is(err, ErrPlanNotFound) {
						t.Errorf("second answer to the same plan: %v, want ErrPlanNotFound", err)
					}
				}
			})
		})
	}
}

// TestPlanUnattended pins propose's unattended rule: without a client that
// answers plans, "approve" approves at once and the hand-off continues the
// same run; the default leaves the plan waiting.
func TestPlanUnattended(t *testing.T) {
	t.Run("approve", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e, _ := proposed(t, "default", false, Settings{PlanUnattended: "approve"}, reply("working"))
			defer e.s.Close()
			if e.fp.Calls() != 2 || e.rec.count("agent_settled") != 1 {
				t.Errorf("%d requests, %d settles; want the hand-off in the same run", e.fp.Calls(), e.rec.count("agent_settled"))
			}
			if got := userTexts(e.rec); !slices.Equal(got, []string{":make a plan", "plan:" + plan.ApprovedUserText}) {
				t.Errorf("user messages %q", got)
			}
			if st, _ := e.s.State(); st.PermissionMode != "default" {
				t.Errorf("mode %q after the unattended approval", st.PermissionMode)
			}
		})
	})
	t.Run("stop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e, id := proposed(t, "default", false, Settings{})
			defer e.s.Close()
			if p, _ := e.s.Plan(id); p.Status != plan.StatusProposed || e.fp.Calls() != 1 {
				t.Errorf("plan %s after %d requests, want it waiting", p.Status, e.fp.Calls())
			}
		})
	})
}

// TestPlanNotProposed pins planAfterTurn: outside plan mode, or with a
// reply without a complete block, nothing is proposed.
func TestPlanNotProposed(t *testing.T) {
	for _, tc := range []struct{ name, mode, text string }{
		{"outside plan mode", "default", proposal},
		{"open block", "plan", "<proposed_plan>\n1. x\n"},
		{"blank block", "plan", "<proposed_plan>\n\n</proposed_plan>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{reply(tc.text)}}, mode: tc.mode})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if n := e.rec.count("plan_proposed"); n != 0 {
					t.Errorf("%d plan_proposed", n)
				}
			})
		})
	}
}

// TestAdoptPlan pins AdoptPlan: the fresh session records the plan and its
// todos and starts a run whose first user message hands the plan over.
func TestAdoptPlan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, id := proposed(t, "default", true, Settings{})
		defer e.s.Close()
		out, err := respond(t, e, PlanDecision{PlanID: id, Decision: "approve_fresh"})
		if err != nil || out.Fresh == nil {
			t.Fatalf("approve_fresh %+v %v", out, err)
		}
		f := newEnv(t, setup{})
		defer f.s.Close()
		done := make(chan error, 1)
		f.s.AdoptPlan(*out.Fresh, func(err error) { f.rec.add(mark("adopted")); done <- err })
		waitIdle(t, f.s)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if p, _ := f.s.Plan(id); p == nil || p.Status != plan.StatusApproved {
			t.Errorf("adopted plan %+v", p)
		}
		if len(f.s.Todos()) != 2 {
			t.Errorf("todos %+v", f.s.Todos())
		}
		users := userTexts(f.rec)
		if len(users) != 1 || !strings.HasPrefix(users[0], "plan:") || !strings.Contains(users[0], "Read the code") {
			t.Errorf("hand-off message %q", users)
		}
		if ts := f.rec.types(); indexOf(ts, "mark:adopted", 0) != indexOf(ts, "turn_start", 0)+1 {
			t.Errorf("AdoptPlan is not answered right after the first turn_start: %s", joinTypes(ts))
		}
	})
}

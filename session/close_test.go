package session

// Close and the actor's mailbox (Session.Close, loop, post, call, exec):
// commands queued before Close are answered, runs waiting to start fail
// with ErrClosed, everything after Close fails fast, and the actor exits
// (the synctest bubble would report a leaked or stuck goroutine).

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/plan"
)

// TestCloseDuringRun pins Close: it aborts the run, returns once the run
// has settled (exactly one agent_settled) and leaves a closed session.
func TestCloseDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Hour)}}})
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "hi"}, l.fn("prompt"))
		synctest.Wait()
		e.s.Close()
		ts := e.rec.types()
		if ts[len(ts)-1] != "agent_settled" || e.rec.count("agent_settled") != 1 {
			t.Errorf("Close returned before the run settled: %s", joinTypes(ts))
		}
		if end := eventsOf[events.AgentEnd](e.rec); len(end) != 1 || end[0].StopReason != llm.StopAborted {
			t.Errorf("agent_end %+v, want aborted", end)
		}
		select {
		case <-e.s.done:
		default:
			t.Error("the actor is still running after Close")
		}
		e.s.Close() // idempotent
	})
}

// TestClosedSession pins post's refusal after Close: every command answers
// ErrClosed (or its closed form) at once.
func TestClosedSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		e.s.Close()
		s := e.s
		l := newReplyLog(e.rec)
		s.Prompt("prompt", PromptInput{Message: "hi"}, l.fn("prompt"))
		if r := l.next(t); !errors.Is(r.err, ErrClosed) {
			t.Errorf("Prompt after Close: %v %v", r.d, r.err)
		}
		if _, err := s.State(); !errors.Is(err, ErrClosed) {
			t.Errorf("State after Close: %v", err)
		}
		if err := s.do(func(*state) { t.Error("a closure ran after Close") }); !errors.Is(err, ErrClosed) {
			t.Errorf("do after Close: %v", err)
		}
		aborted := false
		s.Abort(func() { aborted = true })
		if !aborted {
			t.Error("Abort after Close did not answer")
		}
		var retry *bool
		s.AbortRetry(func(b bool) { retry = &b })
		if retry == nil || *retry {
			t.Error("AbortRetry after Close did not answer false")
		}
		var compactErr error
		s.Compact("", func(_ CompactionResult, err error) { compactErr = err })
		if !errors.Is(compactErr, ErrClosed) {
			t.Errorf("Compact after Close: %v", compactErr)
		}
		var planErr error
		s.PlanResponse(PlanDecision{PlanID: "x", Decision: "approve"}, func(_ PlanOutcome, err error) { planErr = err })
		if !errors.Is(planErr, ErrClosed) {
			t.Errorf("PlanResponse after Close: %v", planErr)
		}
		var adoptErr error
		s.AdoptPlan(FreshPlan{Plan: plan.Plan{ID: "p"}}, func(err error) { adoptErr = err })
		if !errors.Is(adoptErr, ErrClosed) {
			t.Errorf("AdoptPlan after Close: %v", adoptErr)
		}
		if err := s.WaitIdle(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("WaitIdle after Close: %v", err)
		}
		s.Close()
	})
}

// TestCloseDrainsMailbox pins Close and loop's final drain: commands that
// were queued before Close still run and answer; a run that was waiting to
// start (an interrupt) fails with ErrClosed; a run asked for once Close
// has begun (AdoptPlan) fails with ErrClosed; no further model request is
// made. (A plain prompt in that window answers ErrBusy, as the aborted run
// has not settled yet.)
func TestCloseDrainsMailbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Hour), reply("never")}}})
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
		synctest.Wait()
		release := holdActor(t, e.s)
		e.s.Prompt("steer", PromptInput{Message: "s"}, l.fn("steer"))
		e.s.Prompt("prompt", PromptInput{Message: "i", Interrupt: true}, l.fn("interrupt"))
		closed := make(chan struct{})
		go func() { e.s.Close(); close(closed) }()
		synctest.Wait() // Close has posted its command and waits
		e.s.Prompt("prompt", PromptInput{Message: "late"}, l.fn("late"))
		adopted := make(chan error, 1)
		e.s.AdoptPlan(FreshPlan{Plan: plan.Plan{ID: "p", Markdown: "1. x"}}, func(err error) { adopted <- err })
		release()
		<-closed
		want := map[string]error{"first": nil, "steer": nil, "interrupt": ErrClosed, "late": ErrBusy}
		for range len(want) {
			r := l.next(t)
			w, ok := want[r.name]
			if !ok {
				t.Fatalf("unexpected reply %s", r.name)
			}
			delete(want, r.name)
			if !errors.Is(r.err, w) || (w == nil) != (r.err == nil) {
				t.Errorf("%s: %v %v, want %v", r.name, r.d, r.err, w)
			}
		}
		l.none(t)
		if err := <-adopted; !errors.Is(err, ErrClosed) {
			t.Errorf("AdoptPlan once Close began: %v, want ErrClosed", err)
		}
		if e.fp.Calls() != 1 {
			t.Errorf("%d model requests, want 1 (nothing starts once Close began)", e.fp.Calls())
		}
		if n := e.rec.count("agent_settled"); n != 1 {
			t.Errorf("%d agent_settled, want 1", n)
		}
	})
}

// TestCommandPanic pins exec and call: a panicking command yields
// ErrInternal to its caller and the actor keeps serving.
func TestCommandPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		defer e.s.Close()
		_, err := call(e.s, func(*state) int { panic("boom") })
		if !errors.Is(err, ErrInternal) {
			t.Errorf("call of a panicking command: %v, want ErrInternal", err)
		}
		if _, err := e.s.State(); err != nil {
			t.Errorf("the actor died with the command: %v", err)
		}
		if r := e.runPrompt(t, "still here"); r.d != Started {
			t.Errorf("prompt after a panic: %v %v", r.d, r.err)
		}
	})
}

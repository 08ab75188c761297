package session

// Runs through the actor: prompt replies and event order, busy handling,
// queue modes (steer, follow-up), interrupt coalescing, abort and close.
// Every test runs in a synctest bubble; a slow scripted reply keeps a run
// mid-stream until the fake clock passes its delay, which only happens
// once every goroutine (the test included) is blocked.

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
)

// TestPromptLifecycle pins Session.Prompt / state.startRun / runLoop: the
// reply comes right after the first turn_start, before the user message,
// and the run ends with agent_end, agent_before_settle, agent_settled.
func TestPromptLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{reply("hello")}}})
		defer e.s.Close()
		r := e.runPrompt(t, "hi")
		if r.d != Started || r.err != nil {
			t.Fatalf("reply %v %v, want started", r.d, r.err)
		}
		ts := e.rec.types()
		want := []string{"before_agent_start", "agent_start", "turn_start", "mark:prompt", "message_start", "message_end",
			"message_start", "message_update", "message_end", "turn_end", "agent_end", "agent_before_settle", "agent_settled"}
		if !subsequence(ts, want) {
			t.Fatalf("events\n%s\nlack the order\n%s", joinTypes(ts), joinTypes(want))
		}
		if i := indexOf(ts, "turn_start", 0); ts[i+1] != "mark:prompt" {
			t.Errorf("the prompt reply is not right after the first turn_start: %s", joinTypes(ts))
		}
		if ts[len(ts)-1] != "agent_settled" || e.rec.count("agent_settled") != 1 {
			t.Errorf("the run does not end with exactly one agent_settled: %s", joinTypes(ts))
		}
		if got := eventsOf[events.BeforeAgentStart](e.rec)[0].Prompt; got != "hi" {
			t.Errorf("before_agent_start prompt %q", got)
		}
		a := assistantEnds(e.rec)
		if len(a) != 1 || a[0].Text("") != "hello" {
			t.Fatalf("assistant messages %v", a)
		}
		if end := eventsOf[events.AgentEnd](e.rec)[0]; end.StopReason != llm.StopStop {
			t.Errorf("agent_end stopReason %q", end.StopReason)
		}
		if busy, _ := e.s.Busy(); busy {
			t.Error("busy after settling")
		}
		msgs, _ := e.s.Messages()
		if len(msgs) != 2 {
			t.Errorf("context holds %d messages, want user and assistant", len(msgs))
		}
	})
}

// TestPromptWhileBusy pins state.prompt's dispatch while a run is active.
func TestPromptWhileBusy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     PromptKind
		in       PromptInput
		want     Disposition
		err      error
		steering int
		followUp int
	}{
		{"plain prompt is busy", "prompt", PromptInput{Message: "x"}, "", ErrBusy, 0, 0},
		{"unknown streamingBehavior", "prompt", PromptInput{Message: "x", StreamingBehavior: "later"}, "", ErrInvalidArguments, 0, 0},
		{"streamingBehavior steer", "prompt", PromptInput{Message: "x", StreamingBehavior: "steer"}, Queued, nil, 1, 0},
		{"streamingBehavior followUp", "prompt", PromptInput{Message: "x", StreamingBehavior: "followUp"}, Queued, nil, 0, 1},
		{"steer command", "steer", PromptInput{Message: "x"}, Queued, nil, 1, 0},
		{"follow_up command", "follow_up", PromptInput{Message: "x"}, Queued, nil, 0, 1},
		{"the command kind wins over streamingBehavior", "follow_up", PromptInput{Message: "x", StreamingBehavior: "steer"}, Queued, nil, 0, 1},
		{"interrupt without anything to say", "prompt", PromptInput{Interrupt: true}, "", ErrInvalidArguments, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Second)}}})
				defer e.s.Close()
				l := newReplyLog(e.rec)
				e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
				synctest.Wait() // the run is waiting mid-stream
				if r := l.next(t); r.d != Started {
					t.Fatalf("first prompt: %v %v", r.d, r.err)
				}
				e.s.Prompt(tc.kind, tc.in, l.fn("second"))
				synctest.Wait()
				r := l.next(t)
				if r.d != tc.want || !errors.Is(r.err, tc.err) || (tc.err == nil) != (r.err == nil) {
					t.Fatalf("second reply %q %v, want %q %v", r.d, r.err, tc.want, tc.err)
				}
				st, _ := e.s.State()
				if !st.IsStreaming || st.PendingMessageCount != tc.steering+tc.followUp {
					t.Errorf("state streaming %v pending %d", st.IsStreaming, st.PendingMessageCount)
				}
				if tc.want == Queued {
					qu := eventsOf[events.QueueUpdate](e.rec)
					if len(qu) == 0 || len(qu[len(qu)-1].Steering) != tc.steering || len(qu[len(qu)-1].FollowUp) != tc.followUp {
						t.Errorf("queue_update %+v, want %d steering %d follow-up", qu, tc.steering, tc.followUp)
					}
					if ts := e.rec.types(); ts[len(ts)-1] != "mark:second" || ts[len(ts)-2] != "queue_update" {
						t.Errorf("Queued is not answered right after queue_update: %s", joinTypes(ts))
					}
				}
			})
		})
	}
}

// TestQueueModes pins runLoop and turns: steering joins the run after the
// current turn, follow-ups when it would stop; one-at-a-time delivers one
// message per turn, all delivers the whole queue at once. Either way the
// run settles once.
func TestQueueModes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  PromptKind // KindSteer or KindFollowUp
		mode  QueueMode
		calls int      // model requests
		users []string // user messages in order (origin:text)
	}{
		{"steer one at a time", "steer", "one-at-a-time", 3, []string{":first", "steer:s1", "steer:s2"}},
		{"steer all", "steer", "all", 2, []string{":first", "steer:s1", "steer:s2"}},
		{"follow-up one at a time", "follow_up", "one-at-a-time", 3, []string{":first", "followUp:s1", "followUp:s2"}},
		{"follow-up all", "follow_up", "all", 2, []string{":first", "followUp:s1", "followUp:s2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Second)}}})
				defer e.s.Close()
				which := QueueSteer
				if tc.kind == KindFollowUp {
					which = QueueFollowUp
				}
				if _, err := e.s.SetQueueMode(which, tc.mode); err != nil {
					t.Fatal(err)
				}
				l := newReplyLog(e.rec)
				e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
				synctest.Wait()
				e.s.Prompt(tc.kind, PromptInput{Message: "s1"}, l.fn("s1"))
				e.s.Prompt(tc.kind, PromptInput{Message: "s2"}, l.fn("s2"))
				waitIdle(t, e.s)
				for _, name := range []string{"first", "s1", "s2"} {
					if r := l.next(t); r.name != name || r.err != nil {
						t.Fatalf("reply %s: %v %v", r.name, r.d, r.err)
					}
				}
				if got := e.fp.Calls(); got != tc.calls {
					t.Errorf("%d model requests, want %d", got, tc.calls)
				}
				if got := userTexts(e.rec); !slices.Equal(got, tc.users) {
					t.Errorf("user messages %q, want %q", got, tc.users)
				}
				if n := e.rec.count("agent_settled"); n != 1 {
					t.Errorf("%d agent_settled, want 1 (queued messages continue the run)", n)
				}
				if n := e.rec.count("agent_start"); n != 1 {
					t.Errorf("%d agent_start, want 1", n)
				}
				if st, _ := e.s.State(); st.PendingMessageCount != 0 {
					t.Errorf("%d messages still queued", st.PendingMessageCount)
				}
			})
		})
	}
}

// TestSteerBeforeFollowUp pins the delivery order of runLoop when both
// queues hold messages: steering first, follow-ups after.
func TestSteerBeforeFollowUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Second)}}})
		defer e.s.Close()
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
		synctest.Wait()
		e.s.Prompt("follow_up", PromptInput{Message: "f"}, l.fn("f"))
		e.s.Prompt("steer", PromptInput{Message: "s"}, l.fn("s"))
		waitIdle(t, e.s)
		if got, want := userTexts(e.rec), []string{":first", "steer:s", "followUp:f"}; !slices.Equal(got, want) {
			t.Errorf("user messages %q, want %q", got, want)
		}
	})
}

// TestInterruptCoalescing pins state.interruptRun: interrupts that arrive
// before the aborted run has settled start one run together, whose prompt
// is the queued steering followed by each interrupt's message; every
// interrupt is answered Started once that run has started.
func TestInterruptCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Hour), reply("after")}}})
		defer e.s.Close()
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
		synctest.Wait()
		e.s.Prompt("steer", PromptInput{Message: "s1"}, l.fn("s1"))
		// Both interrupts are in the mailbox before the runner can settle.
		release := holdActor(t, e.s)
		e.s.Prompt("prompt", PromptInput{Message: "i1", Interrupt: true}, l.fn("i1"))
		e.s.Prompt("prompt", PromptInput{Message: "i2", Interrupt: true}, l.fn("i2"))
		release()
		waitIdle(t, e.s)
		var names []string
		for range 4 {
			r := l.next(t)
			names = append(names, r.name)
			if r.err != nil {
				t.Errorf("%s: %v", r.name, r.err)
			}
			if (r.name == "i1" || r.name == "i2") && r.d != Started {
				t.Errorf("%s answered %q, want started", r.name, r.d)
			}
		}
		l.none(t)
		if want := []string{"first", "s1", "i1", "i2"}; !slices.Equal(names, want) {
			t.Errorf("replies %q, want %q", names, want)
		}
		if n := e.rec.count("agent_settled"); n != 2 {
			t.Errorf("%d agent_settled, want 2 (the aborted run and one interrupt run)", n)
		}
		ends := eventsOf[events.AgentEnd](e.rec)
		if len(ends) != 2 || ends[0].StopReason != llm.StopAborted || ends[1].StopReason != llm.StopStop {
			t.Errorf("agent_end %+v, want aborted then stop", ends)
		}
		prompts := eventsOf[events.BeforeAgentStart](e.rec)
		if len(prompts) != 2 || prompts[1].Prompt != "s1\n\ni1\n\ni2" {
			t.Errorf("before_agent_start %+v, want the joined interrupt prompt", prompts)
		}
		if got, want := userTexts(e.rec), []string{":first", "interrupt:s1\n\ni1\n\ni2"}; !slices.Equal(got, want) {
			t.Errorf("user messages %q, want %q", got, want)
		}
		// The replies of i1 and i2 come after the new run's first turn_start.
		ts := e.rec.types()
		if i, j := indexOf(ts, "turn_start", 1), indexOf(ts, "mark:i1", 0); i < 0 || j < i || indexOf(ts, "agent_settled", 0) > i {
			t.Errorf("interrupt replies are not due at the new run's first turn_start: %s", joinTypes(ts))
		}
		if e.fp.Calls() != 2 {
			t.Errorf("%d model requests, want 2", e.fp.Calls())
		}
	})
}

// TestInterruptTakesSteeringOnly pins interruptRun: an interrupt with no
// message of its own starts from the steering queue; follow-ups stay.
func TestInterruptTakesSteeringOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Hour), slow(time.Hour)}}})
		defer e.s.Close()
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
		synctest.Wait()
		e.s.Prompt("steer", PromptInput{Message: "s"}, l.fn("s"))
		e.s.Prompt("follow_up", PromptInput{Message: "f"}, l.fn("f"))
		e.s.Prompt("prompt", PromptInput{Interrupt: true}, l.fn("i"))
		synctest.Wait() // the interrupt run is mid-stream
		for range 4 {
			if r := l.next(t); r.err != nil {
				t.Fatalf("%s: %v", r.name, r.err)
			}
		}
		st, _ := e.s.State()
		if st.PendingMessageCount != 1 {
			t.Errorf("%d queued, want the follow-up only", st.PendingMessageCount)
		}
		if got := eventsOf[events.BeforeAgentStart](e.rec); len(got) != 2 || got[1].Prompt != "s" {
			t.Errorf("interrupt run prompt %+v, want the steering text", got)
		}
	})
}

// TestAbort pins Session.Abort: the run ends aborted, done is called after
// agent_settled, and the queues are kept.
func TestAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Hour)}}})
		defer e.s.Close()
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "first"}, l.fn("first"))
		synctest.Wait()
		e.s.Prompt("follow_up", PromptInput{Message: "later"}, l.fn("f"))
		done := make(chan struct{})
		e.s.Abort(func() { e.rec.add(mark("aborted")); close(done) })
		<-done
		ts := e.rec.types()
		if ts[len(ts)-1] != "mark:aborted" || ts[len(ts)-2] != "agent_settled" {
			t.Errorf("abort is not answered right after agent_settled: %s", joinTypes(ts))
		}
		if end := eventsOf[events.AgentEnd](e.rec); len(end) != 1 || end[0].StopReason != llm.StopAborted {
			t.Errorf("agent_end %+v, want aborted", end)
		}
		a := assistantEnds(e.rec)
		if len(a) != 1 || a[0].StopReason != llm.StopAborted || a[0].Text("") != "a" {
			t.Errorf("assistant %+v, want the partial reply, aborted", a)
		}
		steer, follow, err := e.s.ClearQueue()
		if err != nil || len(steer) != 0 || !slices.Equal(follow, []string{"later"}) {
			t.Errorf("ClearQueue = %q %q %v, want the follow-up kept by the abort", steer, follow, err)
		}
		// Abort while idle answers at once.
		idle := make(chan struct{})
		e.s.Abort(func() { close(idle) })
		<-idle
	})
}

// TestPromptDuringSettleIsBusy pins state.prompt: a plain prompt that
// arrives after an abort but before the run settled is busy (only
// interrupts, plan approvals and AdoptPlan wait for the settle); once idle
// a prompt starts a new run.
func TestPromptDuringSettleIsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Hour), reply("two")}}})
		defer e.s.Close()
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "one"}, l.fn("one"))
		synctest.Wait()
		release := holdActor(t, e.s)
		e.s.Abort(func() {})
		e.s.Prompt("prompt", PromptInput{Message: "two"}, l.fn("two"))
		release()
		waitIdle(t, e.s)
		l.next(t)
		if r := l.next(t); !errors.Is(r.err, ErrBusy) {
			t.Errorf("prompt during the settle of an aborted run: %v %v, want ErrBusy", r.d, r.err)
		}
		if r := e.runPrompt(t, "three"); r.d != Started {
			t.Errorf("prompt once idle: %v %v", r.d, r.err)
		}
	})
}

// TestQueuedOriginJoinsRun pins what a queued message with its own origin
// (a host adapter's messages.sendUser while a run is active) is: it keeps
// its origin on the message (host-api §4.7), a follow-up as much as a
// steer, but it joined the run, so it is no rewind point; the same message
// sent while idle starts a run and is one.
func TestQueuedOriginJoinsRun(t *testing.T) {
	for _, which := range []Queue{QueueSteer, QueueFollowUp} {
		t.Run(string(which), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{slow(time.Second)}}})
				defer e.s.Close()
				l := newReplyLog(e.rec)
				e.s.Prompt(KindPrompt, PromptInput{Message: "first"}, l.fn("first"))
				synctest.Wait()
				e.s.Prompt(KindPrompt, PromptInput{Message: "queued", StreamingBehavior: which, Origin: llm.OriginHost}, l.fn("queued"))
				waitIdle(t, e.s)
				e.s.Prompt(KindPrompt, PromptInput{Message: "idle", StreamingBehavior: QueueSteer, Origin: llm.OriginHost}, l.fn("idle"))
				waitIdle(t, e.s)
				if got, want := userTexts(e.rec), []string{":first", "host:queued", "host:idle"}; !slices.Equal(got, want) {
					t.Errorf("user messages %q, want %q", got, want)
				}
				pts, err := e.s.RewindPoints()
				if err != nil {
					t.Fatal(err)
				}
				var texts []string
				for _, p := range pts {
					texts = append(texts, p.Text)
				}
				if want := []string{"first", "idle"}; !slices.Equal(texts, want) {
					t.Errorf("rewind points %q, want %q", texts, want)
				}
			})
		})
	}
}

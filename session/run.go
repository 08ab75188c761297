package session

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/llm"
)

// runState is the active run of a session (nil when idle).
type runState struct {
	kind         string // runAgent, runCompact, runSummary
	ctx          context.Context
	cancel       context.CancelFunc
	retrying     bool               // waiting before a retry
	cancelRetry  context.CancelFunc // ends that wait (abort_retry)
	retryAborted []func(bool)       // abort_retry replies due when the wait ends
	failure      string             // error text of the reply that failed the run (notification)

	turns    int            // turns so far in this run
	cost     float64        // USD spent by this run's replies
	calls    map[string]int // identical tool calls in this run
	warning  string         // agent_settled warning (limit_reached, repeated_tool_call)
	stopping bool           // a limit ended the run: no further turn

	// resume is the parked batch a continuation run executes instead of
	// its first model request (durable.go); parked: a deferred ask parked
	// this run's batch, the run settles waiting.
	resume *resumeBatch
	parked bool

	hookStop          atomic.Bool // a hook returned continue:false
	stopContinuations int         // runs a Stop hook added to this prompt
}

// input is a message that starts or continues a run.
type input struct {
	msg    llm.Message
	newRun bool // the user message starts a new turn (a rewind point)
}

// startRun begins a run on a new runner goroutine. onStarted is called
// right after the first turn_start (before the user message), which is when
// the prompt command answers. Runs never overlap: while one is active the
// new one waits for it to settle; onFail (may be nil) is told when the
// session closes first.
func (st *state) startRun(prompt string, first []input, onStarted func(), onFail func(error)) {
	if onFail == nil {
		onFail = func(error) {}
	}
	switch {
	case st.closing:
		onFail(ErrClosed)
		return
	case st.run != nil:
		st.starts = append(st.starts, pendingStart{
			start: func() { st.startRun(prompt, first, onStarted, onFail) },
			fail:  onFail,
		})
		return
	}
	// A parked batch (durable approvals) is closed before a new run: its
	// open requests are denied as superseded.
	st.supersede()
	// The file is created (and the entries that waited for it announced)
	// before the run's first event: a run always leads to a model request.
	st.ensureFile()
	st.refreshHost() // instructions a host adapter added since the last prompt
	ctx, cancel := context.WithCancel(context.Background())
	r := &runState{ctx: ctx, cancel: cancel, kind: runAgent}
	st.run = r
	go st.s.runLoop(r, prompt, first, onStarted, onFail)
}

// Kinds of work that occupy a session.
const (
	runAgent   = "agent"
	runCompact = "compaction"
	runSummary = "summary"
)

// abortRun cancels the active run, if any.
func (st *state) abortRun() {
	if st.run != nil {
		st.run.cancel()
	}
}

// runLoop is the runner goroutine of one run.
func (s *Session) runLoop(r *runState, prompt string, pending []input, onStarted func(), onFail func(error)) {
	defer r.cancel()
	if r.resume == nil { // a continuation has no prompt of its own
		var err error
		pending, prompt, err = s.promptHook(r, prompt, pending)
		if err != nil {
			_ = s.do(func(st *state) { st.settled() })
			onFail(err)
			return
		}
	}
	s.publish(events.BeforeAgentStart{Prompt: prompt})
	s.publish(events.AgentStart{})
	var stop string
	for {
		stop = s.turns(r, pending, &onStarted)
		// Decide on the actor whether queued messages continue the run or
		// the run settles; doing both in one step means a message queued
		// at the last moment is never stranded.
		next, err := call(s, func(st *state) []input {
			if stop != llm.StopAborted && stop != llm.StopError && !r.stopping {
				if q := takeQueue(&st.steering, st.steeringMode); len(q) > 0 {
					st.queueUpdate()
					return userInputs(q, llm.OriginSteer, st.nowMs())
				}
				if q := takeQueue(&st.followUp, st.followUpMode); len(q) > 0 {
					st.queueUpdate()
					return userInputs(q, llm.OriginFollowUp, st.nowMs())
				}
			}
			s.publish(events.AgentEnd{StopReason: stop, WillRetry: false})
			if stop == llm.StopError && r.failure != "" {
				// The prompt was answered when the run started: a failure
				// after that is reported as a notification (protocol §1.5).
				s.publish(events.Notification{Level: "error", Message: r.failure})
			}
			s.publish(events.AgentBeforeSettle{})
			if s.deps.Hooks.Has(hooks.Stop) {
				return []input{} // settle after the Stop hooks
			}
			s.settle(st, r, stop)
			return nil
		})
		if err != nil || next == nil {
			return
		}
		if len(next) == 0 {
			if next = s.stopHook(r, stop); next != nil {
				s.publish(events.AgentStart{})
			} else if next, err = call(s, func(st *state) []input { return s.settleOrContinue(st, r, stop) }); err != nil || next == nil {
				return
			}
		}
		pending = next
	}
}

func userInputs(q []queued, origin llm.Origin, ts int64) []input {
	out := make([]input, 0, len(q))
	for _, m := range q {
		o := origin
		if m.origin != "" {
			o = m.origin
		}
		out = append(out, input{msg: userMessage(m.text, m.images, o, ts)})
		if m.after != nil {
			out = append(out, input{msg: m.after})
		}
	}
	return out
}

// userMessage builds a user message; images turn the content into blocks.
func userMessage(text string, images []*llm.ImageContent, origin llm.Origin, ts int64) *llm.UserMessage {
	if len(images) == 0 {
		return llm.NewUser(text, ts, origin)
	}
	blocks := []llm.Content{llm.Text(text)}
	for _, im := range images {
		blocks = append(blocks, im)
	}
	return &llm.UserMessage{Role: llm.RoleUser, Content: llm.BlockContent(blocks...), Timestamp: ts, Origin: origin}
}

// turns runs turns until the model stops without tool calls and no steering
// message is waiting. It returns the stop reason of the last reply.
func (s *Session) turns(r *runState, pending []input, onStarted *func()) string {
	for {
		s.publish(events.TurnStart{})
		if f := *onStarted; f != nil {
			*onStarted = nil
			f()
		}
		// The inputs are appended by the same actor call that decides on
		// compaction and takes the request snapshot (replyOnce).
		var tr turnReply
		if b := r.resume; b != nil { // the parked batch is this turn's reply
			tr = turnReply{msg: b.msg}
		} else {
			tr = s.reply(r, pending)
		}
		if tr.closed {
			return llm.StopAborted
		}
		// The messages are on the branch now (a huge prompt's text shared
		// with its entry): the closure's variable must not pin the
		// originals for the rest of the run.
		pending = nil
		msg := tr.msg
		results, terminate := s.runTools(r, msg)
		r.resume = nil
		s.publish(events.TurnEnd{Message: msg, ToolResults: results})
		tr.trace.Permissions, tr.trace.PermissionsDropped = s.perm.pending.Take()
		if r.parked {
			_ = s.do(func(st *state) { st.afterTurn(tr, len(msg.ToolCalls())) })
			r.warning, r.stopping = warningWaiting, true
			return msg.StopReason
		}
		_ = s.do(func(st *state) { st.afterTurn(tr, len(results)) })
		if msg.Failed() {
			if msg.StopReason == llm.StopError {
				r.failure = msg.ErrorMessage
			}
			return msg.StopReason
		}
		if r.ctx.Err() != nil { // aborted during the tools: queues stay as they are
			return llm.StopAborted
		}
		if terminate { // every tool of the batch asked to end the run
			return msg.StopReason
		}
		steers, err := call(s, func(st *state) []input {
			q := takeQueue(&st.steering, st.steeringMode)
			if len(q) == 0 {
				return nil
			}
			st.queueUpdate()
			return userInputs(q, llm.OriginSteer, st.nowMs())
		})
		if err != nil {
			return llm.StopAborted
		}
		if len(results) == 0 && len(steers) == 0 {
			return msg.StopReason
		}
		if s.limitReached(r, msg) {
			return msg.StopReason
		}
		pending = steers
	}
}

// appendInputs records the inputs of a turn on the actor.
func (st *state) appendInputs(pending []input) {
	for _, in := range pending {
		if in.newRun {
			st.pendingNotes()
		}
		e := st.appendMessage(in.msg, false)
		if in.newRun {
			st.afterUserMessage(e.ID)
		}
	}
}

// promptText is the before_agent_start prompt of a set of inputs.
func promptText(in []input) string {
	var parts []string
	for _, i := range in {
		if u, ok := i.msg.(*llm.UserMessage); ok {
			parts = append(parts, u.Content.PlainText())
		}
	}
	return strings.Join(parts, "\n\n")
}

// limitReached checks the run's limits after a turn that will be followed
// by another: the turn and cost limits (limit_reached, once per run) and
// repeated identical tool calls. When one is hit the run ends after this
// turn and agent_settled carries the warning.
func (s *Session) limitReached(r *runState, msg *llm.AssistantMessage) bool {
	if r.stopping || r.hookStop.Load() {
		return true
	}
	set := s.limitsNow()
	r.turns++
	if msg.Usage.Cost != nil {
		r.cost += msg.Usage.Cost.Total
	}
	switch {
	case set.MaxTurns > 0 && r.turns >= set.MaxTurns:
		s.publish(events.LimitReached{Kind: "turns", Value: float64(r.turns), Limit: float64(set.MaxTurns)})
		r.warning, r.stopping = "limit_reached", true
	case set.MaxCost > 0 && r.cost >= set.MaxCost:
		s.publish(events.LimitReached{Kind: "cost", Value: r.cost, Limit: set.MaxCost})
		r.warning, r.stopping = "limit_reached", true
	case r.warning == "repeated_tool_call":
		r.stopping = true
	}
	return r.stopping
}

// settle ends a run on the actor: agent_settled, the Notification hooks,
// then whatever waits for the session.
func (s *Session) settle(st *state, r *runState, stop string) {
	s.publish(events.AgentSettled{Warning: r.warning})
	s.outcomes.settled(r.warning)
	if r.parked { // answers that came while the run settled
		st.whenIdle(st.maybeContinue)
	}
	switch {
	case stop == llm.StopError:
		s.notify("error", st.lastError())
	case r.warning != "":
		s.notify("settled", r.warning)
	default:
		s.notify("settled", "run finished")
	}
	st.warmSettled()
	st.settled()
}

// settleOrContinue is the settle point after the Stop hooks: a message
// queued meanwhile continues the run, else the run settles.
func (s *Session) settleOrContinue(st *state, r *runState, stop string) []input {
	if stop != llm.StopAborted && stop != llm.StopError && !r.stopping && r.ctx.Err() == nil {
		if q := takeQueue(&st.steering, st.steeringMode); len(q) > 0 {
			st.queueUpdate()
			s.publish(events.AgentStart{})
			return userInputs(q, llm.OriginSteer, st.nowMs())
		}
		if q := takeQueue(&st.followUp, st.followUpMode); len(q) > 0 {
			st.queueUpdate()
			s.publish(events.AgentStart{})
			return userInputs(q, llm.OriginFollowUp, st.nowMs())
		}
	}
	s.settle(st, r, stop)
	return nil
}

package acp

import (
	"errors"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// Stop reasons of ACP.
const (
	stopEndTurn         = "end_turn"
	stopMaxTokens       = "max_tokens"
	stopMaxTurnRequests = "max_turn_requests"
	stopRefusal         = "refusal"
	stopCancelled       = "cancelled"
)

// turn is one session/prompt request. Its fields are guarded by the
// session's mu.
type turn struct {
	c     *call
	input session.PromptInput

	ran       bool            // the run started (agent_start seen)
	claimed   bool            // finishing has begun; later events are not this turn's
	cancelled bool            // session/cancel (or close, or an interrupt) asked to stop
	withdrawn bool            // $/cancel_request withdrew the request: answer -32800
	out       session.Outcome // how its runs ended (absorb)

	done chan struct{} // closed once the request has been answered
}

func newTurn(c *call, in session.PromptInput) *turn {
	return &turn{c: c, input: in, done: make(chan struct{})}
}

// enqueue runs t now when the session is idle, else after the turns before
// it.
func (as *acpSession) enqueue(t *turn) {
	as.mu.Lock()
	if as.closing {
		as.mu.Unlock()
		as.finishQueued(t, false)
		return
	}
	if as.cur != nil {
		as.queue = append(as.queue, t)
		as.mu.Unlock()
		return
	}
	as.cur = t
	as.mu.Unlock()
	as.begin(t)
}

// begin hands t to the session. The session answers at once when the
// prompt was a command (handled) or failed; a started run is finished by
// its agent_settled event (see onEvent).
func (as *acpSession) begin(t *turn) {
	as.sess.Prompt(session.KindPrompt, t.input, func(d session.Disposition, err error) {
		if err != nil || d != session.Started {
			// Called on the session's actor: finish elsewhere.
			as.srv.background(func() { as.finish(t, err) })
		}
	})
}

// absorb adds the outcome of one of t's runs (a turn runs twice when the
// client approves a plan: the plan run, then the execution run): usage
// adds up, the last run's stop reason and error decide, and a turn limit
// reached by any run stays (max_turn_requests). The plan is the last
// run's (offered at its settle, see onSettle). Called with the session's
// mu held.
func (t *turn) absorb(o session.Outcome) {
	u := t.out.Usage
	u.Add(o.Usage)
	limit := t.out.Limit
	if limit != events.LimitTurns && o.Limit != "" {
		limit = o.Limit
	}
	t.out = o
	t.out.Usage, t.out.Limit = u, limit
}

// finish answers t (once), after the turn's closing updates, and starts
// the next queued turn. err is a failure to start the turn.
func (as *acpSession) finish(t *turn, err error) {
	as.mu.Lock()
	if t.claimed {
		as.mu.Unlock()
		return
	}
	t.claimed = true
	ran := t.ran
	res, rerr := t.result()
	as.mu.Unlock()

	if ran {
		as.notifyUsage()
		as.notifyInfo()
	}
	switch {
	case err != nil && !t.cancelled && !t.withdrawn:
		t.c.fail(err)
	case rerr != nil:
		t.c.fail(rerr)
	default:
		t.c.reply(res)
	}
	close(t.done)

	as.mu.Lock()
	if as.cur == t {
		as.cur = nil
	}
	var next *turn
	if !as.closing && len(as.queue) > 0 {
		next = as.queue[0]
		as.queue = as.queue[1:]
		as.cur = next
	}
	as.mu.Unlock()
	if next != nil {
		as.begin(next)
	}
}

// finishQueued answers a turn that never ran: cancelled, or -32800 when
// withdrawn.
func (as *acpSession) finishQueued(t *turn, withdrawn bool) {
	as.mu.Lock()
	if t.claimed {
		as.mu.Unlock()
		return
	}
	t.claimed = true
	t.cancelled = true
	t.withdrawn = t.withdrawn || withdrawn
	res, err := t.result()
	as.mu.Unlock()
	t.c.answer(res, err)
	close(t.done)
}

// result is the response of a finished turn (called with the session's mu
// held).
func (t *turn) result() (promptResult, error) {
	reason, err := stopReason(t)
	if err != nil {
		return promptResult{}, err
	}
	u := t.out.Usage
	usage := &turnUsage{
		InputTokens: u.Input, OutputTokens: u.Output, CachedReadTokens: u.CacheRead, CachedWriteTokens: u.CacheWrite,
		TotalTokens: u.Input + u.Output + u.CacheRead + u.CacheWrite,
	}
	if p := t.out.Permissions; p != nil {
		usage.Meta = map[string]any{MetaPermissions: p}
	}
	return promptResult{StopReason: reason, Usage: usage}, nil
}

// stopReason maps how a turn ended to an ACP stop reason: a withdrawn
// request fails with -32800; a cancel wins over everything else; the turn
// limit gives max_turn_requests; otherwise the run's stop reason decides
// (stop and toolUse end_turn, length max_tokens, refusal refusal, aborted
// cancelled) and a failed run (error) is a JSON-RPC error carrying the
// model's error message.
func stopReason(t *turn) (string, error) {
	switch {
	case t.withdrawn:
		return "", errorf(errCancelled, "request cancelled")
	case t.cancelled:
		return stopCancelled, nil
	case t.out.Limit == events.LimitTurns:
		return stopMaxTurnRequests, nil
	}
	switch t.out.StopReason {
	case llm.StopLength:
		return stopMaxTokens, nil
	case llm.StopRefusal:
		return stopRefusal, nil
	case llm.StopAborted:
		return stopCancelled, nil
	case llm.StopError:
		msg := t.out.ErrorMessage
		if msg == "" {
			msg = "the model request failed"
		}
		return "", errors.New(msg)
	}
	return stopEndTurn, nil
}

// cancel stops the session's work for session/cancel: queued prompts
// answer cancelled, the running one is aborted (it answers cancelled when
// the run has settled) and outstanding permission asks are withdrawn.
func (as *acpSession) cancel() {
	as.mu.Lock()
	queued := as.queue
	as.queue = nil
	cur := as.cur
	if cur != nil && !cur.claimed {
		cur.cancelled = true
	} else {
		cur = nil
	}
	as.mu.Unlock()
	for _, t := range queued {
		as.finishQueued(t, false)
	}
	// Abort before withdrawing the asks: the run is then already aborted
	// when an ask returns, so it does not go on with its next step.
	if cur != nil {
		as.sess.Abort(func() {})
	}
	as.cancelAsks()
}

// withdraw handles $/cancel_request for one of this session's prompts. It
// reports whether id named one.
func (as *acpSession) withdraw(id jsonrpc2.ID) bool {
	as.mu.Lock()
	for i, t := range as.queue {
		if t.c.req.ID == id {
			as.queue = append(as.queue[:i:i], as.queue[i+1:]...)
			as.mu.Unlock()
			as.finishQueued(t, true)
			return true
		}
	}
	cur := as.cur
	if cur == nil || cur.claimed || cur.c.req.ID != id {
		as.mu.Unlock()
		return false
	}
	cur.withdrawn = true
	as.mu.Unlock()
	as.sess.Abort(func() {})
	as.cancelAsks()
	return true
}

package session

import (
	"sync"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
)

// Outcome is how a run ended, reported once per run when it settles (see
// OnSettle), so a protocol maps an outcome instead of rebuilding it from
// the event stream.
type Outcome struct {
	// StopReason is the run's last stop reason (llm.Stop*): the one of
	// its last agent_end, else of its last assistant message.
	StopReason string
	// ErrorMessage is the last assistant message's error (StopError).
	ErrorMessage string
	// Usage sums the run's assistant messages.
	Usage llm.Usage
	// Warning is agent_settled's warning ("limit_reached", …).
	Warning string
	// Limit is the kind of the last limit the run reached ("" if none).
	Limit events.LimitKind
	// Plan is the last plan the run proposed (nil if none).
	Plan *events.PlanProposed
	// Permissions are the session's permission decision counters when
	// the run ended (nil: the session decided nothing yet).
	Permissions *permlog.Counts
}

// outcomes records the outcome of the current run from the session's own
// events: it is the bus's first subscriber, so it sees them in publish
// order, under the bus lock, and needs no hook in the run's code paths.
// A run begins at its before_agent_start (published once per run, right
// before its first agent_start) and ends at agent_settled (settle calls
// settled right after publishing it).
type outcomes struct {
	mu     sync.Mutex
	active bool
	cur    Outcome
	lastAE string // stop reason of the last agent_end
	subs   map[*func(Outcome)]struct{}
	perms  *permlog.Counters // the session's (set once at creation)
}

func (o *outcomes) note(e events.Event) {
	switch e.(type) {
	case events.BeforeAgentStart, events.MessageEnd, events.AgentEnd, events.PlanProposed, events.LimitReached:
	default:
		return // deltas and the rest: no lock on the hot path
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := e.(events.BeforeAgentStart); ok { // a run starts (once per run)
		o.active, o.cur, o.lastAE = true, Outcome{}, ""
	}
	if !o.active {
		return
	}
	switch e := e.(type) {
	case events.MessageEnd:
		if a, ok := e.Message.(*llm.AssistantMessage); ok {
			o.cur.Usage.Add(a.Usage)
			o.cur.StopReason, o.cur.ErrorMessage = a.StopReason, a.ErrorMessage
		}
	case events.AgentEnd:
		o.lastAE = e.StopReason
	case events.PlanProposed:
		p := e
		o.cur.Plan = &p
	case events.LimitReached:
		o.cur.Limit = e.Kind
	}
}

// settled ends the current run and hands its outcome to the OnSettle
// callbacks. Called on the actor, right after agent_settled.
func (o *outcomes) settled(warning string) {
	o.mu.Lock()
	out := o.cur
	if o.lastAE != "" {
		out.StopReason = o.lastAE
	}
	out.Warning = warning
	o.active, o.cur, o.lastAE = false, Outcome{}, ""
	if o.perms != nil {
		if c := o.perms.Snapshot(); c.Allowed+c.Denied > 0 {
			out.Permissions = &c
		}
	}
	subs := make([]func(Outcome), 0, len(o.subs))
	for f := range o.subs {
		subs = append(subs, *f)
	}
	o.mu.Unlock()
	for _, f := range subs {
		f(out)
	}
}

// OnSettle registers fn for the outcome of every run of the session. fn is
// called on the session's actor right after agent_settled has been
// published (so after every subscriber saw it), before anything else the
// session does; like an event callback it must not wait for the session.
func (s *Session) OnSettle(fn func(Outcome)) (unsubscribe func()) {
	o := &s.outcomes
	o.mu.Lock()
	if o.subs == nil {
		o.subs = map[*func(Outcome)]struct{}{}
	}
	o.subs[&fn] = struct{}{}
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		delete(o.subs, &fn)
		o.mu.Unlock()
	}
}

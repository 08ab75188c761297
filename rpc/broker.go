package rpc

import (
	"context"
	"slices"
	"sync"

	"github.com/armadra/ama-rpc/events"
)

// maxEarlyAnswers bounds answers kept for requests not asked yet.
const maxEarlyAnswers = 1024

// Broker connects permission asks of sessions with the host's answers
// (permission_response). It implements session.Approver.
//
// Without an attended client every ask is denied at once. Asks are serial:
// one waits for an answer at a time. An answer for an unknown request id is
// kept (bounded) and used when that request is asked. Answers are
// delivered first resolver wins: a request is resolved at most once.
type Broker struct {
	sem chan struct{}

	mu         sync.Mutex
	attended   bool
	pending    map[string]chan events.Approval
	early      map[string]events.Approval
	earlyOrder []string
	// announced are the requests whose permission_request is on its way
	// to the client but whose ask is not waiting yet (asks are serial: a
	// second one waits for the first's answer), in order, bounded.
	announced      map[string]bool
	announcedOrder []string

	onPending func(id string) // test hook: an ask started waiting
}

// NewBroker returns a broker without a client.
func NewBroker() *Broker {
	return &Broker{sem: make(chan struct{}, 1), pending: map[string]chan events.Approval{}, early: map[string]events.Approval{},
		announced: map[string]bool{}}
}

// SetAttended registers (true) or withdraws (false) the answering client.
// Withdrawing resolves every pending ask as deny and forgets early answers.
func (b *Broker) SetAttended(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attended = on
	if on {
		return
	}
	for id, ch := range b.pending {
		delete(b.pending, id)
		ch <- events.ApprovalDeny
	}
	b.early = map[string]events.Approval{}
	b.earlyOrder = nil
	b.announced = map[string]bool{}
	b.announcedOrder = nil
}

// Expect notes that request id was announced to the client (rpc's
// forward, before the permission_request line is queued). An answer that
// arrives before its ask waits is then accepted (and kept for the ask),
// and Pending lists it: for the client the request is open from the line
// on.
func (b *Broker) Expect(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.attended || b.announced[id] {
		return
	}
	if len(b.announcedOrder) >= maxEarlyAnswers {
		delete(b.announced, b.announcedOrder[0])
		b.announcedOrder = b.announcedOrder[1:]
	}
	b.announced[id] = true
	b.announcedOrder = append(b.announcedOrder, id)
}

// Settled notes that request id was resolved (its permission_resolved
// event): it is no longer open for the client, whoever resolved it (a
// host adapter answers before the broker is asked).
func (b *Broker) Settled(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetAnnounced(id)
}

// forgetAnnounced drops id from the announced requests (b.mu held).
func (b *Broker) forgetAnnounced(id string) {
	if !b.announced[id] {
		return
	}
	delete(b.announced, id)
	b.announcedOrder = withoutID(b.announcedOrder, id)
}

// Attended reports whether a client answers asks.
func (b *Broker) Attended() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.attended
}

// Ask waits for the answer to req. It returns deny when nobody can answer
// or ctx ends first.
func (b *Broker) Ask(ctx context.Context, req *events.PermissionRequest) events.Approval {
	if !b.Attended() {
		return events.ApprovalDeny
	}
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return events.ApprovalDeny
	}
	defer func() { <-b.sem }()
	b.mu.Lock()
	if !b.attended {
		b.mu.Unlock()
		return events.ApprovalDeny
	}
	b.forgetAnnounced(req.RequestID)
	if d, ok := b.early[req.RequestID]; ok {
		b.forgetEarly(req.RequestID)
		b.mu.Unlock()
		return d
	}
	ch := make(chan events.Approval, 1)
	b.pending[req.RequestID] = ch
	hook := b.onPending
	b.mu.Unlock()
	if hook != nil {
		hook(req.RequestID)
	}
	select {
	case d := <-ch:
		return d
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, req.RequestID)
		b.mu.Unlock()
		select { // an answer may have raced the deadline
		case d := <-ch:
			return d
		default:
		}
		return events.ApprovalDeny
	}
}

// Respond answers request id. before is called with whether the request
// was pending, before the waiting session is woken, so the command's
// response precedes the permission_resolved event it causes.
func (b *Broker) Respond(id string, decision events.Approval, before func(accepted bool)) {
	b.mu.Lock()
	ch, ok := b.pending[id]
	accepted := ok
	if ok {
		delete(b.pending, id)
	} else if b.announced[id] {
		// Announced, its ask not waiting yet: accepted, kept for the ask.
		b.forgetAnnounced(id)
		b.early[id] = decision
		b.earlyOrder = append(b.earlyOrder, id)
		accepted = true
	} else if _, dup := b.early[id]; !dup {
		if len(b.earlyOrder) >= maxEarlyAnswers {
			delete(b.early, b.earlyOrder[0])
			b.earlyOrder = b.earlyOrder[1:]
		}
		b.early[id] = decision
		b.earlyOrder = append(b.earlyOrder, id)
	}
	// else: a second answer for a request not asked yet; the first kept
	// one wins.
	b.mu.Unlock()
	before(accepted)
	if ok {
		ch <- decision
	}
}

// Pending returns the ids of the asks waiting for an answer, sorted.
func (b *Broker) Pending() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]string, 0, len(b.pending)+len(b.announcedOrder))
	for id := range b.pending {
		ids = append(ids, id)
	}
	for _, id := range b.announcedOrder {
		if _, waiting := b.pending[id]; !waiting {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// forgetEarly drops a kept answer (b.mu held).
func (b *Broker) forgetEarly(id string) {
	delete(b.early, id)
	b.earlyOrder = withoutID(b.earlyOrder, id)
}

// withoutID is order without its entry id (append to order[:i:i] copies,
// so the result never shares order's array).
func withoutID(order []string, id string) []string {
	if i := slices.Index(order, id); i >= 0 {
		return append(order[:i:i], order[i+1:]...)
	}
	return order
}

package events

import "sync"

// Bus delivers a session's events to its subscribers, in one total order.
//
// Publish calls every subscriber synchronously, under the bus lock, in
// subscription order. A subscriber therefore sees events exactly in publish
// order and may apply backpressure by blocking (which holds up the
// publisher, by design: events are a transcript and are never dropped). A
// subscriber must not call Publish or Subscribe from its callback.
type Bus struct {
	mu   sync.Mutex
	subs []*subscription
}

type subscription struct {
	fn     func(Event)
	closed bool
}

// NewBus returns a bus without subscribers.
func NewBus() *Bus { return &Bus{} }

// Publish delivers e to every current subscriber.
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		if !s.closed {
			s.fn(e)
		}
	}
}

// Subscribe registers fn and returns a function that removes it. After the
// returned function has returned, fn is not called again.
func (b *Bus) Subscribe(fn func(Event)) (unsubscribe func()) {
	s := &subscription{fn: fn}
	b.mu.Lock()
	b.subs = append(b.subs, s)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		s.closed = true
		for i, x := range b.subs {
			if x == s {
				b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
				break
			}
		}
	}
}

// Hold runs f under the bus lock: no event is being delivered while it
// runs, every event published before has reached every subscriber, and
// every later one reaches them after f returns. f must not call Publish
// or Subscribe. (A replay is positioned in the stream this way.)
func (b *Bus) Hold(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
}

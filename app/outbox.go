package app

import (
	"sync"

	"github.com/armadra/ama-rpc/events"
)

// outbox holds the protocol events produced before the server serves: a
// host adapter's ui.notify from create() or from its startup
// session_start handler, and the hook_executed of the startup SessionStart
// hooks. The server opens it once it serves (rpc: after hello and
// session_start); the queued events go out first, in order, and later
// ones go straight through. Safe for concurrent use (the host bridge's
// read goroutine and the startup path).
type outbox struct {
	mu    sync.Mutex
	queue []events.Event
	send  func(events.Event) bool // nil until open
}

// put sends e, or queues it until open. It reports false when the open
// server could not take it (no longer serving), so the caller can fall
// back to stderr.
func (o *outbox) put(e events.Event) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.send != nil {
		return o.send(e)
	}
	o.queue = append(o.queue, e)
	return true
}

// notify is put for a host's ui.notify (host.Options.Notify).
func (o *outbox) notify(level, message string) bool {
	return o.put(events.Notification{Level: level, Message: message})
}

// open hands the queued events to send, in order, and makes later ones go
// straight through. Under the lock, so none overtakes the queue.
func (o *outbox) open(send func(events.Event) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.queue {
		send(e)
	}
	o.queue, o.send = nil, send
}

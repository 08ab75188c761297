package stdio

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// Owed counts what a server still owes before it may shut down: replies
// (Owe, each with a name for the logs) and other work (Add/Done). Unlike
// sync.WaitGroup, Owe and Add may race with Wait (a request can arrive
// while the shutdown waits). The zero value is ready; set Log before use
// to have double replies and slow shutdowns logged.
type Owed struct {
	Log *zap.Logger

	mu    sync.Mutex
	cond  *sync.Cond
	next  uint64
	owed  map[uint64]string // replies still owed, by ticket
	other int               // work that is not a reply
}

// OwedWarnEvery is how often Wait names the replies it is still waiting
// for (a run may legitimately take minutes to finish at the end of
// input; a reply that never comes is a bug this makes visible).
var OwedWarnEvery = 10 * time.Second

// Owe registers one reply the server owes (what names it: command or
// method, and id). The returned Reply must be given exactly once.
func (o *Owed) Owe(what string) *Reply {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owed == nil {
		o.owed = map[uint64]string{}
	}
	o.next++
	o.owed[o.next] = what
	return &Reply{o: o, ticket: o.next, what: what}
}

// Add counts n more (negative: fewer) pieces of work that are not replies.
func (o *Owed) Add(n int) {
	o.mu.Lock()
	o.other += n
	o.signal()
	o.mu.Unlock()
}

// Done ends one piece of work counted by Add.
func (o *Owed) Done() { o.Add(-1) }

func (o *Owed) signal() {
	if o.cond != nil && o.other == 0 && len(o.owed) == 0 {
		o.cond.Broadcast()
	}
}

// Pending returns the names of the replies still owed, sorted.
func (o *Owed) Pending() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.owed))
	for _, w := range o.owed {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// Wait blocks until nothing is owed. While replies are still owed it
// logs their names every OwedWarnEvery.
func (o *Owed) Wait() {
	o.mu.Lock()
	if o.cond == nil {
		o.cond = sync.NewCond(&o.mu)
	}
	idle := func() bool { return o.other == 0 && len(o.owed) == 0 }
	if idle() {
		o.mu.Unlock()
		return
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(OwedWarnEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				o.warn()
			case <-stop:
				return
			}
		}
	}()
	for !idle() {
		o.cond.Wait()
	}
	o.mu.Unlock()
}

// warn logs the replies still owed.
func (o *Owed) warn() {
	if p := o.Pending(); len(p) > 0 {
		o.log().Warn("shutdown is waiting for replies still owed", zap.Strings("owed", p))
	}
}

func (o *Owed) log() *zap.Logger {
	if o.Log == nil {
		return zap.NewNop()
	}
	return o.Log
}

// Reply is one owed reply (gopls' MustReplyHandler, without its silence):
// the first Send writes it and releases the debt; a second one is a bug.
type Reply struct {
	o      *Owed
	ticket uint64
	what   string
	once   sync.Once
}

// Send runs write, the reply, the first time it is called. A second call
// does not write: under go test it panics (the bug is found where it
// happens), otherwise it is logged as an error.
func (r *Reply) Send(write func()) {
	first := false
	r.once.Do(func() {
		first = true
		defer r.release()
		write()
	})
	if first {
		return
	}
	if testing.Testing() {
		panic(fmt.Sprintf("stdio: second reply to %s", r.what))
	}
	r.o.log().Error("second reply dropped", zap.String("to", r.what))
}

func (r *Reply) release() {
	r.o.mu.Lock()
	delete(r.o.owed, r.ticket)
	r.o.signal()
	r.o.mu.Unlock()
}

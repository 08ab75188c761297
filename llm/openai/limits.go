package openai

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound one model reply. A zero field selects its default.
type Limits struct {
	// IdleTimeout ends an attempt when the endpoint sends nothing (not a
	// byte: SSE keep-alive comments count) for this long, from the
	// request on: a retryable network error (disconnect once the reply
	// has started). Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxLineBytes bounds one line of the event stream; a longer line
	// fails the reply (llm.ErrTooLarge, not retried). Default
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxReplyBytes bounds the reply's content (text, thinking and tool
	// arguments together); a longer reply fails (llm.ErrTooLarge, not
	// retried). Default DefaultMaxReplyBytes.
	MaxReplyBytes int
}

// Defaults of Limits. A real model's reply is bounded by its output
// tokens (at most a few MB even at 1M tokens); 16 MiB leaves a wide margin
// and keeps a broken or hostile endpoint from growing the process without
// bound (a reply lives in the builder, the writer's merged delta and three
// event lines).
const (
	DefaultIdleTimeout   = 300 * time.Second
	DefaultMaxLineBytes  = 16 << 20
	DefaultMaxReplyBytes = 16 << 20
)

func (l Limits) withDefaults() Limits {
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.MaxReplyBytes <= 0 {
		l.MaxReplyBytes = DefaultMaxReplyBytes
	}
	return l
}

// errIdle is the cancellation cause of a request whose endpoint sent
// nothing for the idle timeout.
var errIdle = errors.New("the endpoint sent nothing for the idle timeout")

// clock is the idle timer's time source: the system's in production
// (nil: realClock), a manual one in the tests (export_test.go), so that a
// test of the timeout decides when time passes instead of racing the
// machine's load.
type clock interface {
	// now is the time since an origin fixed at the clock's creation.
	now() time.Duration
	// afterFunc calls f in its own goroutine once d has passed.
	afterFunc(d time.Duration, f func()) timer
}

// timer is what afterFunc returns (*time.Timer's methods).
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// realClock is the system's monotonic clock.
type realClock struct{ base time.Time }

func (c realClock) now() time.Duration { return time.Since(c.base) }
func (realClock) afterFunc(d time.Duration, f func()) timer {
	return time.AfterFunc(d, f)
}

// idleTimer calls fire once when no activity (touch) was seen for d since
// arm. touch is one clock read and an atomic store, cheap enough for every
// read of the body; the timer itself is only re-armed when it fires early.
// Methods are safe for concurrent use and on a nil *idleTimer (no timeout).
type idleTimer struct {
	d     time.Duration
	fire  func()
	clock clock
	last  atomic.Int64 // clock.now() of the last activity

	mu      sync.Mutex
	t       timer
	stopped bool
}

// newIdleTimer returns nil when d is not positive; a nil c is the system's
// clock.
func newIdleTimer(d time.Duration, c clock, fire func()) *idleTimer {
	if d <= 0 {
		return nil
	}
	if c == nil {
		c = realClock{base: time.Now()}
	}
	return &idleTimer{d: d, fire: fire, clock: c}
}

// arm starts the timer (once; later calls only touch).
func (i *idleTimer) arm() {
	if i == nil {
		return
	}
	i.touch()
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.t == nil && !i.stopped {
		i.t = i.clock.afterFunc(i.d, i.check)
	}
}

// touch records activity.
func (i *idleTimer) touch() {
	if i != nil {
		i.last.Store(int64(i.clock.now()))
	}
}

func (i *idleTimer) check() {
	quiet := i.clock.now() - time.Duration(i.last.Load())
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return
	}
	if quiet < i.d {
		i.t.Reset(i.d - quiet)
		return
	}
	i.stopped = true
	i.fire()
}

// stop ends the timer; fire is not called after stop returns.
func (i *idleTimer) stop() {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.stopped = true
	if i.t != nil {
		i.t.Stop()
	}
}

// sizeText writes a byte bound the way the README states it: whole MiB
// when it is one, else bytes.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}

package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// NewReference returns a provider that reads streams with go-openai's
// RecvRaw and decodes every chunk with encoding/json (no fast path): the
// reference of the differential tests.
func NewReference(o Options) *Provider {
	p := New(o)
	p.reference = true
	return p
}

// CompareDecoders decodes raw with parseFast and, when it takes the chunk,
// with encoding/json as the stream's fallback would; diff describes any
// difference ("" when they agree or parseFast refused).
func CompareDecoders(raw []byte) (fast bool, diff string) {
	var fc chunk
	var scratch []byte
	if !parseFast(raw, &fc, &scratch) {
		return false, ""
	}
	var jc chunk
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&jc); err != nil {
		return true, "parseFast took it, encoding/json failed: " + err.Error()
	}
	if dec.More() {
		return true, "parseFast took it, encoding/json sees trailing data"
	}
	normalize(&fc)
	normalize(&jc)
	if !reflect.DeepEqual(fc, jc) {
		f, _ := json.Marshal(fc)
		j, _ := json.Marshal(jc)
		return true, fmt.Sprintf("parseFast %s\nencoding/json %s", f, j)
	}
	return true, ""
}

// normalize makes empty slices nil: the stream only ranges over them.
func normalize(c *chunk) {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	for i := range c.Choices {
		if d := &c.Choices[i].Delta; len(d.ToolCalls) == 0 {
			d.ToolCalls = nil
		}
	}
}

// ManualClock is a clock for the idle timeout that moves only when a test
// calls Advance: a timer fires in Advance, on the caller's goroutine, once
// the clock reaches its time. Safe for concurrent use.
type ManualClock struct {
	mu     sync.Mutex
	t      time.Duration
	timers []*manualTimer
}

type manualTimer struct {
	c      *ManualClock
	at     time.Duration
	f      func()
	active bool
}

// SetClock makes p's idle timeouts run on c.
func SetClock(p *Provider, c *ManualClock) { p.clock = c }

func (c *ManualClock) now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *ManualClock) afterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.t + d, f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at, t.active = t.c.t+d, true
	return was
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

// Advance moves the clock d forward and runs the timers that come due, in
// the order of their times (a timer a callback resets into the window runs
// too).
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.t + d
	for {
		var next *manualTimer
		for _, t := range c.timers {
			if t.active && t.at <= end && (next == nil || t.at < next.at) {
				next = t
			}
		}
		if next == nil {
			break
		}
		next.active = false
		if next.at > c.t {
			c.t = next.at
		}
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	c.t = end
	c.mu.Unlock()
}

// Pending is the number of timers that have not fired or stopped.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.active {
			n++
		}
	}
	return n
}

// Now is how far the clock has moved.
func (c *ManualClock) Now() time.Duration { return c.now() }

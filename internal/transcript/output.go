package transcript

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// Output collects a server's stdout line by line, as a host reads it: the
// golden tests' runs and the replay kit's. A stalled Output stops reading
// (a host that is busy), so the server's writer meets backpressure.
//
// Safe for concurrent use: one goroutine runs Collect, any other may wait
// on or read the lines.
type Output struct {
	mu      sync.Mutex
	cond    *sync.Cond
	lines   [][]byte
	parsed  []Value // parsed[i]: lines[i] as WaitFor parsed it (nil: not yet; notObject: not a JSON object)
	stalled bool
	eof     bool
}

// NewOutput returns an empty Output.
func NewOutput() *Output {
	o := &Output{}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// Collect reads r to its end, splitting lines at '\n' (a last line
// without one is kept); it honours Stall. Run it on its own goroutine.
func (o *Output) Collect(r io.Reader) {
	buf := make([]byte, 32<<10)
	var partial []byte
	for {
		o.mu.Lock()
		for o.stalled {
			o.cond.Wait()
		}
		o.mu.Unlock()
		n, err := r.Read(buf)
		if n > 0 {
			partial = append(partial, buf[:n]...)
			o.mu.Lock()
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				o.lines = append(o.lines, append([]byte(nil), partial[:i]...))
				partial = partial[i+1:]
			}
			o.cond.Broadcast()
			o.mu.Unlock()
		}
		if err != nil {
			o.mu.Lock()
			if len(partial) > 0 {
				o.lines = append(o.lines, partial)
			}
			o.eof = true
			o.cond.Broadcast()
			o.mu.Unlock()
			return
		}
	}
}

// Lines returns a copy of the lines so far.
func (o *Output) Lines() [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([][]byte(nil), o.lines...)
}

// Stall stops reading; Resume continues.
func (o *Output) Stall() {
	o.mu.Lock()
	o.stalled = true
	o.mu.Unlock()
}

// Resume continues reading after Stall.
func (o *Output) Resume() {
	o.mu.Lock()
	o.stalled = false
	o.cond.Broadcast()
	o.mu.Unlock()
}

// Drained waits until the output has ended, unless reading is stalled
// (then the lines so far are all there will be).
func (o *Output) Drained() {
	o.mu.Lock()
	for !o.eof && !o.stalled {
		o.cond.Wait()
	}
	o.mu.Unlock()
}

// wake broadcasts after timeout, so a waiter can see its deadline passed.
func (o *Output) wake(timeout time.Duration) *time.Timer {
	return time.AfterFunc(timeout, func() {
		o.mu.Lock()
		o.cond.Broadcast()
		o.mu.Unlock()
	})
}

// WaitFor blocks until pred has matched n lines in total (lines that are
// not a JSON object never match) and returns the index of the n-th match.
// It fails when the output ends first or timeout passes. Each line is
// parsed once and its object is given to every later WaitFor's pred (a
// replay waits hundreds of times on one output, each wait from its first
// line): pred must not change it.
func (o *Output) WaitFor(desc string, n int, timeout time.Duration, pred func(*Object) bool) (int, error) {
	deadline := time.Now().Add(timeout)
	defer o.wake(timeout).Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	// Lines are only appended: each wake-up looks at the new ones (a
	// rescan of all of them per new line made long runs quadratic).
	count, next := 0, 0
	for {
		for ; next < len(o.lines); next++ {
			if obj := o.object(next); obj != nil && pred(obj) {
				if count++; count == n {
					return next, nil
				}
			}
		}
		if o.eof || !time.Now().Before(deadline) {
			return -1, fmt.Errorf("waiting for %s (#%d): not seen (output ended: %v)", desc, n, o.eof)
		}
		o.cond.Wait()
	}
}

// notObject marks a parsed line that is not a JSON object.
var notObject Value = struct{}{}

// object returns line i parsed, nil when it is not a JSON object. o.mu
// is held.
func (o *Output) object(i int) *Object {
	for len(o.parsed) <= i {
		o.parsed = append(o.parsed, nil)
	}
	if o.parsed[i] == nil {
		o.parsed[i] = notObject
		if v, err := Parse(o.lines[i]); err == nil {
			if obj, ok := v.(*Object); ok {
				o.parsed[i] = obj
			}
		}
	}
	obj, _ := o.parsed[i].(*Object)
	return obj
}

// Line waits for line i (0-based) and returns it; false when the output
// ended before it or timeout passed.
func (o *Output) Line(i int, timeout time.Duration) ([]byte, bool) {
	deadline := time.Now().Add(timeout)
	defer o.wake(timeout).Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.lines) <= i && !o.eof && time.Now().Before(deadline) {
		o.cond.Wait()
	}
	if len(o.lines) <= i {
		return nil, false
	}
	return o.lines[i], true
}

// Poll waits until cond holds, checking every millisecond (conditions
// that write no output line: a file, writer statistics).
func Poll(desc string, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if !time.Now().Before(deadline) {
			return fmt.Errorf("waiting for %s: timed out after %v", desc, timeout)
		}
		<-tick.C
	}
	return nil
}

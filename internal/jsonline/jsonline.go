// Package jsonline is the shared skeleton of the JSON-lines clients of
// other programs' stdio (agents/claudestream, agents/codexrpc): one
// serialised writer of JSON lines that refuses once the peer's output has
// ended, the read loop over lines of at most a bound, and the calls
// awaiting their answer by id. The envelopes are the callers'.
//
// Concurrency: Write, Await and Deliver may be used from any goroutine;
// Read runs on one goroutine and closes Done when the input ends.
package jsonline

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// Conn is one connection; K is the type of call ids, R of answers.
type Conn[K comparable, R any] struct {
	w      io.Writer
	closed error // what Write and Await return once Done is closed
	wm     sync.Mutex

	mu      sync.Mutex
	pending map[K]chan R
	done    chan struct{}
}

// New returns a connection writing to w (the peer's stdin).
func New[K comparable, R any](w io.Writer, closed error) *Conn[K, R] {
	return &Conn[K, R]{w: w, closed: closed, pending: map[K]chan R{}, done: make(chan struct{})}
}

// Done is closed when the peer's output has ended.
func (c *Conn[K, R]) Done() <-chan struct{} { return c.done }

// Write writes v as one JSON line.
func (c *Conn[K, R]) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wm.Lock()
	defer c.wm.Unlock()
	select {
	case <-c.done:
		return c.closed
	default:
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// Await registers id, runs send (which writes the call) and waits for
// Deliver(id, …), the end of ctx or of the peer's output.
func (c *Conn[K, R]) Await(ctx context.Context, id K, send func() error) (R, error) {
	ch := make(chan R, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	var zero R
	if err := send(); err != nil {
		return zero, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-c.done:
		return zero, c.closed
	}
}

// Deliver hands r to the call awaiting id; an answer nobody awaits (or a
// second one) is dropped.
func (c *Conn[K, R]) Deliver(id K, r R) {
	c.mu.Lock()
	ch := c.pending[id]
	c.mu.Unlock()
	select {
	case ch <- r:
	default:
	}
}

// Read calls line with each line of r (at most max bytes; the slice is
// valid during the call) until r ends or fails, then end, then closes
// Done.
func (c *Conn[K, R]) Read(r io.Reader, max int, line func([]byte), end func()) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), max)
	for sc.Scan() {
		line(sc.Bytes())
	}
	end()
	close(c.done)
}

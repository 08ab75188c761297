// Package jsonline owns the JSON-lines connections to other programs'
// pipes: Reader (bounded lines), Writer (serialised JSON lines; codemode's
// parent and script process), Conn (plus calls awaiting their answer by
// id: agents/claudestream, agents/codexrpc) and Stream (a
// jsonrpc2.ObjectStream: host, agents/acpclient). The process's own stdio
// is internal/stdio's.
//
// Concurrency: Writer.Write, Conn.Write, Await and Deliver may be used
// from any goroutine; a Reader, Conn.Read and Stream.ReadObject belong to
// one goroutine (Read closes Done when the input ends).
package jsonline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// MaxLine is the usual bound of a peer's line (tool results can be large).
const MaxLine = 64 << 20

// Reader splits a peer's output into lines: at '\n', one trailing '\r'
// dropped, blank lines (JSON whitespace only) skipped, a last line without
// '\n' still counted.
type Reader struct{ sc *bufio.Scanner }

// NewReader reads lines of less than max bytes (without '\n') from r.
func NewReader(r io.Reader, max int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(64<<10, max)), max)
	return &Reader{sc: sc}
}

// Next returns the next non-blank line, valid until the following call.
// It returns io.EOF at the end of input, bufio.ErrTooLong for a line of
// max bytes or more, or the read error; after an error the reader is done.
func (r *Reader) Next() ([]byte, error) {
	for r.sc.Scan() {
		if line := r.sc.Bytes(); len(bytes.Trim(line, " \t\r")) > 0 {
			return line, nil
		}
	}
	if err := r.sc.Err(); err != nil {
		return nil, err
	}
	return nil, io.EOF
}

// Writer writes JSON lines, each whole, one at a time (json.Marshal: valid
// UTF-8, U+2028/U+2029 escaped, so a value never spans lines).
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a writer of lines to w (the peer's input).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes v as one JSON line.
func (w *Writer) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(append(b, '\n'))
	return err
}

// Stream is a jsonrpc2.ObjectStream, one message per line; a line that is
// not a message (or too long) fails ReadObject, which ends the connection.
type Stream struct {
	r *Reader
	w *Writer
	io.Closer
}

// NewStream reads messages of less than max bytes from r and writes them
// to w, which Close closes.
func NewStream(r io.Reader, w io.WriteCloser, max int) *Stream {
	return &Stream{r: NewReader(r, max), w: NewWriter(w), Closer: w}
}

// ReadObject decodes the next line into v.
func (s *Stream) ReadObject(v any) error {
	line, err := s.r.Next()
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// WriteObject writes v as one line.
func (s *Stream) WriteObject(v any) error { return s.w.Write(v) }

// Conn is one connection; K is the type of call ids, R of answers.
type Conn[K comparable, R any] struct {
	w      *Writer
	name   string // what a write error is prefixed with
	closed error  // what Write and Await return once Done is closed

	mu      sync.Mutex
	pending map[K]chan R
	done    chan struct{}
}

// New returns a connection writing to w (the peer's stdin); name prefixes
// its write errors, closed is the error once the peer's output has ended.
func New[K comparable, R any](w io.Writer, name string, closed error) *Conn[K, R] {
	return &Conn[K, R]{w: NewWriter(w), name: name, closed: closed, pending: map[K]chan R{}, done: make(chan struct{})}
}

// Done is closed when the peer's output has ended.
func (c *Conn[K, R]) Done() <-chan struct{} { return c.done }

// Write writes v as one JSON line, or returns the closed error once the
// peer's output has ended.
func (c *Conn[K, R]) Write(v any) error {
	select {
	case <-c.done:
		return c.closed
	default:
	}
	if err := c.w.Write(v); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
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

// Read calls line with each line of r (less than max bytes; the slice is
// valid during the call) until r ends, fails or sends a longer line, then
// end, then closes Done.
func (c *Conn[K, R]) Read(r io.Reader, max int, line func([]byte), end func()) {
	rd := NewReader(r, max)
	for {
		l, err := rd.Next()
		if err != nil {
			break
		}
		line(l)
	}
	end()
	close(c.done)
}

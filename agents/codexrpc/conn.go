package codexrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxLine bounds one message of the server.
const MaxLine = 64 << 20

// ErrClosed is returned once the server's output has ended.
var ErrClosed = errors.New("codex app-server closed")

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("codex app-server error %d: %s", e.Code, e.Message)
}

// Handler serves what the server sends.
type Handler interface {
	// Notification receives a notification.
	Notification(method string, params json.RawMessage)
	// Request answers a server request; an *Error result is sent as the
	// error, any other error as an internal error.
	Request(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// Conn is one client connection.
type Conn struct {
	w  io.Writer
	h  Handler
	wm sync.Mutex

	mu      sync.Mutex
	next    int64
	pending map[int64]chan reply
	done    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
}

type reply struct {
	result json.RawMessage
	err    *Error
}

// New starts reading r (the server's stdout); w is its stdin.
func New(r io.Reader, w io.Writer, h Handler) *Conn {
	c := &Conn{w: w, h: h, pending: map[int64]chan reply{}, done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.read(r)
	return c
}

// Done is closed when the server's output ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("codex app-server: %w", err)
	}
	c.wm.Lock()
	defer c.wm.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("codex app-server: %w", err)
	}
	return nil
}

// Call sends a request and decodes its result into result (nil: ignored).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	msg := map[string]any{"method": method, "id": id}
	if params != nil {
		msg["params"] = params
	}
	if err := c.write(msg); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if result != nil && len(r.result) > 0 {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("codex app-server: %s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return ErrClosed
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.write(msg)
}

func (c *Conn) read(r io.Reader) {
	defer func() {
		c.cancel()
		close(c.done)
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *Error          `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		hasID := len(m.ID) > 0 && string(m.ID) != "null"
		switch {
		case m.Method != "" && hasID:
			go c.serve(append(json.RawMessage(nil), m.ID...), m.Method, m.Params)
		case m.Method != "":
			c.h.Notification(m.Method, m.Params)
		case hasID:
			var id int64
			if json.Unmarshal(m.ID, &id) != nil {
				continue
			}
			c.mu.Lock()
			ch := c.pending[id]
			c.mu.Unlock()
			if ch != nil {
				ch <- reply{result: m.Result, err: m.Error}
			}
		}
	}
}

func (c *Conn) serve(id json.RawMessage, method string, params json.RawMessage) {
	res, err := c.h.Request(c.ctx, method, params)
	msg := map[string]any{"id": id}
	var rpcErr *Error
	switch {
	case errors.As(err, &rpcErr):
		msg["error"] = rpcErr
	case err != nil:
		msg["error"] = &Error{Code: -32603, Message: err.Error()}
	default:
		msg["result"] = res
	}
	_ = c.write(msg)
}

package codexrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/armadra/ama-rpc/internal/jsonline"
)

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
	line   *jsonline.Conn[int64, reply]
	h      Handler
	next   atomic.Int64
	ctx    context.Context
	cancel context.CancelFunc
}

type reply struct {
	result json.RawMessage
	err    *Error
}

// New starts reading r (the server's stdout); w is its stdin.
func New(r io.Reader, w io.Writer, h Handler) *Conn {
	c := &Conn{line: jsonline.New[int64, reply](w, "codex app-server", ErrClosed), h: h}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.line.Read(r, jsonline.MaxLine, c.read, c.cancel)
	return c
}

// Done is closed when the server's output ended.
func (c *Conn) Done() <-chan struct{} { return c.line.Done() }

// Call sends a request and decodes its result into result (nil: ignored).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	id := c.next.Add(1)
	msg := map[string]any{"method": method, "id": id}
	if params != nil {
		msg["params"] = params
	}
	r, err := c.line.Await(ctx, id, func() error { return c.line.Write(msg) })
	switch {
	case err != nil:
		return err
	case r.err != nil:
		return r.err
	}
	if result != nil && len(r.result) > 0 {
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("codex app-server: %s result: %w", method, err)
		}
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.line.Write(msg)
}

func (c *Conn) read(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		go c.serve(append(json.RawMessage(nil), m.ID...), m.Method, m.Params)
	case m.Method != "":
		c.h.Notification(m.Method, m.Params)
	case hasID:
		var id int64
		if json.Unmarshal(m.ID, &id) == nil {
			c.line.Deliver(id, reply{result: m.Result, err: m.Error})
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
	_ = c.line.Write(msg)
}

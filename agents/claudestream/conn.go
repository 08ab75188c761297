package claudestream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/armadra/ama-rpc/internal/jsonline"
)

// ErrClosed is returned once the CLI's output has ended.
var ErrClosed = errors.New("claude stream closed")

// ErrNoReply is a control request the CLI cancelled: no response is sent.
var ErrNoReply = errors.New("no reply")

// Handler serves what the CLI sends.
type Handler interface {
	// Message receives a line that is not a control message, with its
	// type.
	Message(typ string, line json.RawMessage)
	// ControlRequest answers a control_request of the CLI (its request
	// object); the result is the success response, an error the error
	// response (ErrNoReply: none; ctx ends when the CLI cancels it).
	ControlRequest(ctx context.Context, request json.RawMessage) (any, error)
}

// Conn is one stream-json session.
type Conn struct {
	line *jsonline.Conn[string, controlReply]
	h    Handler

	mu      sync.Mutex
	next    int
	cancels map[string]context.CancelFunc
}

type controlReply struct {
	resp json.RawMessage
	err  error
}

// New starts reading r (the CLI's stdout); w is its stdin.
func New(r io.Reader, w io.Writer, h Handler) *Conn {
	c := &Conn{line: jsonline.New[string, controlReply](w, "claude stream", ErrClosed), h: h, cancels: map[string]context.CancelFunc{}}
	go c.line.Read(r, jsonline.MaxLine, c.read, func() {
		c.mu.Lock()
		for _, cancel := range c.cancels {
			cancel()
		}
		c.mu.Unlock()
	})
	return c
}

// Done is closed when the CLI's output ended.
func (c *Conn) Done() <-chan struct{} { return c.line.Done() }

// Send writes one message line.
func (c *Conn) Send(v any) error { return c.line.Write(v) }

// Control sends a control_request and waits for its control_response.
func (c *Conn) Control(ctx context.Context, request any) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := "ama-" + strconv.Itoa(c.next)
	c.mu.Unlock()
	r, err := c.line.Await(ctx, id, func() error {
		return c.Send(map[string]any{"type": "control_request", "request_id": id, "request": request})
	})
	if err != nil {
		return nil, err
	}
	return r.resp, r.err
}

func (c *Conn) read(raw []byte) {
	line := append(json.RawMessage(nil), raw...)
	var head struct {
		Type      string          `json:"type"`
		RequestID string          `json:"request_id"`
		Request   json.RawMessage `json:"request"`
		Response  *struct {
			Subtype   string          `json:"subtype"`
			RequestID string          `json:"request_id"`
			Response  json.RawMessage `json:"response"`
			Error     string          `json:"error"`
		} `json:"response"`
	}
	if json.Unmarshal(line, &head) != nil {
		return // not JSON (a stray log line)
	}
	switch head.Type {
	case "control_response":
		if head.Response == nil {
			return
		}
		rep := controlReply{resp: head.Response.Response}
		if head.Response.Subtype == "error" {
			rep.err = fmt.Errorf("claude: %s", head.Response.Error)
		}
		c.line.Deliver(head.Response.RequestID, rep)
	case "control_request":
		ctx, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.cancels[head.RequestID] = cancel
		c.mu.Unlock()
		go c.serve(ctx, head.RequestID, head.Request)
	case "control_cancel_request":
		c.mu.Lock()
		cancel := c.cancels[head.RequestID]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		c.h.Message(head.Type, line)
	}
}

// serve answers one control request of the CLI.
func (c *Conn) serve(ctx context.Context, id string, req json.RawMessage) {
	res, err := c.h.ControlRequest(ctx, req)
	c.mu.Lock()
	cancel := c.cancels[id]
	delete(c.cancels, id)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if errors.Is(err, ErrNoReply) {
		return
	}
	resp := map[string]any{"subtype": "success", "request_id": id, "response": res}
	if err != nil {
		resp = map[string]any{"subtype": "error", "request_id": id, "error": err.Error()}
	}
	_ = c.Send(map[string]any{"type": "control_response", "response": resp})
}

package claudestream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// MaxLine bounds one line of the CLI's output (a tool result can be
// large).
const MaxLine = 64 << 20

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
	w  io.Writer
	h  Handler
	wm sync.Mutex

	mu      sync.Mutex
	next    int
	pending map[string]chan controlReply
	cancels map[string]context.CancelFunc
	done    chan struct{}
}

type controlReply struct {
	resp json.RawMessage
	err  error
}

// New starts reading r (the CLI's stdout); w is its stdin.
func New(r io.Reader, w io.Writer, h Handler) *Conn {
	c := &Conn{w: w, h: h, pending: map[string]chan controlReply{}, cancels: map[string]context.CancelFunc{}, done: make(chan struct{})}
	go c.read(r)
	return c
}

// Done is closed when the CLI's output ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Send writes one message line.
func (c *Conn) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("claude stream: %w", err)
	}
	c.wm.Lock()
	defer c.wm.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("claude stream: %w", err)
	}
	return nil
}

// Control sends a control_request and waits for its control_response.
func (c *Conn) Control(ctx context.Context, request any) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := "ama-" + strconv.Itoa(c.next)
	ch := make(chan controlReply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.Send(map[string]any{"type": "control_request", "request_id": id, "request": request}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, ErrClosed
	}
}

func (c *Conn) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		line := append(json.RawMessage(nil), sc.Bytes()...)
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
			continue // not JSON (a stray log line)
		}
		switch head.Type {
		case "control_response":
			if head.Response == nil {
				continue
			}
			c.mu.Lock()
			ch := c.pending[head.Response.RequestID]
			c.mu.Unlock()
			if ch != nil {
				rep := controlReply{resp: head.Response.Response}
				if head.Response.Subtype == "error" {
					rep.err = fmt.Errorf("claude: %s", head.Response.Error)
				}
				ch <- rep
			}
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
	c.mu.Lock()
	for _, cancel := range c.cancels {
		cancel()
	}
	c.mu.Unlock()
	close(c.done)
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

package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// Capabilities are the server capabilities announced in hello.
var Capabilities = []string{"approvals", "images", "plans", "compact_events"}

// Options configure a Server.
type Options struct {
	In      io.Reader
	Out     io.Writer
	Log     *zap.Logger
	Version string
	// Session is the session to serve first (constructed, not started).
	Session *session.Session
	// StartReason is the session_start reason of Session (default startup).
	StartReason string
	Models      *llm.Registry
	Broker      *Broker
	// Deps create the sessions of new_session, switch_session and fork.
	Deps   *session.Deps
	Writer WriterOptions
}

// Server speaks ama's stdio JSONL protocol for one host.
//
// One goroutine reads stdin and dispatches each command inline, in arrival
// order; handlers never block on a run (long work answers later through a
// reply callback invoked by the session). All output goes through one
// Writer. See doc.go for the full concurrency contract.
type Server struct {
	opts Options
	log  *zap.Logger
	w    *Writer

	mu      sync.Mutex
	cur     *session.Session
	unsub   func()
	caps    []string
	compact bool
	plans   bool // the client answers plan proposals

	pending sync.WaitGroup // replies still owed by asynchronous handlers
}

// NewServer prepares a server; Run starts it.
func NewServer(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.StartReason == "" {
		opts.StartReason = "startup"
	}
	if opts.Broker == nil {
		opts.Broker = NewBroker()
	}
	if opts.Models == nil {
		opts.Models = llm.NewRegistry()
	}
	opts.Writer.Log = opts.Log
	return &Server{opts: opts, log: opts.Log, caps: []string{}}
}

// Writer exposes the output writer (statistics for tests and benchmarks).
func (s *Server) Writer() *Writer { return s.w }

// ErrInterrupted is returned by Run when ctx ended (a signal) rather than
// stdin.
var ErrInterrupted = errors.New("interrupted")

// Run serves until stdin ends or ctx is cancelled, then shuts down in
// order: approvals are withdrawn, a started run finishes (or, when ctx was
// cancelled, is aborted), owed replies are written, and output is flushed.
func (s *Server) Run(ctx context.Context) error {
	s.w = NewWriter(s.opts.Out, s.opts.Writer)
	defer s.w.Close()
	s.w.Send(Hello{Type: "hello", ProtocolVersion: ProtocolVersion, Agent: "ama", Version: s.opts.Version, Capabilities: Capabilities})
	s.attach(s.opts.Session)
	if err := s.opts.Session.Start(s.opts.StartReason); err != nil {
		return fmt.Errorf("start session: %w", err)
	}

	lines := make(chan []byte, 64)
	go s.readLines(lines)
	interrupted := false
loop:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				break loop
			}
			s.dispatch(line)
		case <-ctx.Done():
			interrupted = true
			break loop
		}
	}
	s.shutdown(interrupted)
	if interrupted {
		return ErrInterrupted
	}
	return nil
}

// readLines feeds lines to the dispatcher; oversized lines become parse
// errors here so the reader never holds more than one line.
func (s *Server) readLines(out chan<- []byte) {
	defer close(out)
	lr := NewLineReader(s.opts.In, 0)
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, ErrLineTooLong):
			s.w.Send(Response{Type: "response", Command: "parse", Error: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)})
			continue
		case err != nil:
			if !errors.Is(err, io.EOF) {
				s.log.Warn("read stdin", zap.Error(err))
			}
			return
		}
		out <- bytes.Clone(line)
	}
}

func (s *Server) shutdown(interrupted bool) {
	s.opts.Broker.SetAttended(false)
	cur := s.current()
	if interrupted {
		cur.Abort(func() {})
	}
	s.pending.Wait()
	_ = cur.WaitIdle(context.Background())
	s.mu.Lock()
	if s.unsub != nil {
		s.unsub()
		s.unsub = nil
	}
	s.mu.Unlock()
	s.w.Flush()
}

func (s *Server) current() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// attach makes sess the current session and streams its events.
func (s *Server) attach(sess *session.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unsub != nil {
		s.unsub()
	}
	s.cur = sess
	s.unsub = sess.Subscribe(s.forward)
	sess.SetPlanAttended(s.plans) // attendance is re-applied after every switch
}

// forward writes one session event.
func (s *Server) forward(e events.Event) {
	if u, ok := e.(events.MessageUpdate); ok {
		ev := u.AssistantMessageEvent
		if ev.IsDelta() {
			s.w.SendDelta(ev.Type, ev.ContentIndex, ev.Delta, u.Usage)
			return
		}
		s.w.Send(wireMessageUpdate{Type: "message_update", AssistantMessageEvent: ev, Usage: u.Usage})
		return
	}
	if s.compactEvents() {
		e = compactEvent(e)
	}
	line, err := encodeEvent(e)
	if err != nil {
		s.log.Error("encode event", zap.Error(err))
		return
	}
	s.w.SendLine(line)
}

// wireMessageUpdate is the delta-only projection of message_update.
type wireMessageUpdate struct {
	Type                  string          `json:"type"`
	AssistantMessageEvent llm.StreamEvent `json:"assistantMessageEvent"`
	Usage                 *llm.Usage      `json:"usage,omitempty"`
}

func (s *Server) compactEvents() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compact
}

// command is one parsed input line.
type command struct {
	id   *string
	name string
	raw  []byte
}

// parseCommand validates the envelope. A non-empty second result is the
// error text of a parse response.
func parseCommand(line []byte) (*command, string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, "JSON parse failed: " + err.Error()
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, "missing type: a command must be a JSON object with a string \"type\""
	}
	// A map keeps key matching exact (struct decoding would also accept
	// "Type" or "ID").
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, "JSON parse failed: " + err.Error()
	}
	c := &command{raw: line}
	typ := env["type"]
	if len(typ) == 0 || typ[0] != '"' || json.Unmarshal(typ, &c.name) != nil {
		return nil, "missing type: a command must be a JSON object with a string \"type\""
	}
	if id := env["id"]; len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			c.id = &s
		}
	}
	return c, ""
}

func (s *Server) dispatch(line []byte) {
	c, perr := parseCommand(line)
	if perr != "" {
		s.w.Send(Response{Type: "response", Command: "parse", Error: perr})
		return
	}
	h, ok := handlers[c.name]
	if !ok {
		if pendingCommands[c.name] {
			s.fail(c, fmt.Errorf("%w: %s is not built yet", session.ErrNotImplemented, c.name))
			return
		}
		s.fail(c, coded{msg: "unknown command: " + c.name, err: errInvalidParams})
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("command handler panicked", zap.String("command", c.name), zap.Any("panic", r), zap.Stack("stack"))
			s.fail(c, fmt.Errorf("internal error in %s", c.name))
		}
	}()
	h(s, c)
}

// ok writes a success response.
func (s *Server) ok(c *command, data any) {
	s.w.Send(Response{ID: c.id, Type: "response", Command: c.name, Success: true, Data: data})
}

// fail writes an error response with the wire code of err.
func (s *Server) fail(c *command, err error) {
	s.w.Send(Response{ID: c.id, Type: "response", Command: c.name, Error: err.Error(), Code: ErrorCode(err)})
}

// answer writes ok or fail.
func (s *Server) answer(c *command, data any, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, data)
}

// later registers a reply the handler will give asynchronously; shutdown
// waits for it. The returned function must be called exactly once.
func (s *Server) later(c *command) func(data any, err error) {
	s.pending.Add(1)
	var once sync.Once
	return func(data any, err error) {
		once.Do(func() {
			s.answer(c, data, err)
			s.pending.Done()
		})
	}
}

// params decodes the command's parameters into the struct p. Keys match
// exactly: encoding/json would also fill a field from a key that differs
// only in case, which the protocol does not allow, so such keys are
// removed first.
func params(c *command, p any) error {
	raw := c.raw
	if folded := foldedKeys(raw, p); len(folded) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err == nil {
			for _, k := range folded {
				delete(m, k)
			}
			raw, _ = json.Marshal(m)
		}
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return fmt.Errorf("%w: %s", errInvalidParams, describeJSONError(err))
	}
	return nil
}

// foldedKeys returns the top-level keys of raw that match a JSON field
// name of the struct p only case-insensitively.
func foldedKeys(raw []byte, p any) []string {
	t := reflect.TypeOf(p).Elem()
	exact := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = t.Field(i).Name
		}
		exact[name] = true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []string
	for k := range m {
		if exact[k] {
			continue
		}
		for name := range exact {
			if strings.EqualFold(k, name) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	default:
		return "a number"
	}
}

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/session"
)

// Capabilities are the server capabilities announced in hello.
var Capabilities = []string{"approvals", "images", "hooks", "plans", "compact_events"}

// Options configure a Server.
type Options struct {
	In      io.Reader
	Out     io.Writer
	Log     *zap.Logger
	Version string
	// Sessions owns which sessions exist: its current one is served first
	// (opened and past Manager.Startup, not started yet); new_session,
	// switch_session, fork and approve_fresh switch through it.
	Sessions *session.Manager
	// StartReason is the session_start reason of the first session
	// (default startup).
	StartReason string
	Models      *llm.Registry
	Broker      *Broker
	Writer      stdio.WriterOptions
	// ShutdownGrace bounds the shutdown after a signal (zero:
	// stdio.DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Serving is called once hello and the startup session's
	// session_start are written, before any command is read: what was
	// announced before the server served (Send) goes out now.
	Serving func()
	// Settle is called at the end of input once the last run has
	// settled, before the output is flushed and closed: events that
	// follow the run's own (a host adapter's notifications from its
	// agent_settled handler) are written first. It bounds its own wait.
	Settle func()
	// Lang is the interface language of the human-readable message of
	// error responses (wirecode.Message; zero: English). Codes and
	// everything sent to the model do not depend on it.
	Lang i18n.Lang
	// Replay bounds the ring of each numbered session stream (capability
	// event_seq, replay.go; zero: stdio's defaults).
	Replay stdio.RingOptions
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
	w    *stdio.Writer

	mu    sync.Mutex // guards cur, unsub and feed
	cur   *session.Session
	unsub func()
	feed  *feed // the current session's event stream (replay.go)

	compact atomic.Bool                  // compact_events shapes (read under the bus lock)
	client  atomic.Pointer[capSet]       // the capabilities the client declared (gate)
	live    atomic.Pointer[stdio.Writer] // the writer while Run serves (Notify)
	plans   atomic.Bool                  // the client answers plan proposals
	durable atomic.Bool                  // the client may answer defer (capability durable_approvals)
	seqOn   atomic.Bool                  // event lines carry seq (capability event_seq, replay.go)

	tasksMu sync.Mutex
	tasks   []func()      // work posted to the dispatcher goroutine
	wake    chan struct{} // signals tasks (capacity 1)

	// Dispatcher-only state.
	switching bool     // a session switch is in flight
	deferred  [][]byte // lines held back until it ends

	pending stdio.Owed // replies still owed by asynchronous handlers
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
	opts.Writer.DeltaLine = appendDeltaLine
	s := &Server{opts: opts, log: opts.Log}
	s.pending.Log = opts.Log
	return s
}

// Writer exposes the output writer (statistics for tests and benchmarks).
func (s *Server) Writer() *stdio.Writer { return s.w }

// Run serves until stdin ends or ctx is cancelled, then shuts down in
// order: approvals are withdrawn, a started run finishes (or, when ctx was
// cancelled, is aborted), owed replies are written, output is flushed and
// the current session is closed. After a signal the shutdown gets
// Options.ShutdownGrace (stdio.Finish); a host that stopped reading cannot
// keep the process alive. It returns stdio.ErrInterrupted when ctx ended.
func (s *Server) Run(ctx context.Context) error {
	s.w = stdio.NewWriter(s.opts.Out, s.opts.Writer)
	s.wake = make(chan struct{}, 1)
	s.live.Store(s.w)
	defer s.live.Store(nil)
	s.w.Send(Hello{Type: "hello", ProtocolVersion: ProtocolVersion, Agent: "ama", Version: s.opts.Version, Capabilities: s.capabilities()})
	first := s.opts.Sessions.Current()
	s.attach(first)
	if err := first.Start(s.opts.StartReason); err != nil {
		s.w.Close()
		return fmt.Errorf("start session: %w", err)
	}
	if s.opts.Serving != nil {
		s.opts.Serving()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve(ctx)
	}()
	// The dispatcher may be blocked (e.g. by a host that does not read):
	// after a signal the run is aborted right away.
	return stdio.Finish(ctx, s.w, s.log, s.opts.ShutdownGrace, done, func() {
		s.opts.Broker.SetAttended(false)
		s.current().Abort(func() {})
	})
}

// MaxReadAheadBytes bounds the lines read from stdin but not yet
// dispatched. Small commands are never held back by it (the dispatcher
// does not block on runs); a host that pipes several 40 MiB prompts at once
// no longer has them all buffered in memory together.
const MaxReadAheadBytes = 1 << 20

// readAhead is the byte budget between the stdin reader and the
// dispatcher. One line is always let through, however long.
type readAhead struct {
	mu     sync.Mutex
	cond   *sync.Cond
	bytes  int
	max    int
	closed bool
}

func newReadAhead(max int) *readAhead {
	r := &readAhead{max: max}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// acquire waits until n more bytes fit (or nothing is outstanding).
func (r *readAhead) acquire(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.bytes > 0 && r.bytes+n > r.max && !r.closed {
		r.cond.Wait()
	}
	r.bytes += n
}

func (r *readAhead) release(n int) {
	r.mu.Lock()
	r.bytes -= n
	r.cond.Broadcast()
	r.mu.Unlock()
}

func (r *readAhead) close() {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
}

// Notify writes a notification event (a host adapter's ui.notify). It
// reports false when the server is not serving (before hello, after the
// shutdown), so the caller can fall back to stderr.
func (s *Server) Notify(level, message string) bool {
	return s.Send(events.Notification{Level: level, Message: message})
}

// Owed is what the server owes before it may shut down: a host adapter's
// deferred replies join it (host.SetOwed), so the shutdown waits for them
// as for its own.
func (s *Server) Owed() *stdio.Owed { return &s.pending }

// Send writes an event that no session publishes (a host adapter's
// notification, the startup SessionStart hooks' hook_executed). It
// reports false when the server is not serving (before hello, after the
// shutdown).
func (s *Server) Send(e events.Event) bool {
	w := s.live.Load()
	if w == nil {
		return false
	}
	line, err := encodeEvent(localize(e, s.opts.Lang))
	if err != nil {
		return false
	}
	w.SendLine(line)
	return true
}

// input is one item from the stdin reader.
type input struct {
	line    []byte
	tooLong bool
}

// serve is the dispatcher loop; it ends with the orderly shutdown.
func (s *Server) serve(ctx context.Context) {
	lines := make(chan input, 64)
	ahead := newReadAhead(MaxReadAheadBytes)
	defer ahead.close() // a reader waiting for room gives up
	go s.readLines(lines, ahead)
	in := (<-chan input)(lines)
	broken := s.w.Broken()
	interrupted := false
	for in != nil || s.switching {
		select {
		case it, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			s.accept(it)
			ahead.release(len(it.line))
		case <-broken:
			// The host closed stdout: a disconnect, handled like the end of
			// stdin (nothing more is read; a started run finishes, its
			// output discarded, its entries kept in the session file).
			s.log.Warn("stdout is closed: shutting down as on stdin EOF")
			broken, in = nil, nil
		case <-s.wake:
			s.runTasks()
		case <-ctx.Done():
			interrupted = true
		}
		if interrupted {
			break
		}
	}
	s.shutdown(interrupted)
}

// readLines feeds lines to the dispatcher, which answers oversized ones,
// so that every response is written in input order.
func (s *Server) readLines(out chan<- input, ahead *readAhead) {
	defer close(out)
	lr := stdio.NewLineReader(s.opts.In, 0)
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, stdio.ErrLineTooLong):
			out <- input{tooLong: true}
			continue
		case err != nil:
			if !errors.Is(err, io.EOF) {
				s.log.Warn("read stdin", zap.Error(err))
			}
			return
		}
		line = lr.Take(line)
		ahead.acquire(len(line))
		out <- input{line: line}
	}
}

// accept dispatches one input line, or holds it back while a session
// switch started by an earlier command is still in flight (commands that
// only read state or answer a pending question go through at once).
func (s *Server) accept(it input) {
	if it.tooLong {
		s.fail(parseCommandName, wirecode.Errorf(errParse, "line longer than %d bytes", stdio.MaxLineBytes))
		return
	}
	if s.switching {
		c, perr := parseCommand(it.line)
		if perr == "" && !passesSwitch[c.name] {
			s.deferred = append(s.deferred, it.line)
			return
		}
		s.run(c, perr) // parsed once
		return
	}
	s.dispatch(it.line)
}

// passesSwitch are the commands handled while a switch is in flight: they
// neither start work nor depend on which session is current afterwards.
var passesSwitch = map[string]bool{
	"permission_response": true, "abort": true, "abort_retry": true, "set_client_capabilities": true,
	"get_state": true, "get_messages": true, "get_last_assistant_text": true, "get_session_stats": true,
	"get_available_models": true, "get_available_thinking_levels": true, "get_commands": true, "get_skills": true,
	"get_tools": true, "get_entries": true, "get_tree": true, "get_fork_messages": true, "get_rewind_points": true,
	"get_plan": true, "get_todos": true, "get_tasks": true, "get_agents": true, "get_trace": true,
}

// beginSwitch holds back later commands until endSwitch (dispatcher only).
func (s *Server) beginSwitch() { s.switching = true }

// endSwitch releases the commands held back during a switch, in order
// (dispatcher only).
func (s *Server) endSwitch() {
	s.switching = false
	for len(s.deferred) > 0 && !s.switching {
		line := s.deferred[0]
		s.deferred = s.deferred[1:]
		s.dispatch(line)
	}
}

// onDispatcher runs f on the dispatcher goroutine. It never blocks: the
// caller is often a session actor the dispatcher may be waiting on.
func (s *Server) onDispatcher(f func()) {
	s.tasksMu.Lock()
	s.tasks = append(s.tasks, f)
	s.tasksMu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// runTasks runs the posted work in order (dispatcher only).
func (s *Server) runTasks() {
	for {
		s.tasksMu.Lock()
		if len(s.tasks) == 0 {
			s.tasksMu.Unlock()
			return
		}
		f := s.tasks[0]
		s.tasks = s.tasks[1:]
		s.tasksMu.Unlock()
		f()
	}
}

// waitPending waits for every owed reply while still running posted work,
// which some replies need (approve_fresh switches on the dispatcher).
func (s *Server) waitPending() {
	done := make(chan struct{})
	go func() {
		s.pending.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			s.runTasks()
			return
		case <-s.wake:
			s.runTasks()
		}
	}
}

func (s *Server) shutdown(interrupted bool) {
	s.opts.Broker.SetAttended(false)
	if interrupted {
		s.current().Abort(func() {})
	}
	s.waitPending()
	// Lines held back by a switch that a signal cut short are answered,
	// not dropped; nothing new starts during shutdown.
	for _, line := range s.deferred {
		if c, perr := parseCommand(line); perr == "" {
			s.fail(c, fmt.Errorf("%w: the server is shutting down", session.ErrClosed))
		}
	}
	s.deferred, s.switching = nil, false
	_ = s.current().WaitIdle(context.Background()) // a switch may have happened while replies were owed
	if s.opts.Settle != nil && !interrupted {
		s.opts.Settle()
		// What the host's handlers asked while settling (its owed
		// replies) and the run a messages.sendUser started end first.
		s.waitPending()
		_ = s.current().WaitIdle(context.Background())
	}
	// The exit order (session.Manager.Exit) while the stream is still
	// subscribed: SessionEnd's hook_executed is written too.
	s.opts.Sessions.Exit()
	s.mu.Lock()
	unsub := s.unsub
	s.unsub = nil
	s.mu.Unlock()
	if unsub != nil {
		unsub()
	}
	s.w.Flush()
}

func (s *Server) current() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// attach makes sess the current session and streams its events. The bus
// is never touched with s.mu held: forward runs under the bus lock.
func (s *Server) attach(sess *session.Session) {
	f := s.newFeed(sess)
	unsub := sess.Subscribe(f.forward)
	s.mu.Lock()
	old := s.unsub
	s.cur, s.unsub, s.feed = sess, unsub, f
	s.mu.Unlock()
	if old != nil {
		old()
	}
	sess.SetPlanAttended(s.plans.Load()) // attendance is re-applied after every switch
	sess.SetDurableApprovals(s.durable.Load())
}

// forward writes one session event, numbered in q's stream (nil: none).
func (s *Server) forward(e events.Event, q *stdio.Seq) {
	if s.declared().hides(e) {
		return
	}
	if s.opts.Broker != nil {
		switch pr := e.(type) {
		case events.PermissionRequest:
			s.opts.Broker.Expect(pr.RequestID) // open for the client from its line on
		case events.PermissionResolved:
			s.opts.Broker.Settled(pr.RequestID) // resolved elsewhere too (a host adapter, a timeout)
		}
	}
	if _, delta := e.(events.MessageUpdate); !delta && s.compact.Load() {
		e = compactEvent(e)
	}
	sendEventSeq(s.w, s.log, localize(e, s.opts.Lang), q)
}

// EventSink is a bus subscriber that writes every event to w in this
// protocol's wire shapes, full (never compact): print mode's stream-json.
// w must have been made with EventWriter.
func EventSink(w *stdio.Writer, log *zap.Logger) func(events.Event) {
	return func(e events.Event) {
		if capSet(nil).hides(e) {
			return // print mode declares no capability
		}
		sendEvent(w, log, e)
	}
}

// EventWriter starts a writer for EventSink (opt with this protocol's
// message_update delta line).
func EventWriter(out io.Writer, opt stdio.WriterOptions) *stdio.Writer {
	opt.DeltaLine = appendDeltaLine
	return stdio.NewWriter(out, opt)
}

// sendEvent enqueues one event line on w.
func sendEvent(w *stdio.Writer, log *zap.Logger, e events.Event) { sendEventSeq(w, log, e, nil) }

// sendEventSeq enqueues one event line on w, numbered in q's stream when
// it is written (nil q: no number).
func sendEventSeq(w *stdio.Writer, log *zap.Logger, e events.Event, q *stdio.Seq) {
	if u, ok := e.(events.MessageUpdate); ok {
		ev := u.AssistantMessageEvent
		if ev.IsDelta() {
			var usage any // a nil *llm.Usage is no usage, not a typed nil
			if u.Usage != nil {
				usage = u.Usage
			}
			w.SendDeltaSeq(ev.Type, ev.ContentIndex, ev.Delta, usage, q)
			return
		}
		w.SendSeq(wireMessageUpdate{Type: "message_update", AssistantMessageEvent: ev, Usage: u.Usage}, q)
		return
	}
	if n := hugeEventSize(e); n >= stdio.CollectBytes {
		w.WaitRoom(n) // build it once the previous huge line is out
	}
	line, err := encodeEvent(e)
	if err != nil {
		log.Error("encode event", zap.Error(err))
		return
	}
	w.SendLineSeq(line, q)
}

// wireMessageUpdate is the delta-only projection of message_update.
type wireMessageUpdate struct {
	Type                  string          `json:"type"`
	AssistantMessageEvent llm.StreamEvent `json:"assistantMessageEvent"`
	Usage                 *llm.Usage      `json:"usage,omitempty"`
}

// command is one parsed input line.
type command struct {
	id        *string
	name      string
	raw       []byte
	idTooLong bool // the id exceeds MaxIDBytes (then id is nil)
	// members are raw's top-level members, recorded by the scan that
	// validated it (params reads their keys instead of walking raw again).
	members []jsonobj.Member
}

// parseCommand validates the envelope. A non-empty second result is the
// error text of a parse response.
//
// One pass over the line: jsonobj.Scanner validates it as json.Valid does
// (its tests hold the two to the same verdict) and records the top-level
// members' spans as it goes, so "type" and "id" are read from the record.
// It was json.Valid (encoding/json's scanner, about 200 MB/s) and then
// jsonobj.Members over the line again: a 40 MiB prompt spent 200 ms of
// its 470 here. encoding/json has no call that validates and hands back
// the members' spans; it is only asked for the error text of a bad line.
func parseCommand(line []byte) (*command, string) {
	sc := scanners.Get().(*jsonobj.Scanner)
	defer scanners.Put(sc)
	switch sc.Scan(line) {
	case jsonobj.Invalid:
		var v any
		err := json.Unmarshal(line, &v)
		return nil, "JSON parse failed: " + err.Error()
	case jsonobj.Object:
	default:
		return nil, "missing type: a command must be a JSON object with a string \"type\""
	}
	// Exact key matching (struct decoding would also accept "Type" or
	// "ID"); the members are read in place, not copied. The last of a
	// repeated key wins, as in encoding/json.
	var typ, id *jsonobj.Member
	members := sc.Members(0)
	for i := range members {
		switch m := &members[i]; {
		case m.KeyIs(line, "type"):
			typ = m
		case m.KeyIs(line, "id"):
			id = m
		}
	}
	if typ == nil || !typ.IsString(line) {
		return nil, "missing type: a command must be a JSON object with a string \"type\""
	}
	// Str decodes a string as encoding/json does (invalid UTF-8 becomes
	// U+FFFD), without its decoder for the plain ones.
	c := &command{raw: line, name: typ.Str(line), members: slices.Clone(members)}
	if id != nil && id.IsString(line) {
		// Escapes make the raw form at most 6 bytes a byte longer (\u00xx)
		// and 12 a 3-byte character (a surrogate pair covers 4 bytes).
		if id.ValEnd-id.ValStart > 6*MaxIDBytes+2 {
			c.idTooLong = true
		} else if s := id.Str(line); len(s) > MaxIDBytes {
			c.idTooLong = true
		} else {
			c.id = &s
		}
	}
	return c, ""
}

// scanners are parseCommand's (a Scanner keeps its lists for the next line).
var scanners = sync.Pool{New: func() any { return new(jsonobj.Scanner) }}

// parseCommandName answers lines that are not commands: a response with
// command "parse", no id and no code (errParse has none).
var parseCommandName = &command{name: "parse"}

// MaxIDBytes bounds a command id (UTF-8 bytes). A longer id is refused with
// invalid_arguments, in a response without id: echoing megabytes back is
// no use to a host matching responses.
const MaxIDBytes = 1024

func (s *Server) dispatch(line []byte) {
	c, perr := parseCommand(line)
	s.run(c, perr)
}

// run answers a parse error or runs the command's handler.
func (s *Server) run(c *command, perr string) {
	if perr != "" {
		s.fail(parseCommandName, wirecode.Errorf(errParse, "%s", perr))
		return
	}
	if c.idTooLong {
		s.fail(c, wirecode.Localized(errInvalidParams, i18n.RPCIDTooLong, MaxIDBytes))
		return
	}
	h, ok := handlers[c.name]
	if !ok {
		if pendingCommands[c.name] {
			s.fail(c, wirecode.Localized(session.ErrNotImplemented, i18n.RPCNotBuilt, c.name))
			return
		}
		s.fail(c, wirecode.Localized(errInvalidParams, i18n.RPCUnknownCommand, c.name))
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("command handler panicked", zap.String("command", c.name), zap.Any("panic", r), zap.Stack("stack"))
			s.fail(c, wirecode.Localized(nil, i18n.RPCInternalError, c.name))
		}
	}()
	h(s, c)
}

// ok writes a success response. A result that cannot be encoded is
// answered with an encode_failed error instead of vanishing.
func (s *Server) ok(c *command, data any) {
	if w, ok := data.(selfWriting); ok {
		w.writeOK(s, c)
		return
	}
	line, err := encodeOK(c.id, c.name, data)
	if err != nil {
		s.log.Error("encode response", zap.String("command", c.name), zap.Error(err))
		s.fail(c, fmt.Errorf("%w: the %s result cannot be sent: %v", errEncode, c.name, err))
		return
	}
	s.w.SendLine(line)
}

// selfWriting is a result that writes its own response line (get_tree's,
// in pieces).
type selfWriting interface{ writeOK(s *Server, c *command) }

// fail writes an error response with the wire code of err.
func (s *Server) fail(c *command, err error) {
	s.w.Send(s.errorResponse(c, err))
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
// waits for it (and names it in the log while it is owed). The returned
// function must be called exactly once: a second call panics in tests and
// is logged otherwise (stdio.Reply).
func (s *Server) later(c *command) func(data any, err error) {
	what := c.name
	if c.id != nil {
		what += " " + *c.id
	}
	r := s.pending.Owe(what)
	// The reply needs only the id and name: not keeping c.raw (the whole
	// line, maybe a 50 MiB prompt) alive for as long as the reply is owed.
	c = &command{id: c.id, name: c.name}
	return func(data any, err error) {
		r.Send(func() { s.answer(c, data, err) })
	}
}

// params decodes the command's parameters into the struct p. Keys match
// exactly: encoding/json would also fill a field from a key that differs
// only in case, which the protocol does not allow, so such keys are
// removed first. A huge line's prompt literals stay out of the decode
// (lifting, jsonlit.Lift): the line was validated by parseCommand.
func params(c *command, p any) error {
	if _, ok := p.(*none); ok {
		return nil // an object (parseCommand) always decodes into struct{}
	}
	raw := c.raw
	folded := foldedKeys(c, p)
	if len(folded) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err == nil {
			for _, k := range folded {
				delete(m, k)
			}
			raw, _ = json.Marshal(m)
		}
	}
	var lifted *jsonlit.Lifted
	if l, ok := p.(lifting); ok && len(folded) == 0 && len(raw) >= liftBytes {
		if lifted = jsonlit.Lift(raw, l.liftPaths()...); lifted != nil {
			raw = lifted.Small
		}
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return fmt.Errorf("%w: %s", errInvalidParams, describeJSONError(err))
	}
	if l, ok := p.(lifting); ok {
		l.resolve(lifted)
	}
	return nil
}

// liftBytes is the line size from which params lifts huge literals.
const liftBytes = 1 << 20

// lifting is parameters with huge string literals (jsonlit.Lit members)
// kept out of encoding/json: liftPaths names their places (jsonlit.Lift),
// resolve gives the decoded Lits their literals back (nil: none lifted).
type lifting interface {
	liftPaths() []string
	resolve(*jsonlit.Lifted)
}

// exactKeys caches each parameter type's JSON field names.
var exactKeys sync.Map // reflect.Type → map[string]bool

// foldedKeys returns the top-level keys of the command that match a JSON
// field name of the struct p only case-insensitively.
func foldedKeys(c *command, p any) []string {
	t := reflect.TypeOf(p).Elem()
	e, ok := exactKeys.Load(t)
	if !ok {
		names := map[string]bool{}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" {
				name = t.Field(i).Name
			}
			names[name] = true
		}
		e, _ = exactKeys.LoadOrStore(t, names)
	}
	exact := e.(map[string]bool)
	var out []string
	folded := func(k string) {
		for name := range exact {
			if strings.EqualFold(k, name) {
				out = append(out, k)
				break
			}
		}
	}
	if c.members == nil { // a command not made by parseCommand (tests)
		jsonobj.Members(c.raw, func(k string, _ []byte) {
			if !exact[k] {
				folded(k)
			}
		})
		return out
	}
	for i := range c.members { // keys only: values are not copied
		m := &c.members[i]
		if raw := c.raw[m.KeyStart+1 : m.KeyEnd-1]; !m.KeyEsc && exact[string(raw)] {
			continue // the common case, without a string made of the key
		}
		if k := m.KeyString(c.raw); !exact[k] {
			folded(k)
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

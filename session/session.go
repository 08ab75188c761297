package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/armadra/ama-rpc/telemetry"
	"path/filepath"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// Session is one agent session. Its state is owned by a single actor
// goroutine; every command is a closure posted to the actor's mailbox and
// executed there in arrival order. Long work (model streams, tool runs,
// approval waits) happens on a separate runner goroutine per run, which
// reads and changes state only through the actor (Session.call).
//
// Command methods never block on a run: they take a reply callback that the
// session calls exactly once, at the point where the protocol says the
// answer is due (for prompt: once the run has started). Replies and events
// are therefore ordered exactly as the session produced them.
type Session struct {
	deps     *Deps
	log      *zap.Logger
	bus      *events.Bus
	id       string
	cwd      string
	approver Approver

	mailbox chan func(*state)
	quit    chan struct{} // closed by Close: the actor stops taking work
	done    chan struct{} // closed when the actor goroutine has exited
	closeMu sync.Once

	postMu  sync.Mutex // orders post against the actor's final drain
	closed  bool       // the actor took its last closure
	started bool       // the actor goroutine runs (the first post starts it)

	st *state // owned by the actor goroutine

	// tput measures the session's turn requests (fed by the runner,
	// read by Stats; safe for concurrent use).
	tput *telemetry.Throughput

	limits   runLimits // per-session turn/cost limits (Options, SetLimits)
	readOnly bool      // asks become denies (read-only sub-agents)
	// durableOn mirrors the actor's durable.on for the runner, so a
	// session without the capability makes no extra round trip per ask.
	durableOn atomic.Bool
	parent    bool  // a task child (depth 1): Stop hooks fire as SubagentStop
	tasks     Tasks // the registry of a root session (Deps.Tasks; nil: none)
	mcp       MCP   // the MCP servers of a root session (nil: none)

	outcomes outcomes // the current run's outcome (outcome.go)
	shown    shown    // settings as announced (shown.go)

	// modeNow is the actor's mode as approvals.Mode.Strictness
	// (mirrorMode); bound is a sub-agent's parent's mode now (nil: none).
	modeNow atomic.Int32
	bound   func() approvals.Mode

	// perm tallies the session's permission decisions (decision.go);
	// taskID is a sub-agent's task (decision records).
	perm   permTally
	taskID string
}

// mailboxSize bounds queued commands; a full mailbox makes senders wait
// (backpressure up to the stdin reader).
const mailboxSize = 256

// New creates a fresh in-memory session. Nothing is written until the
// first model request (lazy file creation); call Start to announce it.
func New(deps *Deps, opts Options) (*Session, error) {
	d := deps.withDefaults()
	cwd, err := filepath.Abs(opts.Cwd)
	if err != nil {
		return nil, fmt.Errorf("session cwd: %w", err)
	}
	if opts.SessionID != "" && d.Settings.Persist {
		// An id is one session (ACP, --resume and the host address it):
		// a chosen id that already names a file of this directory is
		// resumed, never reused. Only this directory: where --resume
		// looks first, and one listing, not one per project (the caller
		// that honours ama's --session-id looks everywhere).
		if path, ok := findInDir(store.SessionDir(d.Dirs.Sessions, cwd), opts.SessionID); ok {
			return nil, fmt.Errorf("%w: session %s is %s; resume it instead", store.ErrExists, opts.SessionID, path)
		}
	}
	id := d.sessionID(opts.SessionID)
	s := newSession(d, id, cwd, opts.Approver)
	st := newState(s, id, cwd, store.NewTree(nil, nil))
	if err := st.initSettings(opts); err != nil {
		return nil, err
	}
	st.eagerFile = opts.EagerFile && d.Settings.Persist
	s.linkTask(st, opts)
	s.attachMCP(opts)
	return s.launch(st), nil
}

// newSession prepares a session; approver overrides Deps.Approver when set.
func newSession(d *Deps, id, cwd string, approver Approver) *Session {
	if approver == nil {
		approver = d.Approver
	}
	if _, wrapped := approver.(hostFirst); d.Host != nil && !wrapped {
		approver = hostFirst{host: d.Host, next: approver}
	}
	s := &Session{
		tput:     telemetry.NewThroughput(d.Clock, !d.Settings.NoAnimation),
		deps:     d,
		log:      d.Log.With(zap.String("session", id)),
		approver: approver,
		bus:      events.NewBus(),
		id:       id,
		cwd:      cwd,
		mailbox:  make(chan func(*state), mailboxSize),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.outcomes.perms = &s.perm.counts
	s.bus.Subscribe(s.outcomes.note) // first: sees every event
	return s
}

// launch makes st the actor's state. The actor's goroutine starts with
// the first post (every command, Close included, is one): started here,
// it would park at once on the empty mailbox and be woken again by that
// post, one wake-up of another thread more per session (a fork's
// command paid it before returning).
func (s *Session) launch(st *state) *Session {
	s.st = st
	s.initShown(st)
	s.mirrorMode()
	if !s.parent {
		st.adoptLateTools()
	}
	return s
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Cwd returns the session working directory.
func (s *Session) Cwd() string { return s.cwd }

// Subscribe registers fn for the session's events (see events.Bus).
func (s *Session) Subscribe(fn func(events.Event)) (unsubscribe func()) {
	return s.bus.Subscribe(fn)
}

func (s *Session) publish(e events.Event) {
	s.shown.note(e)
	s.bus.Publish(e)
	// A task child's events reach the host through its parent (the
	// registry forwards its approvals); its own session_start must not
	// make the host follow the child.
	if h := s.deps.Host; h != nil && !s.parent {
		h.Observe(s, e)
	}
}

// fileCreated tells the session's owner that the session file now exists
// (lazily, at the first request, or at Start for eager sessions): a
// session_changed fact for whoever follows which session is current and
// where it lives. Today that is the host adapter (api.session.file(),
// ctx.sessionFile); issue 28's session manager takes it over. It is not
// published on the bus: ama's protocol transcripts carry no
// session_changed, clients read the path from get_state and the switch
// responses.
func (s *Session) fileCreated(path string) {
	if h := s.deps.Host; h != nil && !s.parent {
		h.Observe(s, events.SessionChanged{SessionID: s.id, SessionFile: path})
	}
}

// hostFirst asks the host adapter's broker before the session's approver.
type hostFirst struct {
	host Host
	next Approver
}

func (a hostFirst) Ask(ctx context.Context, req *events.PermissionRequest) events.Approval {
	if d, ok := a.host.Approve(ctx, req); ok {
		return d
	}
	if a.next == nil {
		return events.ApprovalDeny
	}
	return a.next.Ask(ctx, req)
}

func (s *Session) loop() {
	defer close(s.done)
	for {
		select {
		case f := <-s.mailbox:
			s.exec(f)
		case <-s.quit:
			// Drain what is already queued so no reply is lost; a post that
			// races the drain either lands before closed is set or fails.
			for {
				select {
				case f := <-s.mailbox:
					s.exec(f)
					continue
				default:
				}
				s.postMu.Lock()
				if len(s.mailbox) == 0 {
					s.closed = true
					s.postMu.Unlock()
					s.st.shutdown()
					return
				}
				s.postMu.Unlock()
			}
		}
	}
}

// exec runs f on the actor, turning a panic into a logged error so one bad
// command cannot take the server down.
func (s *Session) exec(f func(*state)) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("session command panicked", zap.Any("panic", r), zap.Stack("stack"))
		}
	}()
	f(s.st)
	s.mirrorMode()
}

// mirrorMode publishes the actor's permission mode for PermissionMode
// (an atomic store: the actor owns the mode, readers never wait on it).
func (s *Session) mirrorMode() {
	s.modeNow.Store(int32(s.st.mode.Strictness()))
}

// PermissionMode is the session's permission mode now, read without a
// mailbox round trip (a sub-agent's gate consults its parent's on every
// batch of tool calls).
func (s *Session) PermissionMode() approvals.Mode {
	if i := s.modeNow.Load(); i >= 0 && int(i) < len(approvals.Modes) {
		return approvals.Modes[i]
	}
	return approvals.ModePlan // unknown: the strictest
}

// post queues f for the actor. It reports false when the session is
// closed: then f will never run.
func (s *Session) post(f func(*state)) bool {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if s.closed {
		return false
	}
	if !s.started {
		s.started = true
		go s.loop()
	}
	s.mailbox <- f // the actor keeps draining until it sets closed
	return true
}

// ErrInternal reports a command that failed with a panic (logged).
var ErrInternal = errors.New("internal error")

// call runs f on the actor and waits for its result. It must never be
// called from the actor itself. A panic in f yields ErrInternal.
func call[T any](s *Session, f func(*state) T) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	if !s.post(func(st *state) {
		defer func() {
			if r := recover(); r != nil {
				ch <- result{err: fmt.Errorf("%w: %v", ErrInternal, r)}
				panic(r) // exec logs it
			}
		}()
		ch <- result{v: f(st)}
	}) {
		var zero T
		return zero, ErrClosed
	}
	res := <-ch
	return res.v, res.err
}

// do runs f on the actor and waits until it has run.
func (s *Session) do(f func(*state)) error {
	_, err := call(s, func(st *state) struct{} { f(st); return struct{}{} })
	return err
}

// Close aborts a running turn, waits for it to settle, releases the session
// file and stops the actor. It is safe to call more than once.
func (s *Session) Close() {
	defer s.closeMCP()
	if s.tasks != nil {
		s.tasks.Close() // children first: a foreground task ends its tool call
	}
	idle := make(chan struct{})
	if !s.post(func(st *state) {
		st.closing = true
		st.stopExpiry() // durable requests stay open in the file
		st.abortRun()
		st.whenIdle(func() { close(idle) })
	}) {
		<-s.done
		return
	}
	<-idle
	s.closeMu.Do(func() { close(s.quit) })
	<-s.done
}

// WaitIdle blocks until no run is active (or ctx ends).
func (s *Session) WaitIdle(ctx context.Context) error {
	idle := make(chan struct{})
	if !s.post(func(st *state) { st.whenIdle(func() { close(idle) }) }) {
		return ErrClosed
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// modelRef returns the wire identity of a model.
func modelRef(m *llm.Model) *llm.ModelRef {
	if m == nil {
		return nil
	}
	return &llm.ModelRef{Provider: m.Provider, ID: m.ID}
}

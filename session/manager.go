package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/hooks"
)

// Manager is the one owner of which root sessions exist: it builds them
// (Open), announces them (Start, Startup), makes one current (Switch) and
// ends them (Close, Exit). The order of the SessionStart/SessionEnd hooks
// and of the host adapter's session events is decided here, and only here:
//
//   - start: session_start (the protocol's stream and the host), then the
//     SessionStart hooks (their additionalContext becomes the system
//     prompt's hooks section), then the session's first entries;
//   - switch: SessionEnd{new|switch} on the current session while it is
//     still open, the current session closed, then the next one's start;
//   - exit: the host's session_shutdown, SessionEnd{exit} on every open
//     session (still open: its id, cwd and model are real, the hook runs
//     in its project), the host disposed, the sessions closed.
//
// Hook results reach the protocol's stream as hook_executed events on the
// session's own bus. Task children are not the manager's: the sub-agent
// registry (package agents) builds and ends them.
//
// A Manager is safe for concurrent use (ACP opens and closes sessions on
// several goroutines); its methods block on hooks and on the sessions'
// actors, so they must never be called from a session's actor.
type Manager struct {
	deps *Deps

	mu       sync.Mutex
	open     map[*Session]*opened // the sessions that exist
	opens    uint64               // sessions opened so far
	cur      *Session             // the current one (the last started)
	shutdown bool                 // the host has had session_shutdown
}

// opened is the manager's record of one session.
type opened struct {
	n       uint64 // opening order (Exit ends them in it)
	started bool
}

// NewManager returns the manager of the sessions built with deps.
func NewManager(deps *Deps) *Manager {
	return &Manager{deps: deps, open: map[*Session]*opened{}}
}

// Deps are the dependencies the manager's sessions share.
func (m *Manager) Deps() *Deps { return m.deps }

// OpenKind is what Open builds.
type OpenKind int

const (
	// OpenNew is a fresh session (session_start reason new or startup).
	OpenNew OpenKind = iota
	// OpenResume reopens the session file at Spec.Path (reason resume).
	OpenResume
	// OpenFork copies Spec.From's branch up to Spec.EntryID into a new
	// session (reason fork).
	OpenFork
	// OpenFreshPlan is a fresh session for an approved plan
	// (approve_fresh): Spec.Plan's mode, then Session.AdoptPlan (reason
	// new).
	OpenFreshPlan
)

// Spec says which session Open builds.
type Spec struct {
	Kind    OpenKind
	Options Options
	Path    string     // OpenResume
	From    *Session   // OpenFork
	EntryID string     // OpenFork
	Plan    *FreshPlan // OpenFreshPlan
}

// Reason is the session_start reason of a session of this kind.
func (k OpenKind) Reason() string {
	switch k {
	case OpenResume:
		return "resume"
	case OpenFork:
		return "fork"
	}
	return "new"
}

// Open builds a session; it exists from now on (Close or Exit ends it)
// but is neither announced nor current until Start, Startup or Switch.
func (m *Manager) Open(sp Spec) (*Session, error) {
	var s *Session
	var err error
	switch sp.Kind {
	case OpenNew:
		s, err = New(m.deps, sp.Options)
	case OpenFreshPlan:
		if sp.Plan == nil {
			return nil, errors.New("session: OpenFreshPlan without a plan")
		}
		o := sp.Options
		o.PermissionMode = sp.Plan.Mode
		s, err = New(m.deps, o)
	case OpenResume:
		s, err = Open(m.deps, sp.Path, sp.Options)
	case OpenFork:
		if sp.From == nil {
			return nil, errors.New("session: OpenFork without a session")
		}
		s, err = sp.From.fork(sp.EntryID, sp.Options)
	default:
		return nil, fmt.Errorf("session: unknown open kind %d", sp.Kind)
	}
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.opens++
	m.open[s] = &opened{n: m.opens}
	m.mu.Unlock()
	return s, nil
}

// Current is the current session (nil before the first start).
func (m *Manager) Current() *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}

// Sessions are the open sessions in opening order; started only: those
// announced so far.
func (m *Manager) Sessions(started bool) []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Session, 0, len(m.open))
	for s, o := range m.open {
		if o.started || !started {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *Session) int { return cmp.Compare(m.open[a].n, m.open[b].n) })
	return out
}

// ErrStartBlocked: a SessionStart hook blocked the process's startup
// session (Startup). The text is the hook's reason.
var ErrStartBlocked = errors.New("hook_failed")

// Startup makes s, the process's first session, current in ama's startup
// order: host (nil: none) delivers the host adapter's session_start,
// awaited before the protocol's hello (its error is returned as it is,
// before any hook ran), then s's SessionStart{reason} hooks run; a block
// fails it (ErrStartBlocked) and the caller ends the process. The host
// does not get the session's own session_start again, so the protocol
// calls Session.Start once it serves, for the stream's session_start and
// the first entries. The hooks' hook_executed events are published on
// s's bus before the protocol subscribes: the caller subscribes first to
// keep them.
func (m *Manager) Startup(s *Session, reason string, host func() error) error {
	if host != nil {
		if err := host(); err != nil {
			return err
		}
	}
	if !m.started(s) {
		return fmt.Errorf("%w: the session was not opened by this manager", ErrClosed)
	}
	res := s.runHooks(context.Background(), hooks.SessionStart, hooks.SessionStartInput{Source: reason}, "", nil)
	if res == nil {
		return nil
	}
	if res.Blocked() {
		why := res.Reason
		if why == "" {
			why = "a SessionStart hook blocked startup"
		}
		return fmt.Errorf("%w: %s", ErrStartBlocked, why)
	}
	if res.AdditionalContext != "" {
		s.SetHookContext(res.AdditionalContext)
	}
	return nil
}

// Start announces s and makes it current: its session_start, then its
// SessionStart{reason} hooks (a block is ignored: the session exists
// already), then its first entries. The caller subscribes to s first.
func (m *Manager) Start(s *Session, reason string) error {
	if !m.started(s) {
		return fmt.Errorf("%w: the session was not opened by this manager", ErrClosed)
	}
	if err := s.announce(reason); err != nil {
		return err
	}
	if res := s.runHooks(context.Background(), hooks.SessionStart, hooks.SessionStartInput{Source: reason}, "", nil); res != nil && res.AdditionalContext != "" {
		s.SetHookContext(res.AdditionalContext)
	}
	return s.begin()
}

// Switch replaces the current session by next (opened, not started):
// SessionEnd{new|switch} on the current one, which is then closed, attach
// (the protocol subscribes to next), then Start(next, reason). When next
// cannot take commands the switch is rolled back before anything
// happened: next is closed, the current session stays. A switch to the
// current session announces it again, without hooks.
func (m *Manager) Switch(next *Session, reason string, attach func(*Session)) error {
	old := m.Current()
	if next == old {
		return next.announce(reason)
	}
	if err := next.do(func(*state) {}); err != nil { // rollback point
		m.forget(next)
		next.Close()
		return err
	}
	if old != nil {
		why := "switch"
		if reason == "new" {
			why = "new"
		}
		m.end(old, why)
	}
	attach(next)
	return m.Start(next, reason)
}

// Close ends s: SessionEnd{reason} while it is still open (a session that
// was never started has none), then it is closed and forgotten. Safe to
// call more than once.
func (m *Manager) Close(s *Session, reason string) {
	m.end(s, reason)
}

// started marks s, an open session, started and current; false: s is
// not open.
func (m *Manager) started(s *Session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.open[s]
	if o == nil {
		return false
	}
	o.started, m.cur = true, s
	return true
}

// end runs SessionEnd for s when it was started, closes it and forgets it.
func (m *Manager) end(s *Session, reason string) {
	m.mu.Lock()
	o := m.open[s]
	m.mu.Unlock()
	if o != nil && o.started {
		s.runHooks(context.Background(), hooks.SessionEnd, hooks.SessionEndInput{Reason: reason}, "", nil)
	}
	m.forget(s)
	s.Close()
}

func (m *Manager) forget(s *Session) {
	m.mu.Lock()
	delete(m.open, s)
	if m.cur == s {
		m.cur = nil
	}
	m.mu.Unlock()
}

// hostExitWait bounds the host's session_shutdown handlers and dispose.
const hostExitWait = 10 * time.Second

// Exit ends the process's sessions in ama's exit order: the host's
// session_shutdown (awaited, bounded), SessionEnd{exit} on every open
// session, the host disposed, then the sessions closed. Later calls (a
// signal cut the first short) only close what is still open.
func (m *Manager) Exit() {
	m.mu.Lock()
	first := !m.shutdown
	m.shutdown = true
	m.mu.Unlock()
	if first {
		h := m.deps.Host
		if h != nil {
			ctx, cancel := context.WithTimeout(context.Background(), hostExitWait)
			h.SessionShutdown(ctx)
			cancel()
		}
		for _, s := range m.Sessions(true) {
			s.runHooks(context.Background(), hooks.SessionEnd, hooks.SessionEndInput{Reason: "exit"}, "", nil)
		}
		if h != nil {
			ctx, cancel := context.WithTimeout(context.Background(), hostExitWait)
			h.Dispose(ctx)
			cancel()
		}
	}
	for _, s := range m.Sessions(false) {
		m.forget(s)
		s.Close()
	}
}

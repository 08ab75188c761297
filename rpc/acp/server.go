package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/session"
)

// Options configure a Server.
type Options struct {
	In  io.Reader
	Out io.Writer
	Log *zap.Logger
	// Version is reported in agentInfo.
	Version string
	// Lang is the interface language of error messages with a fixed text
	// (wirecode.Message; zero: English). Codes never depend on it.
	Lang i18n.Lang
	// Sessions owns which sessions exist: session/new, load and resume
	// open and start them through it, session/close and the shutdown end
	// them (session.Manager: the hook and host-event order).
	Sessions *session.Manager
	// Base are the options of new sessions: Cwd is the start directory
	// (the only cwd served), plus model, thinking level, permission mode
	// and active tools. Base.Approver and Base.SessionID are ignored.
	Base session.Options
	// StartupID is the id the first session/new takes (the process's
	// startup session, e.g. from --session-id); empty: a fresh id.
	StartupID string
	// Now is the clock of updatedAt stamps (default time.Now).
	Now func() time.Time
	// Writer bounds the output queue (zero: defaults).
	Writer stdio.WriterOptions
	// MaxLineBytes bounds one input line (0: stdio.MaxLineBytes).
	MaxLineBytes int
	// ShutdownGrace bounds the shutdown after a signal (zero:
	// stdio.DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Boot, when set, is a start-up still to finish: the process found no
	// usable model. initialize is answered as usual (no auth methods);
	// the session methods retry Boot first (gate.go) and answer -32000
	// while it fails with ErrNoModel. Its Ready replaces Deps, Base
	// (Base.Cwd must already be the start directory) and StartupID.
	Boot func() (Ready, error)
	// BootRetry is the least time between two Boot attempts (zero: one
	// second, as ama).
	BootRetry time.Duration
	// Settle is called at the end of input once the running turns have
	// finished, before the sessions and the connection close: notices
	// that follow a run (a host adapter's, from its agent_settled handler)
	// are sent first. It bounds its own wait.
	Settle func()
}

// Server serves ACP v1 on one connection. See doc.go for the concurrency
// contract.
type Server struct {
	opts     Options
	log      *zap.Logger
	startDir string // Base.Cwd with symlinks resolved

	noticeMu sync.Mutex
	noticeTo string         // the session notices go to ("" before the first)
	notices  []noticeParams // queued until the first session is announced

	w      *stdio.Writer
	stream *Stream
	conn   *jsonrpc2.Conn
	ready  chan struct{} // closed once conn is set
	nextID atomic.Uint64

	// detached is closed when nobody can answer permission asks any more
	// (end of input or shutdown).
	detached     chan struct{}
	detachedOnce sync.Once

	closing atomic.Bool // shutdown has begun: no new sessions or prompts
	durable atomic.Bool // the client declared _meta "ama/durableApprovals" (durable.go)

	// Start-up still to finish (Options.Boot); read-loop only.
	booted  bool
	bootErr error
	bootAt  time.Time

	mu             sync.Mutex
	sessions       map[string]*acpSession
	startupClaimed bool

	// work counts owed replies (named in the log while shutdown waits)
	// and background finishers; shutdown waits for it before the
	// connection closes.
	work stdio.Owed

	seqs seqStreams // numbered session updates (seq.go)
}

// NewServer prepares a server; Run starts it.
func NewServer(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Writer.Log = opts.Log
	s := &Server{opts: opts, log: opts.Log, sessions: map[string]*acpSession{}, detached: make(chan struct{}), ready: make(chan struct{})}
	s.startDir = realDir(opts.Base.Cwd)
	s.work.Log = opts.Log
	return s
}

// realDir returns dir absolute and with symlinks resolved (as given when
// that fails).
func realDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}

// Run serves until the input ends, the output breaks or ctx is
// cancelled, then shuts down in order (see shutdown). It returns
// stdio.ErrInterrupted when ctx ended (a signal), also when the signal came
// during a shutdown already under way.
//
// A closed stdout (EPIPE) is a disconnect, handled like the end of input:
// running turns finish, their output discarded, their entries kept. After
// a signal the shutdown gets Options.ShutdownGrace (stdio.Finish): a host
// that stopped reading cannot keep the process alive.
func (s *Server) Run(ctx context.Context) error {
	s.w = stdio.NewWriter(s.opts.Out, s.opts.Writer)
	s.stream = NewStream(s.opts.In, s.w, s.opts.MaxLineBytes, s.log)
	// The connection's lifetime is ours to decide: a cancelled ctx must
	// not close it before the owed replies are written.
	s.conn = jsonrpc2.NewConn(context.WithoutCancel(ctx), s.stream, s,
		jsonrpc2.SetLogger(zap.NewStdLog(s.log.Named("jsonrpc2"))))
	close(s.ready)

	interrupted := false
	select {
	case <-s.stream.EOF():
	case <-s.w.Broken():
		s.log.Warn("stdout is closed: shutting down as at the end of input")
	case <-ctx.Done():
		interrupted = true
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.shutdown(interrupted)
	}()
	return stdio.Finish(ctx, s.w, s.log, s.opts.ShutdownGrace, done, func() {
		if interrupted {
			return // shutdown aborts the turns itself
		}
		// A signal during the orderly shutdown: the turns it waits for
		// are aborted now.
		for _, as := range s.sessionList() {
			as.stop(true)
		}
	})
}

// shutdown ends the connection in order: permission asks are withdrawn
// (denied), queued prompts are answered cancelled, running turns finish
// (or, when interrupted, are aborted and answered cancelled), every owed
// reply is written, the sessions are closed and the output is flushed.
func (s *Server) shutdown(interrupted bool) {
	s.closing.Store(true)
	s.detach()
	for _, as := range s.sessionList() {
		as.stop(interrupted)
	}
	s.work.Wait()
	if s.opts.Settle != nil && !interrupted {
		s.opts.Settle()
		s.work.Wait() // the replies the host's handlers asked for while settling
	}
	if s.opts.Sessions != nil {
		// The exit order (host session_shutdown, SessionEnd{exit} of every
		// open session, host dispose, sessions closed) before each
		// session's own bookkeeping ends.
		s.opts.Sessions.Exit()
	}
	for _, as := range s.sessionList() {
		as.close()
	}
	s.work.Wait()
	_ = s.conn.Close()
	s.w.Flush()
}

// Owed is what the server owes before it may shut down: a host adapter's
// deferred replies join it (host.SetOwed), so the shutdown waits for them
// as for its own.
func (s *Server) Owed() *stdio.Owed { return &s.work }

// deps are the sessions' shared dependencies (nil before a start-up
// without a model has finished).
func (s *Server) deps() *session.Deps {
	if s.opts.Sessions == nil {
		return nil
	}
	return s.opts.Sessions.Deps()
}

// stopping reports whether shutdown has begun.
func (s *Server) stopping() bool { return s.closing.Load() }

// detach marks that nobody answers permission asks any more.
func (s *Server) detach() { s.detachedOnce.Do(func() { close(s.detached) }) }

func (s *Server) sessionList() []*acpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*acpSession, 0, len(s.sessions))
	for _, as := range s.sessions {
		out = append(out, as)
	}
	return out
}

// session returns the open session id.
func (s *Server) session(id string) (*acpSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if as, ok := s.sessions[id]; ok && !as.isClosing() {
		return as, nil
	}
	return nil, localized(errUnknownSession, i18n.ACPErrSessionNotOpen, id)
}

// requestID returns the id jsonrpc2 holds for a request id as the client
// writes it (Stream.RequestID; without a stream, its plain decoding).
func (s *Server) requestID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	if s.stream != nil {
		return s.stream.RequestID(raw)
	}
	var id jsonrpc2.ID
	return id, json.Unmarshal(raw, &id) == nil
}

// newID returns the id of our next request to the client (1, 2, …).
func (s *Server) newID() jsonrpc2.ID { return jsonrpc2.ID{Num: s.nextID.Add(1)} }

// notify sends a session/update. Errors (a closed connection) are logged.
func (s *Server) notify(sessionID string, update any) {
	if q := s.seqOf(sessionID); q != nil {
		s.notifySeq(q, sessionID, update)
		return
	}
	if err := s.conn.Notify(context.Background(), "session/update", notification{SessionID: sessionID, Update: update}); err != nil {
		s.log.Debug("session/update not sent", zap.Error(err))
	}
}

// background runs f on a goroutine that shutdown waits for.
func (s *Server) background(f func()) {
	s.work.Add(1)
	go func() {
		defer s.work.Done()
		f()
	}()
}

// Handle implements jsonrpc2.Handler. It runs inline in the connection's
// read loop: handlers validate, record and enqueue, and answer either at
// once or later (see doc.go).
func (s *Server) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	<-s.ready // NewConn starts reading before it returns
	c := s.newCall(req)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("ACP handler panicked", zap.String("method", req.Method), zap.Any("panic", r), zap.Stack("stack"))
			c.fail(errors.New("internal error in " + req.Method))
		}
	}()
	h, ok := methods[req.Method]
	if ok && !s.gate(c) {
		return
	}
	if !ok {
		if req.Notif {
			s.log.Debug("ignored notification", zap.String("method", req.Method))
		}
		c.fail(localized(errMethodNotFound, i18n.ACPErrMethodNotFound, req.Method))
		return
	}
	h(s, c)
}

// call is one inbound request or notification. reply or fail must be
// called exactly once (a second answer panics in tests and is logged
// otherwise: stdio.Reply); for a notification they only release the
// bookkeeping.
type call struct {
	s   *Server
	req *jsonrpc2.Request
	r   *stdio.Reply
	// params are the request's params when the stream parked them (a
	// huge request, Stream.park); nil: req.Params. Handlers that keep the
	// call past decoding drop them (a sub-slice of a huge line).
	params []byte
}

func (s *Server) newCall(req *jsonrpc2.Request) *call {
	what := req.Method
	if !req.Notif {
		what += " " + req.ID.String()
	}
	c := &call{s: s, req: req, r: s.work.Owe(what)}
	if s.stream != nil {
		c.params = s.stream.TakeParams()
	}
	return c
}

// reply answers with result.
func (c *call) reply(result any) {
	c.r.Send(func() {
		if c.req.Notif {
			return
		}
		if err := c.s.conn.Reply(context.Background(), c.req.ID, result); err != nil {
			c.s.log.Debug("reply not sent", zap.String("method", c.req.Method), zap.Error(err))
		}
	})
}

// fail answers with the JSON-RPC error of err.
func (c *call) fail(err error) {
	c.r.Send(func() {
		if c.req.Notif {
			return
		}
		if err := c.s.conn.ReplyWithError(context.Background(), c.req.ID, wireError(err, c.s.opts.Lang)); err != nil {
			c.s.log.Debug("error reply not sent", zap.String("method", c.req.Method), zap.Error(err))
		}
	})
}

// answer replies with result, or fails with err when it is not nil.
func (c *call) answer(result any, err error) {
	if err != nil {
		c.fail(err)
		return
	}
	c.reply(result)
}

// empty is the {} result of methods without data.
type empty struct{}

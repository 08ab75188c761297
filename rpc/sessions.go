package rpc

import (
	"fmt"
	"path/filepath"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

type sessionRef struct {
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"`
}

// idle fails with busy while the current session runs.
func (s *Server) idle(c *command) bool {
	busy, err := s.current().Busy()
	if err == nil && busy {
		err = fmt.Errorf("%w: a run is active; abort it or wait for agent_settled", session.ErrBusy)
	}
	if err != nil {
		s.fail(c, err)
		return false
	}
	return true
}

// switchTo makes next (opened by the manager) the current session in
// the manager's order (session.Manager.Switch: the old session's
// SessionEnd and close, this stream subscribed to next, its session_start
// and SessionStart), then answers. A failed switch leaves the old session
// current.
func (s *Server) switchTo(c *command, next *session.Session, reason string) {
	if err := s.opts.Sessions.Switch(next, reason, s.attach); err != nil {
		s.fail(c, err)
		return
	}
	file, _ := next.SessionFile()
	s.ok(c, sessionRef{SessionID: next.ID(), SessionFile: file})
	if s.durable.Load() {
		next.ReopenApprovals(false) // its open durable requests, before anything else it does
	}
}

// open opens a session of kind with the current session's settings
// (adjust may change them) and switches to it.
func (s *Server) open(c *command, sp session.Spec, adjust func(*session.Options)) {
	opts, err := s.current().Settings()
	if err != nil {
		s.fail(c, err)
		return
	}
	if adjust != nil {
		adjust(&opts)
	}
	sp.Options = opts
	next, err := s.opts.Sessions.Open(sp)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.switchTo(c, next, sp.Kind.Reason())
}

func handleNewSession(s *Server, c *command) {
	if !s.idle(c) {
		return
	}
	s.open(c, session.Spec{Kind: session.OpenNew}, nil)
}

func handleSwitchSession(s *Server, c *command) {
	var p switchSessionParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	if p.SessionPath == "" {
		s.fail(c, wirecode.Errorf(errInvalidParams, "sessionPath must be a non-empty string"))
		return
	}
	if !s.idle(c) {
		return
	}
	cur := s.current()
	path, _ := filepath.Abs(p.SessionPath)
	if file, _ := cur.SessionFile(); file != "" && file == path {
		s.switchTo(c, cur, "resume") // already open: announce it again
		return
	}
	s.open(c, session.Spec{Kind: session.OpenResume, Path: path}, func(o *session.Options) { o.Cwd, o.ThinkingLevel = "", "" })
}

func handleFork(s *Server, c *command) {
	var p forkParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	if !s.idle(c) {
		return
	}
	s.open(c, session.Spec{Kind: session.OpenFork, From: s.current(), EntryID: p.EntryID}, nil)
}

func handleGetEntries(s *Server, c *command) {
	var p entriesParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	entries, leaf, err := s.current().Entries(p.Since)
	if entries == nil {
		entries = []*store.Entry{}
	}
	s.answer(c, entriesResult{entries, leaf}, err)
}

func handleGetTree(s *Server, c *command) {
	tree, err := s.current().TreeJSON()
	if err != nil {
		s.fail(c, err)
		return
	}
	// Deep trees exceed encoding/json's nesting limit; the store writes
	// them itself. A long session's tree is as large as its file, so the
	// line is never built: the writer writes it piece by piece as the
	// store produces them (the nodes and entries are immutable).
	head := append(appendOKHead(nil, c.id, c.name), `{"tree":`...)
	s.w.SendPieces(len(head)+tree.Len()+len("}}\n"), func(emit func([]byte)) {
		emit(head)
		tree.WriteTo(stdio.ChunkSize, emit)
		emit([]byte("}}\n"))
	})
}

func handleSetSessionName(s *Server, c *command) {
	var p nameParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	name, err := s.current().SetName(p.Name)
	s.answer(c, nameParams{name}, err)
}

func handleForkMessages(s *Server, c *command) {
	msgs, err := s.current().ForkMessages()
	out := make([]wireForkMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, wireForkMessage{m.EntryID, m.Text})
	}
	s.answer(c, forkMessagesResult{out}, err)
}

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
func (s *Server) idle() error {
	busy, err := s.current().Busy()
	if err == nil && busy {
		err = fmt.Errorf("%w: a run is active; abort it or wait for agent_settled", session.ErrBusy)
	}
	return err
}

// switchTo makes next (opened by the manager) the current session in
// the manager's order (session.Manager.Switch: the old session's
// SessionEnd and close, this stream subscribed to next, its session_start
// and SessionStart); the answer follows. A failed switch leaves the old
// session current.
func (s *Server) switchTo(next *session.Session, reason string) (sessionRef, error) {
	if err := s.opts.Sessions.Switch(next, reason, s.attach); err != nil {
		return sessionRef{}, err
	}
	file, _ := next.SessionFile()
	return sessionRef{SessionID: next.ID(), SessionFile: file}, nil
}

// open opens a session of kind with the current session's settings
// (adjust may change them) and switches to it.
func (s *Server) open(sp session.Spec, adjust func(*session.Options)) (sessionRef, error) {
	opts, err := s.current().Settings()
	if err != nil {
		return sessionRef{}, err
	}
	if adjust != nil {
		adjust(&opts)
	}
	sp.Options = opts
	next, err := s.opts.Sessions.Open(sp)
	if err != nil {
		return sessionRef{}, err
	}
	return s.switchTo(next, sp.Kind.Reason())
}

// answerSwitch answers a command that switched sessions, then (durable
// approvals) sends the new current session's open requests again, before
// anything else it does.
func (s *Server) answerSwitch(reply reply, ref sessionRef, err error) {
	if err != nil {
		reply(nil, err)
		return
	}
	reply(ref, nil)
	if s.durable.Load() {
		s.current().ReopenApprovals(false)
	}
}

func handleNewSession(s *Server, _ *command, _ *none, reply reply) {
	if err := s.idle(); err != nil {
		reply(nil, err)
		return
	}
	ref, err := s.open(session.Spec{Kind: session.OpenNew}, nil)
	s.answerSwitch(reply, ref, err)
}

func handleSwitchSession(s *Server, _ *command, p *switchSessionParams, reply reply) {
	if p.SessionPath == "" {
		reply(nil, wirecode.Errorf(errInvalidParams, "sessionPath must be a non-empty string"))
		return
	}
	if err := s.idle(); err != nil {
		reply(nil, err)
		return
	}
	cur := s.current()
	path, _ := filepath.Abs(p.SessionPath)
	if file, _ := cur.SessionFile(); file != "" && file == path {
		ref, err := s.switchTo(cur, "resume") // already open: announce it again
		s.answerSwitch(reply, ref, err)
		return
	}
	ref, err := s.open(session.Spec{Kind: session.OpenResume, Path: path}, func(o *session.Options) { o.Cwd, o.ThinkingLevel = "", "" })
	s.answerSwitch(reply, ref, err)
}

func handleFork(s *Server, _ *command, p *forkParams, reply reply) {
	if err := s.idle(); err != nil {
		reply(nil, err)
		return
	}
	ref, err := s.open(session.Spec{Kind: session.OpenFork, From: s.current(), EntryID: p.EntryID}, nil)
	s.answerSwitch(reply, ref, err)
}

func handleGetEntries(s *Server, _ *command, p *entriesParams) (any, error) {
	entries, leaf, err := s.current().Entries(p.Since)
	if entries == nil {
		entries = []*store.Entry{}
	}
	return entriesResult{entries, leaf}, err
}

// treeAnswer is get_tree's result, which writes its own response line.
// Deep trees exceed encoding/json's nesting limit; the store writes them
// itself. A long session's tree is as large as its file, so the line is
// never built: the writer writes it in vectors as the store produces
// them, the entries' stored bytes among the pieces (the nodes and entries
// are immutable).
type treeAnswer struct{ tree store.NodesJSON }

func (t treeAnswer) writeOK(s *Server, c *command) {
	head := stdio.ValidUTF8(append(appendOKHead(nil, c.id, c.name), `{"tree":`...)) // the vector's pieces go out as they are
	tail := []byte("}}\n")
	s.w.SendVector(len(head)+t.tree.Len()+len(tail), func(emit func([][]byte)) {
		t.tree.WriteVec(head, tail, emit)
	})
}

func handleGetTree(s *Server, _ *command, _ *none) (treeAnswer, error) {
	tree, err := s.current().TreeJSON()
	if err != nil {
		return treeAnswer{}, err
	}
	return treeAnswer{tree}, nil
}

func handleSetSessionName(s *Server, _ *command, p *nameParams) (nameParams, error) {
	name, err := s.current().SetName(p.Name)
	return nameParams{name}, err
}

func handleForkMessages(s *Server, _ *command, _ *none) (any, error) {
	msgs, err := s.current().ForkMessages()
	out := make([]wireForkMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, wireForkMessage{m.EntryID, m.Text})
	}
	return forkMessagesResult{out}, err
}

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

func handleNewSession(s *Server, _ *command, _ *none) (sessionRef, error) {
	if err := s.idle(); err != nil {
		return sessionRef{}, err
	}
	return s.open(session.Spec{Kind: session.OpenNew}, nil)
}

type switchParams struct {
	SessionPath string `json:"sessionPath"`
}

func handleSwitchSession(s *Server, _ *command, p *switchParams) (sessionRef, error) {
	if p.SessionPath == "" {
		return sessionRef{}, wirecode.Errorf(errInvalidParams, "sessionPath must be a non-empty string")
	}
	if err := s.idle(); err != nil {
		return sessionRef{}, err
	}
	cur := s.current()
	path, _ := filepath.Abs(p.SessionPath)
	if file, _ := cur.SessionFile(); file != "" && file == path {
		return s.switchTo(cur, "resume") // already open: announce it again
	}
	return s.open(session.Spec{Kind: session.OpenResume, Path: path}, func(o *session.Options) { o.Cwd, o.ThinkingLevel = "", "" })
}

type entryIDParams struct {
	EntryID string `json:"entryId"`
}

func handleFork(s *Server, _ *command, p *entryIDParams) (sessionRef, error) {
	if err := s.idle(); err != nil {
		return sessionRef{}, err
	}
	return s.open(session.Spec{Kind: session.OpenFork, From: s.current(), EntryID: p.EntryID}, nil)
}

type sinceParams struct {
	Since string `json:"since"`
}

func handleGetEntries(s *Server, _ *command, p *sinceParams) (any, error) {
	entries, leaf, err := s.current().Entries(p.Since)
	if entries == nil {
		entries = []*store.Entry{}
	}
	return struct {
		Entries []*store.Entry `json:"entries"`
		LeafID  *string        `json:"leafId"`
	}{entries, leaf}, err
}

// treeAnswer is get_tree's result, which writes its own response line.
// Deep trees exceed encoding/json's nesting limit; the store writes them
// itself. A long session's tree is as large as its file, so the line is
// never built: the writer writes it piece by piece as the store produces
// them (the nodes and entries are immutable).
type treeAnswer struct{ tree store.NodesJSON }

func (t treeAnswer) writeOK(s *Server, c *command) {
	head := append(appendOKHead(nil, c.id, c.name), `{"tree":`...)
	s.w.SendPieces(len(head)+t.tree.Len()+len("}}\n"), func(emit func([]byte)) {
		emit(head)
		t.tree.WriteTo(stdio.ChunkSize, emit)
		emit([]byte("}}\n"))
	})
}

func handleGetTree(s *Server, _ *command, _ *none) (treeAnswer, error) {
	nodes, err := s.current().Tree()
	if err != nil {
		return treeAnswer{}, err
	}
	return treeAnswer{store.NewNodesJSON(nodes)}, nil
}

type nameParams struct {
	Name string `json:"name"`
}

func handleSetSessionName(s *Server, _ *command, p *nameParams) (nameParams, error) {
	name, err := s.current().SetName(p.Name)
	return nameParams{name}, err
}

func handleForkMessages(s *Server, _ *command, _ *none) (any, error) {
	msgs, err := s.current().ForkMessages()
	type wire struct {
		EntryID string `json:"entryId"`
		Text    string `json:"text"`
	}
	out := make([]wire, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, wire{m.EntryID, m.Text})
	}
	return struct {
		Messages []wire `json:"messages"`
	}{out}, err
}

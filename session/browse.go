package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/armadra/ama-rpc/internal/utf8cut"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// Entries returns the entries after the since cursor (exclusive; all of
// them when since is empty or unknown) and the current leaf.
func (s *Session) Entries(since string) ([]*store.Entry, *string, error) {
	type out struct {
		entries []*store.Entry
		leaf    *string
	}
	o, err := call(s, func(st *state) out {
		if since == "" {
			return out{st.tree.Entries(), st.tree.Leaf()}
		}
		e, _ := st.tree.Since(since)
		return out{e, st.tree.Leaf()}
	})
	return o.entries, o.leaf, err
}

// Tree returns the entry tree (roots first, children in file order, with
// labels).
func (s *Session) Tree() ([]*store.Node, error) {
	return call(s, func(st *state) []*store.Node { return st.tree.Nodes() })
}

// TreeJSON returns get_tree's JSON of the session tree, measured and
// ready to be written in pieces (store.NodesJSON, a copy of the tree's
// shape: no Node is built).
func (s *Session) TreeJSON() (store.NodesJSON, error) {
	return call(s, func(st *state) store.NodesJSON { return st.tree.NodesJSON() })
}

// SetName names the session (a session_info entry).
func (s *Session) SetName(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: name must be a non-empty string", ErrInvalidArguments)
	}
	return call(s, func(st *state) string {
		st.appendEntry(store.SessionInfoEntry(name))
		return name
	})
}

// ForkMessage is a user message a fork can start from.
type ForkMessage struct {
	EntryID, Text string
}

// FirstPromptBytes bounds FirstPrompt.
const FirstPromptBytes = 64 << 10

// FirstPrompt returns the start (at most FirstPromptBytes) of the active
// branch's first user message, as ForkMessages would give its text: a
// title needs no more, and the message may be a pasted file of tens of
// MiB. Only the entries up to that message are looked at.
func (s *Session) FirstPrompt() (string, error) {
	return call(s, func(st *state) string {
		for _, e := range st.branch() {
			if e.NotUser() { // known from the role read with the entry: not decoded
				continue
			}
			m, err := e.Message()
			if err != nil {
				continue
			}
			u, ok := m.(*llm.UserMessage)
			if !ok {
				continue
			}
			if !u.Content.IsBlocks {
				return utf8cut.Head(u.Content.Text, FirstPromptBytes)
			}
			var b strings.Builder
			for _, c := range u.Content.Blocks {
				if t, ok := c.(*llm.TextContent); ok && b.Len() < FirstPromptBytes {
					b.WriteString(utf8cut.Head(t.Text, FirstPromptBytes-b.Len()))
				}
			}
			return b.String()
		}
		return ""
	})
}

// ForkMessages lists the user messages of the active branch.
func (s *Session) ForkMessages() ([]ForkMessage, error) {
	return call(s, func(st *state) []ForkMessage {
		out := []ForkMessage{}
		for _, e := range st.branch() {
			if e.NotUser() { // only the user messages are decoded
				continue
			}
			if m, err := e.Message(); err == nil {
				if u, ok := m.(*llm.UserMessage); ok {
					out = append(out, ForkMessage{EntryID: e.ID, Text: u.Content.PlainText()})
				}
			}
		}
		return out
	})
}

// fork starts a new session holding the path from the root to entryID
// (inclusive) of this one; its leaf is entryID and its header names this
// session's file as parentSession. A persisted session's fork is written
// at once.
func (s *Session) fork(entryID string, opts Options) (*Session, error) {
	type src struct {
		path []*store.Entry
		tree *store.Tree // the path's tree when the source's copied (ForkPath)
		file string
		cwd  string
	}
	o, err := call(s, func(st *state) src {
		path, tree := st.tree.ForkPath(entryID)
		return src{path: path, tree: tree, file: st.filePath(), cwd: st.cwd}
	})
	if err != nil {
		return nil, err
	}
	if o.path == nil {
		return nil, fmt.Errorf("%w: entry %s is not in this session", ErrEntryNotFound, entryID)
	}
	// o.path is a chain (Tree.Path): its tree is the source's copied, or
	// indexed in one pass, and it is the new session's branch (unless
	// repeated ids made another tree of it).
	tree, chain := o.tree, true
	if tree == nil {
		tree, chain = store.NewPathTree(o.path)
	}
	d := s.deps
	id := d.sessionID(opts.SessionID)
	n := newSession(d, id, o.cwd, opts.Approver)
	st := newState(n, id, o.cwd, tree)
	st.parentSession = o.file
	if st.disk.path != "" {
		if err := d.writeFault(); err != nil {
			return nil, fmt.Errorf("fork to %s: %w", st.disk.path, err)
		}
		// o.path is what store.Fork would write (ForkEntries without a
		// head): create the file from it, without indexing it twice.
		f, err := store.Create(st.disk.path, st.header(), o.path)
		if err != nil {
			return nil, err
		}
		st.disk.file = f
	}
	branch := o.path
	if !chain {
		branch = st.branch()
	}
	if err := st.restore(branch, opts); err != nil {
		st.shutdown()
		return nil, err
	}
	n.attachMCP(opts)
	return n.launch(st), nil
}

// FindSession returns the file of the session with the given id under the
// sessions directory: first in cwd's directory, then in any directory
// (SessionDirs' order).
func FindSession(sessionsDir, cwd, id string) (string, error) {
	own := store.SessionDir(sessionsDir, cwd)
	if p, ok := findInDir(own, id); ok {
		return p, nil // the usual case: no listing of the other directories
	}
	for _, d := range SessionDirs(sessionsDir, cwd)[1:] {
		if p, ok := findInDir(d, id); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no session %s under %s", store.ErrNotFound, id, sessionsDir)
}

// SessionDirs are the directories of session files an id is looked for
// in, in order: cwd's first, then every other one under sessionsDir.
// Directories whose names start with a dot (the trash) are left out.
func SessionDirs(sessionsDir, cwd string) []string {
	own := store.SessionDir(sessionsDir, cwd)
	dirs := []string{own}
	ents, _ := os.ReadDir(sessionsDir)
	for _, d := range ents {
		p := filepath.Join(sessionsDir, d.Name())
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") && p != own {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// findInDir returns the file of the session with the given id in one
// directory of sessions (names <time>_<id>.jsonl). Each name is read, not
// globbed: the id is the user's text, and a '*' pattern costs a
// backtracking match per name (10,000 names: 80 ms against a few).
func findInDir(dir, id string) (string, bool) {
	ents, _ := os.ReadDir(dir) // sorted: the oldest of files an older ama-rpc gave one id comes first
	for _, e := range ents {
		// The store's one reading of a name ("t_x_abc.jsonl" is session
		// x_abc's, not abc's).
		if fid, ok := store.IDFromFileName(e.Name()); ok && fid == id {
			return filepath.Join(dir, e.Name()), true
		}
	}
	return "", false
}

// LatestSession returns the newest session file of cwd (not a sub-agent
// session).
func LatestSession(sessionsDir, cwd string) (string, error) {
	infos, err := store.List(store.SessionDir(sessionsDir, cwd))
	if err != nil {
		return "", err
	}
	for _, in := range infos {
		if !in.IsSubagent {
			return in.Path, nil
		}
	}
	return "", fmt.Errorf("%w: no session for %s", store.ErrNotFound, cwd)
}

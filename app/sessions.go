package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// firstSession opens the startup session: a new one, the one named by
// --session, --resume, --continue or --session-id (a new one when no
// session has that id), or a copy of the one --fork names. startSession
// finds the file (before a host adapter starts, when there is one).
func firstSession(m *session.Manager, flags *Flags, opts session.Options) (*session.Session, string, error) {
	start, err := startSession(flags, m.Deps().Dirs.Sessions, opts.Cwd, m.Deps().Settings.Persist)
	if err != nil {
		return nil, "", err
	}
	switch {
	case flags.Fork != "":
		return forkSession(m, start.path, opts)
	case start.path != "":
		s, err := openOwn(m, start.path, opts)
		if err != nil {
			return nil, "", err
		}
		return s, "resume", nil
	}
	return newSession(m, opts)
}

// startFile is the existing session file the flags name for the startup
// session, and the id its header gives; path is empty for a new session
// (none named, or a --session-id no session has). For --fork, path is
// the source and id is empty: the copy's id is not the source's.
type startFile struct {
	path, id string
}

// startSession finds the startup session's file once (flags.start keeps
// it): wire asks before a host adapter starts, whose create() is told
// that session's id and file, as ama opens the session before the
// adapter; firstSession opens the same file. --session is the path given
// (relative to cwd), --resume and --fork an id or the start of one
// (findSessionFile), --continue the directory's latest session, and a
// user's --session-id the session with that id when there is one (its
// directory must be this one, as for --resume; persist: never a second
// file with the same id).
func startSession(flags *Flags, sessionsDir, cwd string, persist bool) (startFile, error) {
	if flags.start != nil {
		return *flags.start, nil
	}
	var path string
	var err error
	switch {
	case flags.Fork != "":
		if path, err = findSessionFile(sessionsDir, cwd, flags.Fork); err != nil {
			return startFile{}, fmt.Errorf("%w: --fork: %v", errSession, err)
		}
	case flags.Session != "":
		path = flags.Session
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
	case flags.Resume != "":
		path, err = findSessionFile(sessionsDir, cwd, flags.Resume)
	case flags.Continue:
		path, err = session.LatestSession(sessionsDir, cwd)
	case flags.SessionID != "" && !flags.sessionIDMade && persist:
		path, err = session.FindSession(sessionsDir, cwd, flags.SessionID)
		if errors.Is(err, store.ErrNotFound) {
			path, err = "", nil // a new session taking the id
		}
	}
	if err == nil && path != "" {
		path, err = filepath.Abs(path) // as the session reports its file
	}
	if err != nil {
		return startFile{}, fmt.Errorf("%w: %v", errSession, err)
	}
	start := startFile{path: path}
	if path != "" && flags.Fork == "" {
		h, err := store.ReadHeader(path)
		if err != nil {
			return startFile{}, fmt.Errorf("%w: %v", errSession, err)
		}
		start.id = h.ID
	}
	flags.start = &start
	return start, nil
}

// newSession opens a fresh startup session.
func newSession(m *session.Manager, opts session.Options) (*session.Session, string, error) {
	s, err := m.Open(session.Spec{Kind: session.OpenNew, Options: opts})
	if errors.Is(err, store.ErrExists) {
		return nil, "", fmt.Errorf("%w: %v", errSession, err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", errUsage, err)
	}
	return s, "startup", nil
}

// openOwn opens the session file at path, which must belong to opts.Cwd.
func openOwn(m *session.Manager, path string, opts session.Options) (*session.Session, error) {
	s, err := m.Open(session.Spec{Kind: session.OpenResume, Path: path, Options: opts})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSession, err)
	}
	if s.Cwd() != opts.Cwd {
		m.Close(s, "exit")
		return nil, fmt.Errorf("%w: session %s belongs to %s, not %s (start ama-rpc there, or pass --cwd)", errSession, path, s.Cwd(), opts.Cwd)
	}
	return s, nil
}

// forkSession is --fork id: the session at path (the file that id or id
// prefix names, startSession) is opened, copied up to its leaf into a
// new session by the manager's fork (a new file whose header names the source as parentSession; the
// source is not changed) and closed again. opts apply to the copy as to a
// resumed session (an explicit --model or --permission-mode wins over the
// recorded one). session_start's reason is "fork".
// The copy takes opts.SessionID when set (chosen in advance for a host
// adapter, wire), else a fresh id.
func forkSession(m *session.Manager, path string, opts session.Options) (*session.Session, string, error) {
	src, err := openOwn(m, path, opts)
	if err != nil {
		return nil, "", err
	}
	defer m.Close(src, "exit") // never started: no SessionEnd; its lock is released
	_, leaf, err := src.Entries("")
	if err != nil {
		return nil, "", fmt.Errorf("%w: --fork: %v", errSession, err)
	}
	if leaf == nil {
		return nil, "", fmt.Errorf("%w: --fork: session %s has no entries to copy", errSession, src.ID())
	}
	s, err := m.Open(session.Spec{Kind: session.OpenFork, From: src, EntryID: *leaf, Options: opts})
	if err != nil {
		return nil, "", fmt.Errorf("%w: --fork: %v", errSession, err)
	}
	return s, session.OpenFork.Reason(), nil
}

// sessionInfo is one line of `ama-rpc sessions list`.
type sessionInfo struct {
	Path          string `json:"path"`
	ID            string `json:"id"`
	Cwd           string `json:"cwd"`
	Created       string `json:"created,omitempty"`
	Modified      string `json:"modified"`
	Name          string `json:"name,omitempty"`
	MessageCount  int    `json:"messageCount"`
	FirstPrompt   string `json:"firstPrompt,omitempty"`
	ParentSession string `json:"parentSession,omitempty"`
	IsSubagent    bool   `json:"isSubagent,omitempty"`
}

// sessionsDir is the one rule for where session files live: the
// --session-dir flag, else the profile's sessionDir, else the user
// config's (nil: none), else <data>/sessions.
func sessionsDir(paths config.Paths, user *config.Config, profile *Profile, flag string) string {
	switch {
	case flag != "":
		return flag
	case profile != nil && profile.SessionDir != "":
		return profile.SessionDir
	case user != nil && user.SessionDir != "":
		return user.SessionDir
	}
	return filepath.Join(paths.Data, "sessions")
}

// runSessions implements `ama-rpc sessions list`: the sessions of a
// directory (or all of them), newest first, one JSON object per line, for
// hosts that show a picker.
func runSessions(env Env, args []string, lang i18n.Lang) int {
	if rest, err := leadingLang(args, lang); err != nil {
		fmt.Fprintln(env.Stderr, i18n.T(lang, i18n.CLISubError, "ama-rpc sessions", err))
		return ExitUsage
	} else {
		args = rest // `ama-rpc sessions --lang zh list`
	}
	if len(args) == 0 || args[0] != "list" {
		fmt.Fprintln(env.Stderr, i18n.T(lang, i18n.CLISessionsUsage))
		return ExitUsage
	}
	fs := newSubFlags(env, lang, "sessions", "ama-rpc sessions list", nil)
	cwd := fs.String("cwd", env.Cwd, fs.help("cwd"))
	all := fs.Bool("all", false, fs.help("all"))
	dir := fs.String("session-dir", "", fs.help("session-dir"))
	if code, ok := fs.parse(args[1:]); !ok {
		return code
	}
	paths, err := config.ResolvePaths(env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc sessions: %v\n", err)
		return ExitConfig
	}
	user, _ := config.Load(paths.UserFile()) // a user config that does not load: the default directory
	base := sessionsDir(paths, user, nil, *dir)
	var infos []store.Info
	if *all {
		infos, err = store.ListAll(base)
	} else {
		abs, _ := filepath.Abs(*cwd)
		infos, err = store.List(store.SessionDir(base, abs))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc sessions: %v\n", err)
		return ExitSession
	}
	w := stdio.NewWriter(env.Stdout, stdio.WriterOptions{})
	defer w.Close()
	for _, in := range infos {
		o := sessionInfo{Path: in.Path, ID: in.ID, Cwd: in.Cwd, Modified: in.Modified.UTC().Format(time.RFC3339Nano),
			Name: in.Name, MessageCount: in.MessageCount, FirstPrompt: in.FirstPrompt,
			ParentSession: in.ParentSession, IsSubagent: in.IsSubagent}
		if !in.Created.IsZero() {
			o.Created = in.Created.UTC().Format(time.RFC3339Nano)
		}
		w.Send(o)
	}
	return ExitOK
}

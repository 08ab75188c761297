package acp

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// listPageSize is the number of sessions per session/list page.
const listPageSize = 50

// checkCwd accepts only the start directory (compared with symlinks
// resolved): tools, project config and the session directory are those of
// the start directory.
func (s *Server) checkCwd(cwd string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return localized(errInvalidParams, i18n.ACPErrCwdNotAbs, cwd)
	}
	if realDir(cwd) != s.startDir {
		return localized(errInvalidParams, i18n.ACPErrCwdFixed, cwd, s.opts.Base.Cwd)
	}
	return nil
}

// noteIgnored says, once per session, that the client's additional
// directories are not used: a stderr line at the default log level and a
// notice (NoticeMethod) the client can show. The client's mcpServers are
// used (session.Options.MCPServers); a server that fails to start is a
// notice of its own (onEvent), at the session's first prompt.
func (as *acpSession) noteIgnored(p sessionParams) {
	if len(p.AdditionalDirectories) == 0 {
		return
	}
	as.mu.Lock()
	done := as.ignoredNoted
	as.ignoredNoted = true
	as.mu.Unlock()
	if done {
		return
	}
	as.log.Warn("the client's additionalDirectories are ignored: ama-rpc works only in its start directory",
		zap.Int("additionalDirectories", len(p.AdditionalDirectories)))
	as.srv.sessionNotice(as.id, "warn", "ama-rpc works only in its start directory: the additional directories given for this session are not used")
}

// noteKeptServers says that a load or resume of a session that is
// already open keeps the MCP servers it was opened with.
func (as *acpSession) noteKeptServers(p sessionParams) {
	if len(p.McpServers) == 0 {
		return
	}
	as.srv.sessionNotice(as.id, "warn", "the session is already open: it keeps the MCP servers it was opened with; the mcpServers of this request are not used")
}

// handleNew: session/new {cwd, mcpServers} → {sessionId, modes,
// configOptions}, then available_commands_update, config_option_update and
// usage_update. The first session/new of the process takes the startup
// session's id (so --session-id names it); later ones get fresh ids.
func handleNew(s *Server, c *call, p *sessionParams) {
	if err := s.checkCwd(p.Cwd); err != nil {
		c.fail(err)
		return
	}
	if s.stopping() {
		c.fail(localized(errInvalidParams, i18n.ACPErrShuttingDown))
		return
	}
	opts := s.opts.Base
	opts.SessionID = ""
	opts.MCPServers = p.McpServers
	// The answer promises that the id exists: the file (header, settings,
	// permission mode) is written now, so session/resume, session/load and
	// --resume work for it from another process even if it is never
	// prompted.
	opts.EagerFile = true
	reason := "new"
	s.mu.Lock()
	if !s.startupClaimed {
		s.startupClaimed = true
		opts.SessionID, reason = s.opts.StartupID, "startup"
	}
	s.mu.Unlock()
	as, err := s.openSession(session.Spec{Kind: session.OpenNew, Options: opts}, reason, nil)
	if err != nil {
		c.fail(err)
		return
	}
	c.reply(newSessionResult{SessionID: as.id, openSessionResult: as.opened()})
	as.announce()
	as.noteIgnored(*p)
}

// openExisting returns the session id for load and resume: the open one,
// or the one stored under the start directory, opened now.
func (s *Server) openExisting(p sessionParams) (*acpSession, error) {
	if err := s.checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	if p.SessionID == "" || strings.ContainsAny(p.SessionID, `/\*?[]`) || p.SessionID == "." || p.SessionID == ".." {
		return nil, localized(errInvalidParams, i18n.ACPErrBadSessionID, p.SessionID)
	}
	if s.stopping() {
		return nil, localized(errInvalidParams, i18n.ACPErrShuttingDown)
	}
	if as, err := s.session(p.SessionID); err == nil {
		as.noteKeptServers(p)
		return as, nil
	}
	path, err := session.FindSession(s.deps().Dirs.Sessions, s.opts.Base.Cwd, p.SessionID)
	if err != nil {
		return nil, localized(errUnknownSession, i18n.ACPErrNoSessionFor, p.SessionID, s.opts.Base.Cwd)
	}
	opts := s.opts.Base
	// A stored session keeps its own thinking level and permission mode.
	opts.Cwd, opts.ThinkingLevel, opts.SessionID, opts.PermissionMode = "", "", "", ""
	opts.MCPServers = p.McpServers
	return s.openSession(session.Spec{Kind: session.OpenResume, Path: path, Options: opts}, "resume", func(sess *session.Session) error {
		if realDir(sess.Cwd()) != s.startDir {
			return localized(errInvalidParams, i18n.ACPErrSessionElsewhere, p.SessionID, sess.Cwd(), s.opts.Base.Cwd)
		}
		return nil
	})
}

// handleLoad: session/load replays the session's history as updates, then
// answers {modes, configOptions} and announces the session.
func handleLoad(s *Server, c *call, p *sessionParams) { openExisting(s, c, p, true) }

// handleResume: session/resume opens the session without replay.
func handleResume(s *Server, c *call, p *sessionParams) { openExisting(s, c, p, false) }

// openExisting opens the session of load or resume, replays its history
// when asked, answers, then announces the session (commands, config
// options, usage: updates about a session the answer has opened).
func openExisting(s *Server, c *call, p *sessionParams, replay bool) {
	as, err := s.openExisting(*p)
	if err != nil {
		c.fail(err)
		return
	}
	if replay {
		msgs, err := as.sess.Messages()
		if err != nil {
			c.fail(err)
			return
		}
		for _, u := range replayUpdates(msgs, as.sess.Cwd(), as.tr.ids) {
			s.notify(as.id, u)
		}
	}
	c.reply(as.opened())
	as.announce()
	as.noteIgnored(*p)
	if s.durable.Load() {
		as.sess.ReopenApprovals(true) // the open durable requests, asked again (durable.go)
	}
}

// handleList: session/list {cwd?, cursor?} → the sessions of the start
// directory, newest first, listPageSize per page; nextCursor names the
// last session of the page (opaque to clients). Another cwd has none.
func handleList(s *Server, p *listSessionsParams) (listSessionsResult, error) {
	after, err := decodeCursor(p.Cursor)
	if err != nil {
		return listSessionsResult{}, err
	}
	out := listSessionsResult{Sessions: []sessionInfo{}}
	if p.Cwd != "" && realDir(p.Cwd) != s.startDir {
		return out, nil
	}
	infos, err := store.List(store.SessionDir(s.deps().Dirs.Sessions, s.opts.Base.Cwd))
	if err != nil {
		return listSessionsResult{}, err
	}
	out.Sessions, out.NextCursor = listPage(infos, after, listPageSize)
	return out, nil
}

// decodeCursor returns the file name a cursor names ("" for no cursor).
func decodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 {
		return "", localized(errInvalidParams, i18n.ACPErrBadCursor, cursor)
	}
	return string(b), nil
}

// listPage returns the page of infos (sorted newest first by file name)
// after the file named after, and the cursor of the next page ("" when
// this is the last).
func listPage(infos []store.Info, after string, size int) ([]sessionInfo, string) {
	page := []sessionInfo{}
	last := ""
	for _, in := range infos {
		base := filepath.Base(in.Path)
		if in.IsSubagent || (after != "" && base >= after) {
			continue
		}
		if len(page) == size {
			return page, base64.RawURLEncoding.EncodeToString([]byte(last))
		}
		title := in.Name
		if title == "" {
			title = titleFrom(in.FirstPrompt)
		}
		page = append(page, sessionInfo{SessionID: in.ID, Cwd: in.Cwd, Title: title,
			UpdatedAt: store.FormatTime(in.Modified.UTC().Truncate(time.Millisecond))})
		last = base
	}
	return page, ""
}

// handleClose: session/close cancels the session's prompts (they answer
// cancelled), closes it and answers {} once it is closed.
func handleClose(s *Server, c *call, p *sessionIDParams) {
	as, err := s.session(p.SessionID)
	if err != nil {
		c.fail(err)
		return
	}
	s.background(func() {
		as.close()
		c.reply(empty{})
	})
}

package acp

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// acpSession is one session served over the connection: the session
// itself, its event subscription, its prompt turns (one at a time, the
// rest queued in arrival order) and its outstanding permission asks.
type acpSession struct {
	srv   *Server
	id    string
	sess  *session.Session
	tr    *translator // touched only by event callbacks
	heads *chunkHeads // touched only by event callbacks (chunks.go)
	seq   *stdio.Seq  // numbered updates (seq.go); nil: the client did not opt in
	log   *zap.Logger

	unsubOnce sync.Once
	unsub     func()
	closed    chan struct{} // closed when close has finished

	mu      sync.Mutex
	closing bool
	cur     *turn
	queue   []*turn
	asks    map[*permAsk]struct{}
	title   string // last title sent in session_info_update

	ignoredNoted bool // noteIgnored said it for this session
}

// openSession opens the session of sp through the manager (with the
// session's approver), checks it (check may be nil), subscribes to its
// events, starts it (session.Manager.Start: session_start, SessionStart
// hooks) and registers it. reason is the session_start reason (startup,
// new, resume).
func (s *Server) openSession(sp session.Spec, reason string, check func(*session.Session) error) (*acpSession, error) {
	as := &acpSession{srv: s, asks: map[*permAsk]struct{}{}, closed: make(chan struct{})}
	sp.Options.Approver = &approver{as: as}
	m := s.opts.Sessions
	sess, err := m.Open(sp)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(sess); err != nil {
			m.Close(sess, "exit") // never started: no hooks
			return nil, err
		}
	}
	as.sess, as.id = sess, sess.ID()
	as.log = s.log.With(zap.String("session", as.id))
	as.tr = newTranslator()
	as.heads = newChunkHeads(as.id)
	as.seq = s.openSeq(sess) // before the first event is subscribed
	unsubEvents, unsubSettle := sess.Subscribe(as.onEvent), sess.OnSettle(as.onSettle)
	as.unsub = func() { unsubEvents(); unsubSettle() }
	sess.SetPlanAttended(true) // plan proposals are offered to the client (plans.go)
	if s.durable.Load() {
		sess.SetDurableApprovals(true) // durable.go
	}
	if err := m.Start(sess, reason); err != nil {
		as.unsub()
		m.Close(sess, "exit")
		return nil, err
	}
	s.mu.Lock()
	s.sessions[as.id] = as
	s.mu.Unlock()
	return as, nil
}

// settings are the session's as its events announced them
// (session.Shown: the session keeps them, never waiting on its actor).
func (as *acpSession) settings() settings {
	v := as.sess.Shown()
	return settings{mode: v.Mode, model: v.Model, thinking: v.ThinkingLevel}
}

func (as *acpSession) isClosing() bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.closing
}

// onEvent receives every event of the session, in order, on the goroutine
// that published it (the session's actor or runner). It keeps the turn and
// settings bookkeeping and sends the updates; it never waits for the
// session (that would deadlock its actor).
func (as *acpSession) onEvent(e events.Event) {
	as.track(e)
	if as.sendChunk(e) {
		return
	}
	for _, u := range as.tr.translate(e) {
		as.srv.notify(as.id, u)
	}
	switch e := e.(type) {
	case events.Notification:
		if e.Source == session.NoticeMCP { // an MCP server failed or stopped
			as.srv.sessionNotice(as.id, e.Level, e.Message)
		}
	case events.PermissionModeChanged:
		as.srv.notify(as.id, modeUpdate{SessionUpdate: updMode, CurrentModeID: e.Mode})
		as.notifyConfig()
	case events.ModelChanged, events.ThinkingLevelChanged:
		as.notifyConfig()
	}
}

// onSettle receives the outcome of each of the session's runs, on its
// actor right after agent_settled: the current turn absorbs it, then
// either its plan proposal is offered or the turn is answered (both on a
// background goroutine: nothing here may wait for the session).
func (as *acpSession) onSettle(o session.Outcome) {
	as.mu.Lock()
	t := as.cur
	settle := t != nil && t.ran && !t.claimed
	var proposal *events.PlanProposed
	if settle {
		t.absorb(o)
		if o.Plan != nil && !t.cancelled && !t.withdrawn {
			proposal = o.Plan
		}
	}
	as.mu.Unlock()
	switch {
	case proposal != nil:
		as.srv.background(func() { as.askPlan(t, proposal) })
	case settle:
		as.srv.background(func() { as.finish(t, nil) })
	}
}

// track marks the current turn as run at its agent_start.
func (as *acpSession) track(e events.Event) {
	if _, ok := e.(events.AgentStart); !ok {
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	if t := as.cur; t != nil && !t.claimed {
		t.ran = true
	}
}

// options returns every config option with its current value.
func (as *acpSession) options() []configOption {
	return configOptions(as.settings(), as.srv.deps().Models, as.srv.opts.Lang)
}

// opened is the result of opening the session (new, load, resume).
func (as *acpSession) opened() openSessionResult {
	set := as.settings()
	return openSessionResult{Modes: set.modeState(as.srv.opts.Lang), ConfigOptions: configOptions(set, as.srv.deps().Models, as.srv.opts.Lang)}
}

// notifyConfig sends config_option_update with every option.
func (as *acpSession) notifyConfig() {
	as.srv.notify(as.id, configUpdate{SessionUpdate: updConfig, ConfigOptions: as.options()})
}

// announce sends what a client learns after opening a session: the
// available commands, the config options and the context usage.
func (as *acpSession) announce() {
	// Skills, then templates (with their argument hint), as ama lists
	// them; builtins are not listed (model, mode and thinking are config
	// options under ACP).
	cmds := []availableCommand{}
	all := as.sess.Commands()
	for _, c := range all {
		if c.Source == "skill" {
			cmds = append(cmds, availableCommand{Name: c.Name, Description: c.Description})
		}
	}
	for _, c := range all {
		if c.Source == "template" {
			ac := availableCommand{Name: c.Name, Description: c.Description}
			if c.ArgumentHint != "" {
				ac.Input = &commandInput{Hint: c.ArgumentHint}
			}
			cmds = append(cmds, ac)
		}
	}
	as.srv.notify(as.id, commandsUpdate{SessionUpdate: updCommands, AvailableCommands: cmds})
	as.notifyConfig()
	as.notifyUsage()
	as.srv.noticeSession(as.id)
}

// notifyUsage sends usage_update: the context tokens, the window and the
// session's cost so far. Nothing is sent when the model has no window.
func (as *acpSession) notifyUsage() {
	st, err := as.sess.Stats()
	if err != nil || st.Context == nil {
		return
	}
	u := usageUpdate{SessionUpdate: updUsage, Used: st.Context.Tokens, Size: st.Context.Window}
	if st.Cost != nil {
		u.Cost = &cost{Amount: *st.Cost, Currency: "USD"}
	}
	as.srv.notify(as.id, u)
}

// notifyInfo sends session_info_update: the title when it changed (the
// session name, else its first prompt) and the time of the update.
func (as *acpSession) notifyInfo() {
	title := sessionTitle(as.sess)
	as.mu.Lock()
	if title == as.title {
		title = ""
	} else {
		as.title = title
	}
	as.mu.Unlock()
	as.srv.notify(as.id, infoUpdate{SessionUpdate: updInfo, Title: title, UpdatedAt: store.FormatTime(as.srv.opts.Now())})
}

// maxTitle bounds a title taken from a prompt (in runes).
const maxTitle = 100

// sessionTitle is the session's name, else its first prompt's first line.
func sessionTitle(s *session.Session) string {
	if st, err := s.State(); err == nil && st.SessionName != "" {
		return st.SessionName
	}
	if first, err := s.FirstPrompt(); err == nil {
		return titleFrom(first)
	}
	return ""
}

// titleFrom is the first non-blank line of a prompt, without its
// surrounding space, cut to maxTitle runes. It reads only as far as it
// needs: the prompt may be a pasted file of tens of MiB (splitting it into
// lines allocated 16 bytes per line, every turn, and a mapped one would
// be read back into memory whole).
func titleFrom(prompt string) string {
	s := strings.TrimLeftFunc(prompt, unicode.IsSpace) // blank lines and the line's indent
	i := lineHead(s, maxTitle)
	title := strings.TrimRightFunc(s[:i], unicode.IsSpace)
	// Cut when the line goes on with more than space.
	for j := i; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == '\n' {
			break
		}
		if !unicode.IsSpace(r) {
			return s[:i] + "…"
		}
		j += size
	}
	return title
}

// stop is the first step of shutdown: queued prompts are answered
// cancelled, asks are withdrawn and, when interrupted, the running turn is
// aborted (it then answers cancelled). Without interruption the running
// turn finishes normally.
func (as *acpSession) stop(interrupted bool) {
	as.mu.Lock()
	queued := as.queue
	as.queue = nil
	cur := as.cur
	if interrupted && cur != nil {
		cur.cancelled = true
	}
	as.mu.Unlock()
	for _, t := range queued {
		as.finishQueued(t, false)
	}
	if interrupted && cur != nil {
		as.sess.Abort(func() {})
	}
	as.cancelAsks()
}

// close ends the session: queued and running prompts answer cancelled,
// asks are withdrawn, the session is closed (its file released) and
// forgotten. It blocks until the running prompt has been answered.
func (as *acpSession) close() {
	as.mu.Lock()
	if as.closing {
		as.mu.Unlock()
		<-as.closed
		return
	}
	as.closing = true
	queued := as.queue
	as.queue = nil
	cur := as.cur
	if cur != nil && !cur.claimed {
		cur.cancelled = true
	}
	as.mu.Unlock()
	for _, t := range queued {
		as.finishQueued(t, false)
	}
	as.sess.Abort(func() {})
	as.cancelAsks()
	as.srv.opts.Sessions.Close(as.sess, "exit") // SessionEnd while it is open, then closed
	if cur != nil {
		// A prompt posted while the session was closing never settles;
		// answer it here (finish is once-only).
		as.finish(cur, nil)
		<-cur.done
	}
	as.unsubOnce.Do(as.unsub)
	as.srv.mu.Lock()
	if as.srv.sessions[as.id] == as {
		delete(as.srv.sessions, as.id)
	}
	as.srv.mu.Unlock()
	close(as.closed)
}

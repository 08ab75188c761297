package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
)

// orderLog is one log of what the host adapter and the hooks saw, in the
// order they saw it.
type orderLog struct {
	mu    sync.Mutex
	steps []string
}

func (l *orderLog) add(s string) {
	l.mu.Lock()
	l.steps = append(l.steps, s)
	l.mu.Unlock()
}

func (l *orderLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := strings.Join(l.steps, "\n")
	l.steps = nil
	return out
}

// orderHost is a session.Host that logs the session events it observes;
// on session_start it also logs which sessions are still open.
type orderHost struct {
	log  *orderLog
	open func() string
}

func (h *orderHost) Observe(s *Session, e events.Event) {
	if st, ok := e.(events.SessionStart); ok {
		h.log.add("host session_start " + st.Reason + " " + st.SessionID + " open:" + h.open())
	}
}
func (h *orderHost) Approve(context.Context, *events.PermissionRequest) (events.Approval, bool) {
	return "", false
}
func (h *orderHost) Instructions() string { return "" }
func (h *orderHost) SessionShutdown(ctx context.Context) {
	h.log.add("host session_shutdown open:" + h.open())
}
func (h *orderHost) Dispose(ctx context.Context) { h.log.add("host dispose open:" + h.open()) }

// isClosed reports whether s's actor took its last command.
func isClosed(s *Session) bool {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	return s.closed
}

// managerEnv is a Manager whose host and hooks log into one orderLog.
func managerEnv(t *testing.T) (*Manager, *orderLog, *[]*Session) {
	t.Helper()
	set, err := hooks.Parse([]byte(`{"version":1,"hooks":{
		"SessionStart":[{"hooks":[{"type":"command","command":"cat >/dev/null; echo '{\"additionalContext\":\"from the hook\"}'"}]}],
		"SessionEnd":[{"hooks":[{"type":"command","command":"cat >/dev/null"}]}]}}`), "hooks.json", "user")
	if err != nil {
		t.Fatal(err)
	}
	log := &orderLog{}
	var all []*Session
	open := func() string {
		var ids []string
		for _, s := range all {
			if !isClosed(s) {
				ids = append(ids, s.ID())
			}
		}
		return strings.Join(ids, ",")
	}
	d := hooks.NewDispatcher(set, hooks.Options{})
	d.SetObserver(func(e hooks.Event, _ []hooks.Outcome) { log.add("hook " + string(e) + " open:" + open()) })
	var n int
	var mu sync.Mutex
	deps := &Deps{
		Models: llm.NewRegistry(fake.New(fake.Options{Script: &fake.Script{}}).Entry()),
		NewUUID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return string(rune('a' + n - 1))
		},
		Dirs:   Dirs{Data: t.TempDir(), Home: t.TempDir()},
		Policy: &approvals.Policy{Mode: approvals.ModeDefault},
		Hooks:  d,
	}
	m := NewManager(deps)
	deps.Host = &orderHost{log: log, open: open}
	return m, log, &all
}

func (m *Manager) mustOpen(t *testing.T, all *[]*Session, cwd string) *Session {
	t.Helper()
	s, err := m.Open(Spec{Kind: OpenNew, Options: Options{Cwd: cwd, Model: llm.ModelRef{Provider: fake.ProviderID, ID: "echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	*all = append(*all, s)
	return s
}

// The order of a start, a switch and the exit (ama's, seed 000): a
// switch ends the old session (SessionEnd while it is open, then closed)
// before the new one's session_start, whose SessionStart hooks follow;
// the exit is session_shutdown, SessionEnd, dispose, then the sessions
// close.
func TestManagerOrder(t *testing.T) {
	m, log, all := managerEnv(t)
	cwd := t.TempDir()
	a := m.mustOpen(t, all, cwd)
	if err := m.Start(a, "startup"); err != nil {
		t.Fatal(err)
	}
	if got, want := log.take(), "host session_start startup a open:a\nhook SessionStart open:a"; got != want {
		t.Fatalf("start:\n%s\nwant:\n%s", got, want)
	}
	b := m.mustOpen(t, all, cwd)
	attached := ""
	if err := m.Switch(b, "new", func(s *Session) { attached = s.ID() + " closed:" + map[bool]string{true: "a", false: ""}[isClosed(a)] }); err != nil {
		t.Fatal(err)
	}
	if got, want := log.take(), "hook SessionEnd open:a,b\nhost session_start new b open:b\nhook SessionStart open:b"; got != want {
		t.Fatalf("switch:\n%s\nwant:\n%s", got, want)
	}
	if attached != "b closed:a" || m.Current() != b {
		t.Fatalf("attach saw %q; current %v", attached, m.Current())
	}
	// The hook's additionalContext is the new session's system prompt's
	// hooks section (its first entries follow the hook).
	entries, _, err := b.Entries("")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(entries)
	if !strings.Contains(string(raw), `"hooks":"from the hook"`) {
		t.Fatalf("the new session's first entries lack the hook's context: %s", raw)
	}
	m.Exit()
	if got, want := log.take(), "host session_shutdown open:b\nhook SessionEnd open:b\nhost dispose open:b"; got != want {
		t.Fatalf("exit:\n%s\nwant:\n%s", got, want)
	}
	if !isClosed(b) || len(m.Sessions(false)) != 0 {
		t.Fatalf("after Exit: b closed %v, open %d", isClosed(b), len(m.Sessions(false)))
	}
	m.Exit() // a second Exit (after a signal) runs nothing again
	if got := log.take(); got != "" {
		t.Fatalf("second Exit: %q", got)
	}
}

// A switch to a session that cannot take commands is rolled back before
// anything happens: no SessionEnd, the old session stays open and current.
func TestManagerSwitchRollback(t *testing.T) {
	m, log, all := managerEnv(t)
	cwd := t.TempDir()
	a := m.mustOpen(t, all, cwd)
	if err := m.Start(a, "startup"); err != nil {
		t.Fatal(err)
	}
	log.take()
	b := m.mustOpen(t, all, cwd)
	b.Close()
	attached := false
	if err := m.Switch(b, "new", func(*Session) { attached = true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Switch: %v", err)
	}
	if got := log.take(); got != "" || attached || m.Current() != a || isClosed(a) {
		t.Fatalf("rolled back switch: log %q attached %v current %v a closed %v", got, attached, m.Current(), isClosed(a))
	}
	// A session never started ends without SessionEnd.
	c := m.mustOpen(t, all, cwd)
	m.Close(c, "exit")
	if got := log.take(); got != "" || !isClosed(c) {
		t.Fatalf("closing an unstarted session: %q", got)
	}
	m.Close(a, "exit")
	if got := log.take(); got != "hook SessionEnd open:a" || !isClosed(a) || m.Current() != nil {
		t.Fatalf("Close: %q", got)
	}
}

// Shown follows the session's settings events, and an event subscriber
// already reads the new value (ACP's config options are built there).
func TestShownFollowsEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		defer e.s.Close()
		if v := e.s.Shown(); v.Mode != "default" || v.Model.ID != "echo" || v.ThinkingLevel != "medium" {
			t.Fatalf("at launch: %+v", v)
		}
		var seen []Shown
		e.s.Subscribe(func(ev events.Event) {
			switch ev.(type) {
			case events.ThinkingLevelChanged, events.PermissionModeChanged:
				seen = append(seen, e.s.Shown())
			}
		})
		if _, err := e.s.SetThinkingLevel("high"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.SetPermissionMode("plan"); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0].ThinkingLevel != "high" || seen[1].Mode != "plan" || seen[1].ThinkingLevel != "high" {
			t.Fatalf("seen by the subscriber: %+v", seen)
		}
	})
}

// Startup: the host's startup session_start, then SessionStart; a host
// that fails stops it before any hook.
func TestManagerStartup(t *testing.T) {
	m, log, all := managerEnv(t)
	cwd := t.TempDir()
	a := m.mustOpen(t, all, cwd)
	boom := errors.New("host failed")
	if err := m.Startup(a, "startup", func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Startup: %v", err)
	}
	if got := log.take(); got != "" || m.Current() != nil {
		t.Fatalf("a failed host startup ran %q", got)
	}
	if err := m.Startup(a, "startup", func() error { log.add("host startup"); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := log.take(), "host startup\nhook SessionStart open:a"; got != want || m.Current() != a {
		t.Fatalf("startup:\n%s\nwant:\n%s", got, want)
	}
	m.Exit()
}

package session

// The session file (ensureFile, persist, flushUnsynced, Open, restore,
// rebuildPlan), rewind (conversation and code, with checkpoints), fork,
// stats and todos.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

func persisted(t *testing.T) func(*Deps) {
	dir := t.TempDir()
	return func(d *Deps) {
		d.Settings.Persist = true
		d.Dirs.Sessions = dir
	}
}

// TestSessionFileRoundTrip pins the lazy file creation and Open: the file
// appears with the first model request, is locked while open, and a
// reopened session has the same branch, thinking level and plan mode.
func TestSessionFileRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{deps: persisted(t)})
		if f, _ := e.s.SessionFile(); f != "" {
			t.Errorf("session file %q before the first request", f)
		}
		if _, err := e.s.SetThinkingLevel("high"); err != nil {
			t.Fatal(err)
		}
		e.runPrompt(t, "first")
		if _, err := e.s.SetPermissionMode("plan"); err != nil {
			t.Fatal(err)
		}
		path, _ := e.s.SessionFile()
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("session file after the first request: %v", err)
		}
		if _, err := Open(e.deps, path, Options{}); !errors.Is(err, store.ErrLocked) {
			t.Errorf("Open of an open session = %v, want ErrLocked", err)
		}
		before, _, _ := e.s.Entries("")
		want, _ := e.s.State()
		e.s.Close()

		s2, err := Open(e.deps, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		got, _ := s2.State()
		if got.SessionID != want.SessionID || got.ThinkingLevel != "high" || got.PermissionMode != "plan" ||
			got.Model == nil || got.Model.ID != "echo" || got.MessageCount != want.MessageCount || got.Cwd != want.Cwd {
			t.Errorf("reopened state %+v, want %+v", got, want)
		}
		after, _, _ := s2.Entries("")
		if len(after) != len(before) {
			t.Errorf("reopened %d entries, wrote %d", len(after), len(before))
		}
	})
}

// TestOpenModelChoice pins restore: the branch's model wins over
// Options.Model unless ForceModel is set.
func TestOpenModelChoice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		model string
	}{
		{"branch model", Options{Model: llm.ModelRef{Provider: "fake", ID: "reasoning"}}, "echo"},
		{"forced model", Options{Model: llm.ModelRef{Provider: "fake", ID: "reasoning"}, ForceModel: true}, "reasoning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{deps: persisted(t)})
				e.runPrompt(t, "first")
				path, _ := e.s.SessionFile()
				e.s.Close()
				s2, err := Open(e.deps, path, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s2.Close()
				if st, _ := s2.State(); st.Model.ID != tc.model {
					t.Errorf("model %s, want %s", st.Model.ID, tc.model)
				}
			})
		})
	}
}

// TestDiskFault pins persist and flushUnsynced: entries the disk refuses
// stay queued (one notification), and are written in order once it
// recovers, so the file ends up complete.
func TestDiskFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var broken atomic.Bool
		e := newEnv(t, setup{deps: func(d *Deps) {
			persisted(t)(d)
			d.Settings.WriteFault = func() error {
				if broken.Load() {
					return errors.New("no space left on device")
				}
				return nil
			}
		}})
		e.runPrompt(t, "first")
		broken.Store(true)
		e.runPrompt(t, "second")
		n := eventsOf[events.Notification](e.rec)
		if len(n) != 1 || n[0].Level != "error" || !strings.Contains(n[0].Message, "no space left") {
			t.Errorf("notifications %+v, want one error", n)
		}
		broken.Store(false)
		if _, err := e.s.SetName("recovered"); err != nil { // the next append flushes the backlog
			t.Fatal(err)
		}
		path, _ := e.s.SessionFile()
		entries, _, _ := e.s.Entries("")
		e.s.Close()
		s2, err := Open(e.deps, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		got, _, _ := s2.Entries("")
		if len(got) != len(entries) {
			t.Fatalf("the file holds %d entries, memory had %d", len(got), len(entries))
		}
		for i := range got {
			if got[i].ID != entries[i].ID {
				t.Fatalf("entry %d is %s in the file, %s in memory", i, got[i].ID, entries[i].ID)
			}
		}
	})
}

// TestRewindConversation pins rewind for mode conversation: the leaf goes
// back to before the message, its text comes back as a draft, the next
// prompt starts a new branch; dry runs change nothing.
func TestRewindConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		defer e.s.Close()
		e.runPrompt(t, "first")
		e.runPrompt(t, "second")
		pts, _ := e.s.RewindPoints()
		if len(pts) != 2 || pts[1].Text != "second" || pts[1].HasCheckpoint {
			t.Fatalf("rewind points %+v", pts)
		}
		for _, bad := range []RewindRequest{
			{EntryID: pts[1].EntryID, Mode: "all"},
			{EntryID: pts[1].EntryID, Mode: "both", OnConflict: "merge"},
			{EntryID: "nope", Mode: "conversation"},
		} {
			if _, err := e.s.Rewind(bad); !errors.Is(err, ErrInvalidArguments) {
				t.Errorf("Rewind(%+v) = %v, want ErrInvalidArguments", bad, err)
			}
		}
		if _, err := e.s.Rewind(RewindRequest{EntryID: pts[1].EntryID, Mode: "code"}); !errors.Is(err, ErrNoCheckpoint) {
			t.Errorf("code rewind without checkpoints: %v", err)
		}
		e.rec.reset()
		dry, err := e.s.Rewind(RewindRequest{EntryID: pts[1].EntryID, Mode: "conversation", DryRun: true})
		if err != nil || dry.Conversation == nil || dry.Conversation.Draft.Text != "second" {
			t.Fatalf("dry run %+v %v", dry, err)
		}
		if msgs, _ := e.s.Messages(); len(msgs) != 4 || e.rec.count("session_rewound") != 0 {
			t.Errorf("a dry run changed the session")
		}
		res, err := e.s.Rewind(RewindRequest{EntryID: pts[1].EntryID, Mode: "conversation"})
		if err != nil || res.Conversation == nil || res.Code != nil {
			t.Fatalf("rewind %+v %v", res, err)
		}
		if sr := eventsOf[events.SessionRewound](e.rec); len(sr) != 1 || sr[0].EntryID != pts[1].EntryID || sr[0].Mode != "conversation" {
			t.Errorf("session_rewound %+v", sr)
		}
		if msgs, _ := e.s.Messages(); len(msgs) != 2 {
			t.Errorf("%d messages after the rewind, want the first turn", len(msgs))
		}
		e.runPrompt(t, "other")
		if fm, _ := e.s.ForkMessages(); len(fm) != 2 || fm[1].Text != "other" {
			t.Errorf("branch after the rewind %+v", fm)
		}
		entries, _, _ := e.s.Entries("")
		var second bool
		for _, en := range entries {
			second = second || en.ID == pts[1].EntryID
		}
		if !second {
			t.Error("the abandoned branch left the file")
		}
	})
}

// fileTool writes its "text" argument to f.txt in the session directory,
// announcing the change to the turn's checkpoint first (as write does).
type fileTool struct{}

func (fileTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "put", Description: "Write f.txt.", Parameters: []byte(`{"type":"object"}`)}
}
func (fileTool) Permission() string { return tools.PermWrite }
func (fileTool) Execute(_ context.Context, c *tools.Call) (*tools.Result, error) {
	path := filepath.Join(c.Env.Cwd, "f.txt")
	if c.Env.BeforeChange != nil {
		c.Env.BeforeChange(path)
	}
	var a struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c.Args, &a)
	if err := os.WriteFile(path, []byte(a.Text), 0o600); err != nil {
		return tools.ErrorResult(err.Error()), nil
	}
	return tools.TextResult("written"), nil
}

// TestRewindCode pins the checkpoint plumbing (afterUserMessage,
// turnTools, recordAfter, restoreFiles): a file the agent changed is put
// back, and the model is told before the next prompt.
func TestRewindCode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cwd := t.TempDir()
		file := filepath.Join(cwd, "f.txt")
		if err := os.WriteFile(file, []byte("original"), 0o600); err != nil {
			t.Fatal(err)
		}
		script := &fake.Script{Responses: []fake.Response{toolCall("put", `{"text":"changed"}`), reply("done"), reply("ok")}}
		e := newEnv(t, setup{script: script, cwd: cwd, mode: "full-auto", tools: []tools.Tool{fileTool{}},
			deps: func(d *Deps) { d.Checkpoints = checkpoint.NewStore(t.TempDir(), 0) }})
		defer e.s.Close()
		e.runPrompt(t, "change it")
		if b, _ := os.ReadFile(file); string(b) != "changed" {
			t.Fatalf("the tool did not write: %q", b)
		}
		pts, _ := e.s.RewindPoints()
		if len(pts) != 1 || !pts[0].HasCheckpoint {
			t.Fatalf("rewind points %+v, want one with a checkpoint", pts)
		}
		res, err := e.s.Rewind(RewindRequest{EntryID: pts[0].EntryID, Mode: "code"})
		if err != nil || res.Code == nil || res.Conversation != nil {
			t.Fatalf("rewind %+v %v", res, err)
		}
		if b, _ := os.ReadFile(file); string(b) != "original" {
			t.Errorf("file after the code rewind: %q", b)
		}
		if sr := eventsOf[events.SessionRewound](e.rec); len(sr) != 1 || !slices.Equal(sr[0].Restored, []string{"f.txt"}) {
			t.Errorf("session_rewound %+v", sr)
		}
		e.rec.reset()
		e.runPrompt(t, "next")
		var note bool
		for _, m := range eventsOf[events.MessageEnd](e.rec) {
			if c, ok := m.Message.(*llm.CustomMessage); ok && c.CustomType == "ama.rewind-note" && strings.Contains(c.Content.PlainText(), "f.txt") {
				note = true
			}
		}
		if !note {
			t.Error("the model was not told which files the rewind restored")
		}
	})
}

// TestFork pins Fork: the new session holds the path to the entry, names
// its parent, and is independent of the source.
func TestFork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{deps: persisted(t)})
		defer e.s.Close()
		e.runPrompt(t, "first")
		e.runPrompt(t, "second")
		fm, _ := e.s.ForkMessages()
		if _, err := e.s.fork("nope", Options{}); !errors.Is(err, ErrEntryNotFound) {
			t.Errorf("Fork(nope) = %v", err)
		}
		f, err := e.s.fork(fm[0].EntryID, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.ID() == e.s.ID() {
			t.Error("the fork has the source's id")
		}
		got, _ := f.ForkMessages()
		if len(got) != 1 || got[0].EntryID != fm[0].EntryID {
			t.Errorf("fork branch %+v, want the path to the first message", got)
		}
		path, _ := f.SessionFile()
		src, _ := e.s.SessionFile()
		h, err := store.ReadSnapshot(path)
		if err != nil || h.Header.ParentSession != src {
			t.Errorf("fork header parent %q (%v), want %q", h.Header.ParentSession, err, src)
		}
	})
}

// TestStats pins stats: branch counts and the usage of every request.
func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermRead}
		e := newEnv(t, setup{tools: []tools.Tool{p}, script: &fake.Script{Responses: []fake.Response{
			{Steps: toolCall("probe", `{}`).Steps, Usage: &fake.UsageSpec{Input: intp(100), Output: intp(10), CacheRead: intp(300)}},
			{Text: text("done"), Usage: &fake.UsageSpec{Input: intp(50), Output: intp(5)}},
		}}})
		defer e.s.Close()
		e.runPrompt(t, "go")
		st, err := e.s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.UserMessages != 1 || st.AssistantMessages != 2 || st.ToolCalls != 1 || st.ToolResults != 1 {
			t.Errorf("counts %+v", st)
		}
		if tt := st.Tokens; tt.Input != 150 || tt.Output != 15 || tt.CacheRead != 300 || tt.Total != 465 {
			t.Errorf("tokens %+v", tt)
		}
		if st.Cost == nil || *st.Cost <= 0 || st.Context == nil || st.Context.Window != 200000 {
			t.Errorf("cost %v context %+v", st.Cost, st.Context)
		}
		if st.CacheHitRate == nil || *st.CacheHitRate != 300.0/450.0 {
			t.Errorf("cache hit rate %v, want 300/450", st.CacheHitRate)
		}
	})
}

// TestTodos pins changeTodos: set and update report todo_updated; a bad
// update changes nothing.
func TestTodos(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		defer e.s.Close()
		items, err := e.s.SetTodos([]plan.TodoItem{{ID: "1", Text: "a", Status: plan.TodoPending}, {ID: "2", Text: "b", Status: plan.TodoPending}})
		if err != nil || len(items) != 2 {
			t.Fatalf("SetTodos = %+v %v", items, err)
		}
		if _, err := e.s.UpdateTodos([]plan.TodoPatch{{ID: "1", Status: plan.TodoDone}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.UpdateTodos([]plan.TodoPatch{{ID: "9", Status: plan.TodoDone}}); err == nil {
			t.Error("an update of an unknown item succeeded")
		}
		got := e.s.Todos()
		if len(got) != 2 || got[0].Status != plan.TodoDone || got[1].Status != plan.TodoPending {
			t.Errorf("todos %+v", got)
		}
		if n := e.rec.count("todo_updated"); n != 2 {
			t.Errorf("%d todo_updated, want 2", n)
		}
	})
}

// TestRewindPersists pins moveLeaf: the rewound leaf is written to the
// file, so a reopened session continues from the rewind point.
func TestRewindPersists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{deps: persisted(t)})
		e.runPrompt(t, "first")
		e.runPrompt(t, "second")
		pts, _ := e.s.RewindPoints()
		if _, err := e.s.Rewind(RewindRequest{EntryID: pts[1].EntryID, Mode: "conversation"}); err != nil {
			t.Fatal(err)
		}
		path, _ := e.s.SessionFile()
		e.s.Close()
		s2, err := Open(e.deps, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if msgs, _ := s2.Messages(); len(msgs) != 2 {
			t.Errorf("reopened branch has %d messages, want the 2 before the rewind point", len(msgs))
		}
	})
}

// FirstPrompt gives the start of the branch's first user message, as
// ForkMessages' text would begin, cut to FirstPromptBytes.
func TestFirstPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		defer e.s.Close()
		if first, err := e.s.FirstPrompt(); err != nil || first != "" {
			t.Fatalf("no prompt yet: %q %v", first, err)
		}
		huge := strings.Repeat("é", FirstPromptBytes) // 2 bytes a rune
		e.runPrompt(t, "x"+huge)
		e.runPrompt(t, "second")
		first, err := e.s.FirstPrompt()
		fm, _ := e.s.ForkMessages()
		if err != nil || len(first) != FirstPromptBytes-1 || !strings.HasPrefix(fm[0].Text, first) || !utf8.ValidString(first) {
			t.Fatalf("first prompt of %d bytes (%v), want the %d-byte start of %d", len(first), err, FirstPromptBytes-1, len(fm[0].Text))
		}
	})
}

// TestForkActorStartsWithFirstCommand: a fork's actor goroutine is started
// by its first command, not by the fork (which would park it at once and
// wake it again for that command), once; a session closed without any
// command closes.
func TestForkActorStartsWithFirstCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{deps: persisted(t)})
		defer e.s.Close()
		e.runPrompt(t, "first")
		fm, _ := e.s.ForkMessages()
		started := func(s *Session) bool {
			s.postMu.Lock()
			defer s.postMu.Unlock()
			return s.started
		}
		f, err := e.s.fork(fm[0].EntryID, Options{})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if started(f) {
			t.Error("the fork's actor started before any command")
		}
		if got, err := f.ForkMessages(); err != nil || len(got) != 1 {
			t.Errorf("ForkMessages = %v, %v", got, err)
		}
		if !started(f) {
			t.Error("the fork's actor not started by its first command")
		}
		f.Close()
		g, err := e.s.fork(fm[0].EntryID, Options{})
		if err != nil {
			t.Fatal(err)
		}
		g.Close() // its first command
		if _, err := g.ForkMessages(); !errors.Is(err, ErrClosed) {
			t.Errorf("a closed fork answered: %v", err)
		}
	})
}

package session

// Session commands that do not start runs: Start, slash commands
// (slashCommand) and the setters of commands.go and toolcmds.go.

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// TestStart pins Start: session_start, then the initial entries of a fresh
// session (model, thinking level, system prompt), once.
func TestStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := fake.New(fake.Options{})
		s, err := New(&Deps{Models: llm.NewRegistry(fp.Entry()), Dirs: Dirs{Data: t.TempDir()}},
			Options{Cwd: t.TempDir(), Model: llm.ModelRef{Provider: "fake", ID: "echo"}, ThinkingLevel: "high"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec := &recorder{}
		s.Subscribe(rec.add)
		if err := s.Start("startup"); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range eventsOf[events.EntryAppended](rec) {
			kinds = append(kinds, e.Entry.Type)
		}
		if want := []string{store.TypeModelChange, store.TypeThinkingLevelChange, store.TypeMessage}; !slices.Equal(kinds, want) {
			t.Errorf("initial entries %q, want %q", kinds, want)
		}
		if ss := eventsOf[events.SessionStart](rec); len(ss) != 1 || ss[0].Reason != "startup" || ss[0].SessionID != s.ID() || rec.types()[0] != "session_start" {
			t.Errorf("session_start %+v first in %s", ss, joinTypes(rec.types()))
		}
		rec.reset()
		_ = s.Start("again")
		if n := rec.count("entry_appended"); n != 0 {
			t.Errorf("a second Start appended %d entries", n)
		}
	})
}

// TestSlashCommands pins slashCommand: builtins answer Handled (or an
// error) without a run; anything else is an ordinary prompt.
func TestSlashCommands(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      Disposition
		err       error
		event     string // an event the command reports
		check     func(State) bool
	}{
		{"thinking", "/thinking high", Handled, nil, "thinking_level_changed", func(s State) bool { return s.ThinkingLevel == "high" }},
		{"thinking unknown", "/thinking max", "", ErrInvalidArguments, "", nil},
		{"model", "/model fake/reasoning", Handled, nil, "model_changed", func(s State) bool { return s.Model.ID == "reasoning" }},
		{"model usage", "/model reasoning", "", ErrInvalidArguments, "", nil},
		{"model unknown", "/model fake/nope", "", llm.ErrModelNotFound, "", nil},
		{"permission", "/permission auto-edit", Handled, nil, "permission_mode_changed", func(s State) bool { return s.PermissionMode == "auto-edit" }},
		{"permission unknown", "/permission yolo", "", ErrInvalidArguments, "", nil},
		{"name", "/name my session", Handled, nil, "entry_appended", func(s State) bool { return s.SessionName == "my session" }},
		{"name usage", "/name", "", ErrInvalidArguments, "", nil},
		{"not a command", "/etc/hosts is where?", Started, nil, "agent_start", nil},
		{"unknown skill", "/skill:nope", "", ErrSkillNotFound, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{})
				defer e.s.Close()
				r := e.runPrompt(t, tc.msg)
				if r.d != tc.want || !errors.Is(r.err, tc.err) || (tc.err == nil) != (r.err == nil) {
					t.Fatalf("reply %q %v, want %q %v", r.d, r.err, tc.want, tc.err)
				}
				if tc.event != "" && e.rec.count(tc.event) == 0 {
					t.Errorf("no %s in %s", tc.event, joinTypes(e.rec.types()))
				}
				if tc.want != Started && e.fp.Calls() != 0 {
					t.Error("a slash command reached the model")
				}
				if tc.check != nil {
					if st, _ := e.s.State(); !tc.check(st) {
						t.Errorf("state %+v", st)
					}
				}
			})
		})
	}
}

func TestSetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{tools: []tools.Tool{&probe{name: "probe", perm: tools.PermRead}, &probe{name: "other", perm: tools.PermRead}}})
		defer e.s.Close()
		s := e.s
		if _, err := s.SetThinkingLevel("huge"); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("SetThinkingLevel(huge) = %v", err)
		}
		if _, err := s.SetThinkingLevel("medium"); err != nil || e.rec.count("thinking_level_changed") != 0 {
			t.Errorf("setting the current level: %v, %d events", err, e.rec.count("thinking_level_changed"))
		}
		if _, err := s.SetQueueMode("steer", "some"); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("SetQueueMode(some) = %v", err)
		}
		if m, err := s.SetQueueMode("followUp", "all"); err != nil || m != "all" {
			t.Errorf("SetQueueMode = %q %v", m, err)
		}
		if _, err := s.SetPermissionMode("nope"); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("SetPermissionMode(nope) = %v", err)
		}
		_, _ = s.SetAutoRetry(false)
		_, _ = s.SetAutoCompaction(false)
		st, _ := s.State()
		if st.FollowUpMode != "all" || st.SteeringMode != "one-at-a-time" || st.AutoRetry || st.AutoCompaction {
			t.Errorf("state %+v", st)
		}
		if _, err := s.SetActiveTools([]string{"probe", "ghost"}); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("SetActiveTools with an unknown tool: %v", err)
		}
		e.rec.reset()
		names, err := s.SetActiveTools([]string{"probe"})
		if err != nil || !slices.Equal(names, []string{"probe"}) {
			t.Errorf("SetActiveTools = %q %v", names, err)
		}
		// The change is one system patch entry removing "other".
		patches := eventsOf[events.EntryAppended](e.rec)
		if len(patches) != 1 {
			t.Fatalf("%d entries for the tool change, want 1", len(patches))
		}
		m, _ := patches[0].Entry.Message()
		if sm, ok := m.(*llm.SystemMessage); !ok || !slices.Equal(sm.ToolsRemoved, []string{"other"}) || len(sm.ToolsAdded) != 0 {
			t.Errorf("system patch %+v", m)
		}
		info, _ := s.Tools()
		if len(info) != 2 || !info[0].Active || info[1].Active {
			t.Errorf("Tools() = %+v", info)
		}
		e.rec.reset()
		if _, err := s.SetActiveTools([]string{"probe"}); err != nil || e.rec.count("entry_appended") != 0 {
			t.Errorf("an unchanged tool set appended a patch: %v", err)
		}
	})
}

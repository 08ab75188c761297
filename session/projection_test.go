package session

// The kept projection (ctxCache, issue 19): after every command of random
// sessions (prompts, tool calls, retries, model and thinking changes,
// manual and automatic compactions, rewinds, forks) the kept context equals
// the full projection of the active branch as the session computed it
// before it kept one, and a resumed session has exactly the context and
// settings the full projection gave before it was closed.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// refContext is contextOf as it was before the projection was kept: the
// full projection of branch (store.Project, pinned to the old projection by
// store's TestProjectionMatchesReference), system messages left out, fresh
// found through the branch positions.
func refContext(branch []*store.Entry) (modelContext, store.ProjectionInfo, error) {
	var c modelContext
	msgs, info, err := store.Project(branch)
	if err != nil {
		return c, info, err
	}
	cut := -1
	if info.Compaction != nil {
		for i, e := range branch {
			if e == info.Compaction {
				cut = i
				break
			}
		}
	}
	pos := map[*store.Entry]int{}
	if cut >= 0 {
		for i, e := range branch {
			pos[e] = i
		}
	}
	c.fresh = -1
	for i, m := range msgs {
		if _, ok := m.(*llm.SystemMessage); ok {
			continue
		}
		if c.fresh < 0 && (cut < 0 || (i < len(info.Entries) && pos[info.Entries[i]] > cut)) {
			c.fresh = len(c.messages)
		}
		c.messages = append(c.messages, m)
	}
	if c.fresh < 0 {
		c.fresh = len(c.messages)
	}
	if info.System != nil {
		c.sections = info.System.Sections
	}
	c.system = strings.Join(c.sections.List(), "\n\n")
	return c, info, nil
}

// contextText renders a context for comparison.
func contextText(t *testing.T, c modelContext) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "system=%q fresh=%d\n", c.system, c.fresh)
	for _, m := range c.messages {
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// snapshotOf is what a session shows of its context: the kept context,
// the counts get_state and get_session_stats report, and the reference.
type snapshotOf struct {
	kept, ref        string
	count, refCount  int
	users, refUsers  int
	model            *store.ModelRef
	level            string
	stateModel       *llm.ModelRef
	stateLevel       string
	builds, branchID int
}

func snapshotContext(t *testing.T, s *Session) snapshotOf {
	t.Helper()
	var out snapshotOf
	var refErr error
	if err := s.do(func(st *state) {
		kept := st.context()
		ref, info, err := refContext(st.branch())
		refErr = err
		out.kept, out.ref = contextText(t, kept), contextText(t, ref)
		out.count, out.refCount = st.messageCount(), len(ref.messages)
		out.users = st.stats().UserMessages
		for _, m := range ref.messages {
			if _, ok := m.(*llm.UserMessage); ok {
				out.refUsers++
			}
		}
		out.model, out.level = info.Model, info.ThinkingLevel
		out.stateModel, out.stateLevel = modelRef(st.model), st.thinkingLevel
		out.builds = st.ctx.builds
	}); err != nil {
		t.Fatal(err)
	}
	if refErr != nil {
		t.Fatal(refErr)
	}
	return out
}

func checkKept(t *testing.T, what string, s *Session) snapshotOf {
	t.Helper()
	got := snapshotContext(t, s)
	if d := cmp.Diff(got.ref, got.kept); d != "" {
		t.Fatalf("%s: kept context differs from the full projection (-full +kept):\n%s", what, d)
	}
	if got.count != got.refCount || got.users != got.refUsers {
		t.Fatalf("%s: message count %d, user messages %d; full projection %d, %d", what, got.count, got.users, got.refCount, got.refUsers)
	}
	return got
}

// TestKeptContextMatchesFullProjection drives random sessions and checks
// the kept context after every command, and that a resume (Open of the
// file) yields the full projection's context, model and thinking level.
func TestKeptContextMatchesFullProjection(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { keptContextSession(t, seed) })
		})
	}
}

func keptContextSession(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 14))
	var script fake.Script
	for range 200 {
		switch k := r.IntN(10); {
		case k < 6:
			script.Responses = append(script.Responses, reply(fmt.Sprintf("reply %d %s", k, strings.Repeat("x", r.IntN(400)))))
		case k < 8:
			script.Responses = append(script.Responses, toolCall("probe", `{"n":1}`))
		default:
			script.Responses = append(script.Responses, fail("server"))
		}
	}
	tiny := &llm.Model{Provider: fake.ProviderID, ID: "tiny", API: "fake", ContextWindow: 3000, MaxTokens: 100}
	e := newEnv(t, setup{script: &script, models: []*llm.Model{tiny}, deps: persisted(t),
		settings: Settings{KeepRecentTokens: 200, MaxRetries: 1},
		tools:    []tools.Tool{&probe{name: "probe", perm: tools.PermRead}}})
	defer func() { e.s.Close() }()

	// reopen closes the session and resumes its file; the resumed session
	// must show what the full projection showed before.
	reopen := func(what string) {
		path, _ := e.s.SessionFile()
		if path == "" {
			return
		}
		before := checkKept(t, what, e.s)
		e.s.Close()
		s2, err := Open(e.deps, path, Options{})
		if err != nil {
			t.Fatalf("%s: Open: %v", what, err)
		}
		e.s = s2
		s2.Subscribe(e.rec.add)
		if err := s2.Start("resume"); err != nil {
			t.Fatal(err)
		}
		after := checkKept(t, what+" (resumed)", s2)
		if d := cmp.Diff(before.ref, after.kept); d != "" {
			t.Fatalf("%s: resumed context differs (-before close +resumed):\n%s", what, d)
		}
		if before.model != nil && (after.stateModel == nil || after.stateModel.ID != before.model.ID || after.stateModel.Provider != before.model.Provider) {
			t.Fatalf("%s: resumed model %+v, branch says %+v", what, after.stateModel, before.model)
		}
		if before.level != "" && after.stateLevel != before.level {
			t.Fatalf("%s: resumed thinking level %q, branch says %q", what, after.stateLevel, before.level)
		}
	}

	ops := map[string]int{}
	for step := range 40 {
		what := fmt.Sprintf("seed %d step %d", seed, step)
		switch k := r.IntN(20); {
		case k < 10:
			what += " prompt"
			e.runPrompt(t, fmt.Sprintf("prompt %d %s", step, strings.Repeat("y", r.IntN(300))))
		case k == 10:
			what += " model"
			id := []string{"echo", "reasoning", "tiny"}[r.IntN(3)]
			if _, err := e.s.SetModel(fake.ProviderID, id); err != nil {
				t.Fatal(err)
			}
		case k == 11:
			what += " thinking"
			if _, err := e.s.SetThinkingLevel([]string{"off", "low", "high"}[r.IntN(3)]); err != nil {
				t.Fatal(err)
			}
		case k >= 12 && k <= 14:
			what += " compact"
			// It may find nothing to do or fail on a scripted error; a
			// compaction that happened is resumed at once.
			if res, err := compactNow(t, e, ""); err == nil && res.Summary != "" {
				checkKept(t, what, e.s)
				ops["compacted"]++
				reopen(what + " resume")
			}
		case k == 15:
			pts, err := e.s.RewindPoints()
			if err != nil {
				t.Fatal(err)
			}
			what += " (no point)"
			if len(pts) > 0 {
				what = strings.TrimSuffix(what, " (no point)")
				what += " rewind"
				if _, err := e.s.Rewind(RewindRequest{EntryID: pts[r.IntN(len(pts))].EntryID, Mode: "conversation"}); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
		case k == 16 && r.IntN(2) == 0:
			entries, _, err := e.s.Entries("")
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) > 0 {
				what += " fork"
				f, err := e.s.fork(entries[r.IntN(len(entries))].ID, Options{})
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				e.s.Close()
				e.s = f
				f.Subscribe(e.rec.add)
				if err := f.Start("fork"); err != nil {
					t.Fatal(err)
				}
			}
		default:
			what += " resume"
			reopen(what)
		}
		ops[what[strings.LastIndexByte(what, ' ')+1:]]++
		checkKept(t, what, e.s)
	}
	reopen(fmt.Sprintf("seed %d end", seed))
	entries, _, _ := e.s.Entries("")
	for _, en := range entries {
		ops["entry:"+en.Type]++
	}
	t.Logf("commands and entries: %v", ops)
}

// TestKeptContextBuildsOnce pins the point of keeping it: turns on an
// unchanged branch extend the projection; only a rewind or a compaction
// projects afresh.
func TestKeptContextBuildsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{settings: Settings{KeepRecentTokens: 1}})
		defer e.s.Close()
		e.runPrompt(t, "one")
		start := checkKept(t, "after one", e.s).builds
		for i := range 5 {
			e.runPrompt(t, fmt.Sprint("more ", i))
			if _, err := e.s.State(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.s.Stats(); err != nil {
				t.Fatal(err)
			}
		}
		if got := checkKept(t, "after six turns", e.s).builds; got != start {
			t.Fatalf("five turns projected the branch afresh %d times, want 0", got-start)
		}
		if _, err := compactNow(t, e, ""); err != nil {
			t.Fatal(err)
		}
		afterCompact := checkKept(t, "after compaction", e.s).builds
		if afterCompact == start {
			t.Fatal("a compaction did not project the branch afresh")
		}
		e.runPrompt(t, "after")
		if got := checkKept(t, "turn after compaction", e.s).builds; got != afterCompact {
			t.Fatalf("a turn after the compaction projected afresh %d times", got-afterCompact)
		}
		pts, _ := e.s.RewindPoints()
		if _, err := e.s.Rewind(RewindRequest{EntryID: pts[0].EntryID, Mode: "conversation"}); err != nil {
			t.Fatal(err)
		}
		if got := checkKept(t, "after rewind", e.s).builds; got != afterCompact+1 {
			t.Fatalf("a rewind projected afresh %d times, want 1", got-afterCompact)
		}
	})
}

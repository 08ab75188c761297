package trace_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

func TestTreeOfTurnsStepsAndTools(t *testing.T) {
	s := newSession()
	s.add(store.ModelChangeEntry("fake", "echo", ""))
	u1 := s.user("look at two files", "")
	s.add(store.CustomEntry("ama.checkpoint", map[string]any{"v": 1, "userEntryId": u1}))
	a1 := s.assistant("Reading.", llm.StopToolUse, usage(100, 10, 300, 0),
		call{"c1", "read", `{"path":"a.txt"}`}, call{"c2", "read", `{"path":"missing.txt"}`})
	r1 := s.result("c1", "read", "A", false)
	r2 := s.result("c2", "read", "no such file", true)
	tr1 := s.step(a1, 1, 10)
	steer := s.user("also b.txt", "steer")
	a2 := s.reply("Done.", usage(200, 5, 0, 100))
	u2 := s.user("thanks", "")
	fu := s.user("and one more", "followUp")
	a3 := s.reply("Welcome.", usage(50, 2, 0, 0))

	r := build(t, s.input(false), trace.Query{})
	eqSlice(t, "turns", turnIDs(r), []string{u1, u2})
	eq(t, "version", r.Trace.Version, 1)
	eq(t, "sessionId", r.Trace.SessionID, "sid")
	eq(t, "sessionFile", r.Trace.SessionFile, "/data/s.jsonl")
	eq(t, "partial", r.Trace.Partial, false)
	eq(t, "hasMoreBefore", r.HasMoreBefore, false)
	eq(t, "cursor.before", r.Cursor.Before, "")
	eq(t, "cursor.since", *r.Cursor.Since, *s.leaf) // a3's trace entry
	eq(t, "last step", r.Trace.Turns[1].Steps[0].ID, a3)
	eq(t, "leafId", *r.LeafID, *s.leaf)
	if r.Previews != nil {
		t.Errorf("previews without content=preview: %v", r.Previews)
	}

	t1 := r.Trace.Turns[0]
	eq(t, "turn1 status", t1.Status, trace.StatusOK)
	eqSlice(t, "turn1 entryIds", t1.EntryIDs, []string{u1, steer})
	if len(t1.Steps) != 2 {
		t.Fatalf("turn1 has %d steps", len(t1.Steps))
	}
	st := t1.Steps[0]
	eq(t, "step id", st.ID, a1)
	eqSlice(t, "step entryIds", st.EntryIDs, []string{a1, tr1})
	eq(t, "step status", st.Status, trace.StatusOK)
	eq(t, "stopReason", st.StopReason, llm.StopToolUse)
	eq(t, "provider", st.Provider, "fake")
	eq(t, "model", st.Model, "echo")
	eq(t, "thinkingLevel", st.ThinkingLevel, "medium")
	eq(t, "attempt", st.Attempt, 1)
	eq(t, "step cacheHitRatio", st.CacheHitRatio, 0.75)
	eq(t, "requestAt", st.RequestAt > 0, true)
	eq(t, "ttftMs", *st.TTFTMs, int64(100))
	eq(t, "tps", *st.TPS, 50.0) // 10 tokens in 200 ms
	if len(st.Tools) != 2 {
		t.Fatalf("step has %d tools", len(st.Tools))
	}
	ok, bad := st.Tools[0], st.Tools[1]
	eq(t, "tool id", ok.ID, "c1")
	eq(t, "tool name", ok.Name, "read")
	eq(t, "tool status", ok.Status, trace.StatusOK)
	eq(t, "tool isError", ok.IsError, false)
	eqSlice(t, "tool entryIds", ok.EntryIDs, []string{a1, r1})
	eq(t, "tool children", len(ok.Children), 0)
	if ok.Children == nil {
		t.Error("children must be an empty list, not nil")
	}
	eq(t, "error tool status", bad.Status, trace.StatusError)
	eq(t, "error tool isError", bad.IsError, true)
	eqSlice(t, "error tool entryIds", bad.EntryIDs, []string{a1, r2})
	eq(t, "step2", t1.Steps[1].ID, a2)
	eq(t, "step2 tools", len(t1.Steps[1].Tools), 0)

	u := t1.Usage
	eq(t, "requests", u.Requests, 2)
	eq(t, "input", u.Input, 300)
	eq(t, "output", u.Output, 15)
	eq(t, "cacheRead", u.CacheRead, 300)
	eq(t, "cacheWrite", u.CacheWrite, 100)
	eq(t, "toolCalls", u.ToolCalls, 2)
	wantCost := usage(100, 10, 300, 0).Cost.Total + usage(200, 5, 0, 100).Cost.Total
	eq(t, "cost", u.Cost, wantCost)
	eq(t, "turn cacheHitRatio", u.CacheHitRatio, 300.0/700)
	eq(t, "durationMs", u.DurationMs, t1.EndedAt-t1.StartedAt)
	if t1.StartedAt == 0 || t1.EndedAt <= t1.StartedAt {
		t.Errorf("turn times %d..%d", t1.StartedAt, t1.EndedAt)
	}

	t2 := r.Trace.Turns[1]
	eqSlice(t, "turn2 entryIds (follow-up joins)", t2.EntryIDs, []string{u2, fu})
	eq(t, "turn2 steps", len(t2.Steps), 1)

	tot := r.Trace.Totals
	eq(t, "totals requests", tot.Requests, 3)
	eq(t, "totals input", tot.Input, 350)
	eq(t, "totals toolCalls", tot.ToolCalls, 2)
	eq(t, "totals cost", tot.Cost, wantCost+usage(50, 2, 0, 0).Cost.Total)
	eq(t, "totals durationMs", tot.DurationMs, t1.Usage.DurationMs+t2.Usage.DurationMs)
	eq(t, "totals cacheHitRatio", tot.CacheHitRatio, 300.0/750)
	eq(t, "aux", len(r.Trace.Aux), 0)
	if r.Trace.Aux == nil {
		t.Error("aux must be an empty list, not nil")
	}
}

func TestRunningTurnAndTool(t *testing.T) {
	s := newSession()
	u1 := s.user("one", "")
	s.reply("ok", usage(1, 1, 0, 0))
	u2 := s.user("run it", "")
	a := s.assistant("", llm.StopToolUse, usage(1, 1, 0, 0), call{"c9", "bash", `{"command":"sleep 9"}`})

	r := build(t, s.input(true), trace.Query{})
	eq(t, "partial", r.Trace.Partial, true)
	eq(t, "turn1", r.Trace.Turns[0].Status, trace.StatusOK)
	last := r.Trace.Turns[1]
	eq(t, "running turn", last.ID, u2)
	eq(t, "running turn status", last.Status, trace.StatusRunning)
	tool := last.Steps[0].Tools[0]
	eq(t, "tool status", tool.Status, trace.StatusRunning)
	eqSlice(t, "tool entryIds", tool.EntryIDs, []string{a})
	eqSlice(t, "step entryIds (no trace entry yet)", last.Steps[0].EntryIDs, []string{a})
	if last.Steps[0].TTFTMs != nil || last.Steps[0].TPS != nil {
		t.Error("times without a trace entry")
	}

	// The same file after the process stopped: the tool stays running,
	// the turn takes its last step's status.
	r = build(t, s.input(false), trace.Query{})
	eq(t, "stopped turn status", r.Trace.Turns[1].Status, trace.StatusOK)
	eq(t, "stopped tool status", r.Trace.Turns[1].Steps[0].Tools[0].Status, trace.StatusRunning)
	eq(t, "partial", r.Trace.Partial, false)
	_ = u1

	// A turn without any reply.
	s.user("lost", "")
	r = build(t, s.input(false), trace.Query{})
	eq(t, "replyless turn", r.Trace.Turns[2].Status, trace.StatusAborted)
	eq(t, "replyless steps", len(r.Trace.Turns[2].Steps), 0)
	if r.Trace.Turns[2].Steps == nil {
		t.Error("steps must be an empty list, not nil")
	}
}

func TestRetriesAndStatuses(t *testing.T) {
	s := newSession()
	s.user("try", "")
	e1 := s.assistant("", llm.StopError, usage(0, 0, 0, 0))
	s.add(store.ContextEditEntry(e1, nil, "retry"))
	e2 := s.assistant("", llm.StopError, usage(0, 0, 0, 0))
	s.add(store.ContextEditEntry(e2, nil, "retry"))
	ok := s.assistant("fine", llm.StopStop, usage(10, 1, 0, 0))
	s.step(ok, 3, 1)
	s.user("stop it", "")
	s.assistant("partial", llm.StopAborted, usage(5, 1, 0, 0))
	s.user("interrupting", "interrupt")
	s.reply("switched", usage(1, 1, 0, 0))

	r := build(t, s.input(false), trace.Query{})
	if len(r.Trace.Turns) != 3 {
		t.Fatalf("turns %v (interrupt starts a turn)", turnIDs(r))
	}
	steps := r.Trace.Turns[0].Steps
	eq(t, "steps", len(steps), 3)
	eq(t, "attempt 1", steps[0].Attempt, 1)
	eq(t, "attempt 2 (inferred)", steps[1].Attempt, 2)
	eq(t, "attempt 3 (trace)", steps[2].Attempt, 3)
	eq(t, "failed status", steps[0].Status, trace.StatusError)
	eqSlice(t, "failed entryIds", steps[0].EntryIDs, []string{e1})
	eq(t, "retried turn", r.Trace.Turns[0].Status, trace.StatusOK)
	eq(t, "requests include failed attempts", r.Trace.Turns[0].Usage.Requests, 3)
	eq(t, "aborted turn", r.Trace.Turns[1].Status, trace.StatusAborted)
	eq(t, "aborted step", r.Trace.Turns[1].Steps[0].Status, trace.StatusAborted)
}

func TestTraceEntryStatusAndTPS(t *testing.T) {
	s := newSession()
	s.user("x", "")
	a := s.assistant("y", llm.StopStop, usage(1, 40, 0, 0))
	s.add(store.CustomEntry(trace.CustomType, map[string]any{"kind": "step", "attempt": 1, "assistantEntryId": a,
		"status": "error", "tps": 12.5, "requestAt": 10.0, "firstTokenAt": 30.0, "doneAt": 50.0}))
	// Other trace kinds and a second step record for the same reply are ignored.
	s.add(store.CustomEntry(trace.CustomType, map[string]any{"kind": "retry_wait", "attempt": 2}))
	s.add(store.CustomEntry(trace.CustomType, map[string]any{"kind": "step", "attempt": 7, "assistantEntryId": a}))
	st := build(t, s.input(false), trace.Query{}).Trace.Turns[0].Steps[0]
	eq(t, "status from trace", st.Status, trace.StatusError)
	eq(t, "tps from trace", *st.TPS, 12.5)
	eq(t, "ttft", *st.TTFTMs, int64(20))
	eq(t, "attempt from first record", st.Attempt, 1)
	eq(t, "entryIds", len(st.EntryIDs), 2)
}

func fiveTurns() (*session, []string) {
	s := newSession()
	s.add(store.ModelChangeEntry("fake", "echo", ""))
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, s.user("q", ""))
		s.reply("a", usage(1, 1, 0, 0))
	}
	return s, ids
}

func TestTailWindow(t *testing.T) {
	s, ids := fiveTurns()
	r := build(t, s.input(false), trace.Query{TurnLimit: limit(2)})
	eqSlice(t, "window", turnIDs(r), ids[3:])
	eq(t, "hasMoreBefore", r.HasMoreBefore, true)
	eq(t, "cursor.before", r.Cursor.Before, ids[3])
	eq(t, "cursor.since", *r.Cursor.Since, *s.leaf)
	eq(t, "totals cover the branch", r.Trace.Totals.Requests, 5)

	r = build(t, s.input(false), trace.Query{TurnLimit: limit(5)})
	eqSlice(t, "exact", turnIDs(r), ids)
	eq(t, "hasMoreBefore", r.HasMoreBefore, false)
	eq(t, "no cursor.before", r.Cursor.Before, "")

	r = build(t, s.input(false), trace.Query{})
	eq(t, "default limit covers all", len(r.Trace.Turns), 5)
}

func TestDefaultLimitIs50(t *testing.T) {
	s := newSession()
	var ids []string
	for i := 0; i < 60; i++ {
		ids = append(ids, s.user("q", ""))
		s.reply("a", usage(1, 1, 0, 0))
	}
	r := build(t, s.input(false), trace.Query{})
	eqSlice(t, "window", turnIDs(r), ids[10:])
	eq(t, "cursor.before", r.Cursor.Before, ids[10])
	r = build(t, s.input(false), trace.Query{TurnLimit: limit(500)})
	eq(t, "max limit", len(r.Trace.Turns), 60)
}

func TestBeforePaging(t *testing.T) {
	s, ids := fiveTurns()
	r := build(t, s.input(false), trace.Query{Before: ids[3], TurnLimit: limit(2)})
	eqSlice(t, "page", turnIDs(r), ids[1:3])
	eq(t, "hasMoreBefore", r.HasMoreBefore, true)
	eq(t, "cursor.before", r.Cursor.Before, ids[1])

	r = build(t, s.input(false), trace.Query{Before: r.Cursor.Before, TurnLimit: limit(2)})
	eqSlice(t, "first page", turnIDs(r), ids[:1])
	eq(t, "hasMoreBefore", r.HasMoreBefore, false)

	r = build(t, s.input(false), trace.Query{Before: ids[0]})
	eq(t, "nothing before the first turn", len(r.Trace.Turns), 0)
	if r.Trace.Turns == nil {
		t.Error("turns must be an empty list, not nil")
	}

	for _, bad := range []string{"missing", s.entries[0].ID, s.entries[3].ID} { // unknown, a model change, a trace entry
		_, err := trace.Build(s.input(false), trace.Query{Before: bad})
		if !errors.Is(err, trace.ErrInvalidArguments) || err.Error() != "before "+bad+" is not a turn on this branch" {
			t.Errorf("before %s: %v", bad, err)
		}
	}
}

func TestSince(t *testing.T) {
	s, ids := fiveTurns()
	in := s.input(false)
	reply2 := in.Entries[2*3+2] // model change, then (user, reply, trace) per turn: turn 2's reply
	r := build(t, in, trace.Query{Since: reply2.ID, TurnLimit: limit(1)})
	eqSlice(t, "from the turn holding since, no limit", turnIDs(r), ids[2:])
	eq(t, "hasMoreBefore", r.HasMoreBefore, true)
	eq(t, "cursor.before", r.Cursor.Before, ids[2])

	r = build(t, in, trace.Query{Since: *s.leaf})
	eqSlice(t, "the last turn is resent", turnIDs(r), ids[4:])

	r = build(t, in, trace.Query{Since: ids[1]})
	eqSlice(t, "since a turn id", turnIDs(r), ids[1:])

	r = build(t, in, trace.Query{Since: s.entries[0].ID})
	eqSlice(t, "since an entry before the first turn", turnIDs(r), ids)
	eq(t, "hasMoreBefore", r.HasMoreBefore, false)

	r = build(t, in, trace.Query{Since: "nope"})
	eqSlice(t, "unknown since starts over", turnIDs(r), ids)
}

func TestBranchesAndBranchAll(t *testing.T) {
	s := newSession()
	u1 := s.user("one", "")
	s.reply("1", usage(1, 1, 0, 0))
	u2 := s.user("two", "")
	s.reply("2", usage(2, 1, 0, 0))
	sum := s.add(store.CompactionEntry("summary", u2, 10, &llm.Usage{Input: 7, Output: 3}))
	// Rewind to before u2, then a new branch.
	back := s.entries[2].ID // turn 1's trace entry
	s.moveLeaf(&back)
	u3 := s.user("three", "")
	s.reply("3", usage(4, 1, 0, 0))

	r := build(t, s.input(false), trace.Query{})
	eqSlice(t, "leaf branch", turnIDs(r), []string{u1, u3})
	eq(t, "leaf totals", r.Trace.Totals.Input, 5)
	eq(t, "aux of another branch", len(r.Trace.Aux), 0)

	r = build(t, s.input(false), trace.Query{Since: sum})
	eqSlice(t, "since on another branch: start over", turnIDs(r), []string{u1, u3})

	all := build(t, s.all(false), trace.Query{Branch: trace.BranchAll})
	eqSlice(t, "all", turnIDs(all), []string{u1, u2, u3})
	eq(t, "all totals", all.Trace.Totals.Input, 1+2+4+7)
	eq(t, "all totals requests", all.Trace.Totals.Requests, 4)
	if len(all.Trace.Aux) != 1 {
		t.Fatalf("aux %v", all.Trace.Aux)
	}
	eq(t, "aux turn", all.Trace.Aux[0].TurnID, u2)
	eq(t, "aux purpose", all.Trace.Aux[0].Purpose, trace.PurposeCompaction)
	eq(t, "all cursor.since = last entry of the file", *all.Cursor.Since, s.entries[len(s.entries)-1].ID)
	eq(t, "leafId", *all.LeafID, *s.leaf)

	r = build(t, s.all(false), trace.Query{Branch: trace.BranchAll, Since: sum})
	eqSlice(t, "all since", turnIDs(r), []string{u2, u3})

	_, err := trace.Build(s.input(false), trace.Query{Before: u2})
	if !errors.Is(err, trace.ErrInvalidArguments) {
		t.Errorf("before of another branch: %v", err)
	}
	r = build(t, s.all(false), trace.Query{Branch: trace.BranchAll, Before: u3})
	eqSlice(t, "all before", turnIDs(r), []string{u1, u2})
}

func TestAux(t *testing.T) {
	s := newSession()
	s.add(store.UsageEntry("cache_warm", "fake", "echo", usage(0, 0, 900, 0)))
	u1 := s.user("go", "")
	c := s.add(store.UsageEntry("permission_classify", "fake", "echo", usage(20, 2, 0, 0)))
	s.reply("ok", usage(10, 1, 0, 0))
	s.add(store.CompactionEntry("no usage", u1, 5, nil))
	b := s.add(store.BranchSummaryEntry(u1, "sum", &llm.Usage{Input: 3, Output: 1}))

	r := build(t, s.input(false), trace.Query{TurnLimit: limit(1)})
	if len(r.Trace.Aux) != 3 {
		t.Fatalf("aux: %+v", r.Trace.Aux)
	}
	warm, cls, bs := r.Trace.Aux[0], r.Trace.Aux[1], r.Trace.Aux[2]
	eq(t, "warm purpose", warm.Purpose, "cache_warm")
	eq(t, "warm turn", warm.TurnID, "")
	eq(t, "classifier id", cls.ID, c)
	eq(t, "classifier purpose", cls.Purpose, "permission_classify")
	eq(t, "classifier provider", cls.Provider, "fake")
	eq(t, "classifier model", cls.Model, "echo")
	eq(t, "classifier turn", cls.TurnID, u1)
	eq(t, "classifier usage", cls.Usage.Input, 20)
	eq(t, "branch summary", bs.ID, b)
	eq(t, "branch summary purpose", bs.Purpose, trace.PurposeBranchSummary)

	tot := r.Trace.Totals
	eq(t, "totals requests", tot.Requests, 4)
	eq(t, "totals input", tot.Input, 10+20+3)
	eq(t, "totals cacheRead", tot.CacheRead, 900)
	eq(t, "turn requests", r.Trace.Turns[0].Usage.Requests, 1)
	eq(t, "turn input (no aux)", r.Trace.Turns[0].Usage.Input, 10)
	wantCost := usage(10, 1, 0, 0).Cost.Total + usage(0, 0, 900, 0).Cost.Total + usage(20, 2, 0, 0).Cost.Total
	if math.Abs(tot.Cost-wantCost) > 1e-15 {
		t.Errorf("totals cost %v, want %v", tot.Cost, wantCost)
	}
}

func TestEmptyAndOrphans(t *testing.T) {
	r := build(t, trace.Input{SessionID: "sid", Cwd: "/w"}, trace.Query{Content: trace.ContentPreview})
	eq(t, "turns", len(r.Trace.Turns), 0)
	if r.Trace.Turns == nil || r.Trace.Aux == nil || r.Previews == nil {
		t.Error("turns, aux and previews must be empty lists")
	}
	if r.Cursor.Since != nil || r.LeafID != nil {
		t.Error("no since and no leaf for an empty session")
	}

	s := newSession()
	s.add(store.ModelChangeEntry("fake", "echo", ""))
	s.reply("before any prompt", usage(9, 9, 0, 0))
	u := s.user("hi", "")
	s.result("ghost", "read", "x", false) // answers no call
	s.reply("hello", usage(1, 1, 0, 0))
	r = build(t, s.input(false), trace.Query{})
	eqSlice(t, "turns", turnIDs(r), []string{u})
	eq(t, "orphan steps are not counted", r.Trace.Totals.Requests, 1)
	eq(t, "steps", len(r.Trace.Turns[0].Steps), 1)
}

func TestRepeatedToolCallIDs(t *testing.T) {
	// Some providers number calls per reply: ids repeat across steps.
	s := newSession()
	s.user("go", "")
	a1 := s.reply("", usage(1, 1, 0, 0), call{"call_0", "read", `{}`})
	r1 := s.result("call_0", "read", "first", false)
	a2 := s.reply("", usage(1, 1, 0, 0), call{"call_0", "read", `{}`})
	r2 := s.result("call_0", "read", "second", true)
	steps := build(t, s.input(false), trace.Query{}).Trace.Turns[0].Steps
	eqSlice(t, "first", steps[0].Tools[0].EntryIDs, []string{a1, r1})
	eqSlice(t, "second", steps[1].Tools[0].EntryIDs, []string{a2, r2})
	eq(t, "second status", steps[1].Tools[0].Status, trace.StatusError)
}

func TestValidate(t *testing.T) {
	cases := []struct {
		q   trace.Query
		msg string
	}{
		{trace.Query{TurnLimit: limit(0)}, "turnLimit must be an integer in 1..500"},
		{trace.Query{TurnLimit: limit(501)}, "turnLimit must be an integer in 1..500"},
		{trace.Query{TurnLimit: limit(-3)}, "turnLimit must be an integer in 1..500"},
		{trace.Query{TurnLimit: limit(2.5)}, "turnLimit must be an integer in 1..500"},
		{trace.Query{TurnLimit: limit(math.NaN())}, "turnLimit must be an integer in 1..500"},
		{trace.Query{TurnLimit: limit(math.Inf(1))}, "turnLimit must be an integer in 1..500"},
		{trace.Query{Branch: "main"}, "branch must be leaf or all"},
		{trace.Query{Content: "full"}, "content must be none or preview"},
		{trace.Query{Before: "a", Since: "b"}, "before and since cannot be used together"},
	}
	for _, c := range cases {
		err := c.q.Validate()
		if err == nil || err.Error() != c.msg || !errors.Is(err, trace.ErrInvalidArguments) {
			t.Errorf("%+v: %v, want %q", c.q, err, c.msg)
		}
		if _, err := trace.Build(trace.Input{}, c.q); !errors.Is(err, trace.ErrInvalidArguments) {
			t.Errorf("Build %+v: %v", c.q, err)
		}
	}
	for _, q := range []trace.Query{{}, {Branch: "leaf", Content: "none", TurnLimit: limit(1)},
		{Branch: "all", Content: "preview", TurnLimit: limit(500), Since: "x"}, {Before: "x"}} {
		if err := q.Validate(); err != nil {
			t.Errorf("%+v: %v", q, err)
		}
	}
	err := trace.TaskNotFound("t9")
	if err.Error() != "no task t9 in this session" || !errors.Is(err, trace.ErrTaskNotFound) || errors.Is(err, trace.ErrInvalidArguments) {
		t.Errorf("TaskNotFound: %v", err)
	}
}

// Build only reads its input: concurrent builds over the same entries are
// race-free (run with -race) and agree.
func TestConcurrentBuilds(t *testing.T) {
	s, _ := fiveTurns()
	in := s.input(false)
	var wg sync.WaitGroup
	out := make([]string, 8)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := trace.Build(in, trace.Query{Content: trace.ContentPreview})
			if err != nil {
				t.Error(err)
				return
			}
			out[i] = strings.Join(turnIDs(r), ",")
		}()
	}
	wg.Wait()
	for _, o := range out[1:] {
		eq(t, "result", o, out[0])
	}
}

// A host message keeps its origin when it is queued: it starts a turn only
// when the checkpoint record of a run start names it.
func TestHostMessageTurns(t *testing.T) {
	s := newSession()
	s.add(store.ModelChangeEntry("fake", "echo", ""))
	h1 := s.user("from the host, idle", llm.OriginHost)
	s.add(store.CustomEntry(store.CustomCheckpoint, map[string]any{"v": 1, "userEntryId": h1, "files": map[string]any{}}))
	s.reply("One.", usage(10, 1, 0, 0))
	h2 := s.user("from the host, queued", llm.OriginHost)
	s.reply("Two.", usage(10, 1, 0, 0))

	r := build(t, s.input(false), trace.Query{})
	eqSlice(t, "turns", turnIDs(r), []string{h1})
	if got := r.Trace.Turns[0].EntryIDs; !slices.Contains(got, h2) {
		t.Errorf("turn entryIds %v do not hold the queued host message %s", got, h2)
	}
}

// TestTotalsIndependentOfWindow: turns outside the window are tallied
// without decoding their messages (lite.go); the totals, and each turn's
// usage and times, must be what the full build of the same turn gives.
func TestTotalsIndependentOfWindow(t *testing.T) {
	s := newSession()
	s.add(store.ModelChangeEntry("fake", "echo", ""))
	s.user("first", "")
	a := s.reply("", usage(10, 2, 3, 4), call{"c1", "read", `{"path":"a"}`}, call{"c2", "bash", `{}`})
	s.result("c2", "bash", "out", true)
	s.result("c1", "read", "text", false)
	s.result("c1", "read", "unmatched", false)
	s.reply("done", usage(5, 1, 0, 0))
	_ = a
	s.user("steer", llm.OriginSteer)
	s.user("second", "")
	e := s.assistant("", llm.StopError, usage(1, 0, 0, 0))
	s.add(store.ContextEditEntry(e, nil, "retry"))
	s.reply("", usage(7, 3, 1, 0), call{"call_0", "read", `{}`})
	s.result("call_0", "read", "x", false)
	s.reply("", usage(7, 3, 1, 0), call{"call_0", "read", `{}`})
	s.tick(100)
	s.result("call_0", "read", "y", false)
	s.add(store.UsageEntry("cache_warm", "fake", "echo", usage(2, 0, 0, 0)))
	s.user("third, never answered", "")
	s.user("fourth", "")
	s.reply("ok", usage(1, 1, 1, 1))

	// The entries as appended (facts from the messages), as read from
	// their lines (facts from the scanner) and without facts (decoded).
	read, raw := *s, *s
	read.entries, raw.entries = nil, nil
	for _, e := range s.entries {
		var r store.Entry
		if err := json.Unmarshal(e.AppendJSON(nil), &r); err != nil {
			t.Fatal(err)
		}
		if e.Type == store.TypeMessage && r.MessageFacts() == nil {
			t.Fatalf("no facts read from %s", e.AppendJSON(nil))
		}
		read.entries = append(read.entries, &r)
		c := store.RawEntry(e.Type, e.Body())
		c.ID, c.ParentID, c.Timestamp = e.ID, e.ParentID, e.Timestamp
		raw.entries = append(raw.entries, c)
	}
	var want trace.Usage
	for k, in := range []trace.Input{s.input(false), s.all(false), read.input(false), read.all(false), raw.input(false), raw.all(false)} {
		full := build(t, in, trace.Query{TurnLimit: limit(500)})
		if k == 0 {
			want = full.Trace.Totals
		} else if full.Trace.Totals != want {
			t.Errorf("input %d: totals %+v, want %+v", k, full.Trace.Totals, want)
		}
		if len(full.Trace.Turns) != 4 {
			t.Fatalf("turns %v", turnIDs(full))
		}
		for n := 1; n <= 4; n++ {
			r := build(t, in, trace.Query{TurnLimit: limit(float64(n))})
			if r.Trace.Totals != full.Trace.Totals {
				t.Errorf("window of %d: totals %+v, want %+v", n, r.Trace.Totals, full.Trace.Totals)
			}
		}
		// Each turn, built in a window of its own, matches the full build.
		for i, want := range full.Trace.Turns {
			q := trace.Query{TurnLimit: limit(1)}
			if i+1 < len(full.Trace.Turns) {
				q.Before = full.Trace.Turns[i+1].ID
			}
			got := build(t, in, q).Trace.Turns[0]
			if got.Usage != want.Usage || got.StartedAt != want.StartedAt || got.EndedAt != want.EndedAt {
				t.Errorf("turn %d alone: usage %+v %d-%d, in full %+v %d-%d", i, got.Usage, got.StartedAt, got.EndedAt,
					want.Usage, want.StartedAt, want.EndedAt)
			}
		}
	}
}

// TestStepRecordFarFromItsReply: a record written after many tool
// results (more than the few entries looked at first) still finds its
// reply, and so does one written before it.
func TestStepRecordFarFromItsReply(t *testing.T) {
	s := newSession()
	s.user("x", "")
	var calls []call
	for i := range 80 {
		calls = append(calls, call{fmt.Sprintf("c%d", i), "read", `{}`})
	}
	a := s.assistant("", llm.StopToolUse, usage(1, 1, 0, 0), calls...)
	for _, c := range calls {
		s.result(c.id, c.name, "ok", false)
	}
	s.step(a, 3, 1)
	st := build(t, s.input(false), trace.Query{}).Trace.Turns[0].Steps[0]
	eq(t, "attempt from the far record", st.Attempt, 3)
	eq(t, "entryIds", len(st.EntryIDs), 2)
}

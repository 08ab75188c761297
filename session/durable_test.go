package session

// Durable approvals (durable.go): defer parks the batch, answers run it
// once, expiry denies, and a crash at any point of the append sequence
// loses no open request and runs no call twice.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/tools"
)

// scripted answers each ask from a list (by order of asking), default
// defer.
type scripted struct {
	mu      sync.Mutex
	answers []events.Approval
	asked   []string // request ids
}

func (a *scripted) Ask(_ context.Context, req *events.PermissionRequest) events.Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.RequestID)
	if len(a.answers) == 0 {
		return events.ApprovalDefer
	}
	d := a.answers[0]
	a.answers = a.answers[1:]
	return d
}

// marker is a tool whose every execution is counted per call id, with the
// session file's size at that moment (the crash model below).
type marker struct {
	mu   sync.Mutex
	runs map[string]int
	at   map[string]int64 // file size when the call executed
	file func() string
}

func newMarker() *marker { return &marker{runs: map[string]int{}, at: map[string]int64{}} }

func (m *marker) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "act", Description: "Acts. For tests.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (m *marker) Permission() string { return tools.PermExecute }
func (m *marker) Execute(_ context.Context, c *tools.Call) (*tools.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[c.ID]++
	if m.file != nil {
		if fi, err := os.Stat(m.file()); err == nil {
			m.at[c.ID] = fi.Size()
		}
	}
	return tools.TextResult("acted"), nil
}

func (m *marker) count(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[id]
}

// batch is a model reply with n calls of act, ids <prefix>_<i>.
func batch(prefix string, n int) fake.Response {
	var steps []fake.Step
	for i := range n {
		steps = append(steps, fake.Step{ToolCall: &fake.ToolCallSpec{Name: "act", ID: fmt.Sprintf("%s_%d", prefix, i), Arguments: json.RawMessage(`{"n":` + strconv.Itoa(i) + `}`)}})
	}
	return fake.Response{Steps: steps}
}

func durableEnv(t *testing.T, m *marker, ap Approver, script *fake.Script, deps func(*Deps)) *env {
	return newEnv(t, setup{script: script, tools: []tools.Tool{m}, approver: ap, deps: func(d *Deps) {
		persisted(t)(d)
		if deps != nil {
			deps(d)
		}
	}})
}

// A deferred call is parked (no result, get_state waiting_approval), runs
// once when answered, and a second answer is ErrApprovalResolved.
func TestDurableDeferThenAllowRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMarker()
		e := durableEnv(t, m, &scripted{}, &fake.Script{Responses: []fake.Response{batch("c", 1), reply("done")}}, nil)
		defer e.s.Close()
		e.s.SetDurableApprovals(true)
		e.runPrompt(t, "go")
		reqs := eventsOf[events.PermissionRequest](e.rec)
		if len(reqs) != 1 {
			t.Fatalf("requests %d", len(reqs))
		}
		st, _ := e.s.State()
		if st.Status != "waiting_approval" || len(st.WaitingApproval) != 1 || st.WaitingApproval[0].RequestID != reqs[0].RequestID {
			t.Fatalf("state while parked: %+v", st)
		}
		if n := len(eventsOf[events.PermissionResolved](e.rec)); n != 0 {
			t.Fatalf("a deferred request was resolved (%d)", n)
		}
		settled := eventsOf[events.AgentSettled](e.rec)
		if len(settled) != 1 || settled[0].Warning != warningWaiting {
			t.Fatalf("agent_settled %+v", settled)
		}
		answered := false
		known, err := e.s.AnswerApproval(reqs[0].RequestID, events.ApprovalAllow, func() { answered = true })
		if !known || err != nil || !answered {
			t.Fatalf("answer: known %v err %v ok %v", known, err, answered)
		}
		waitIdle(t, e.s)
		if n := m.count("c_0"); n != 1 {
			t.Fatalf("ran %d times", n)
		}
		if _, err := e.s.AnswerApproval(reqs[0].RequestID, events.ApprovalAllow, func() {}); !errors.Is(err, ErrApprovalResolved) {
			t.Fatalf("second answer: %v", err)
		}
		waitIdle(t, e.s)
		if n := m.count("c_0"); n != 1 {
			t.Fatalf("ran %d times after a second answer", n)
		}
		msgs, _ := e.s.Messages()
		if last, ok := msgs[len(msgs)-1].(*llm.AssistantMessage); !ok || last.Text("") != "done" {
			t.Fatalf("the run did not go on with the model: %T", msgs[len(msgs)-1])
		}
	})
}

// Without the capability nothing changes: no approval entry, and a defer
// from the approver is a deny.
func TestDurableOffIsUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMarker()
		e := durableEnv(t, m, &scripted{}, &fake.Script{Responses: []fake.Response{batch("c", 1), reply("done")}}, nil)
		defer e.s.Close()
		e.runPrompt(t, "go")
		res := eventsOf[events.PermissionResolved](e.rec)
		if len(res) != 1 || res[0].Decision != events.ApprovalDeny || res[0].Reason != "" {
			t.Fatalf("resolved %+v", res)
		}
		for _, ev := range eventsOf[events.EntryAppended](e.rec) {
			if ct := ev.Entry.CustomType(); ct == CustomApproval || ct == CustomApprovalResolved {
				t.Fatalf("approval entry without the capability")
			}
		}
		if m.count("c_0") != 0 {
			t.Fatal("ran")
		}
	})
}

// The deadline passes while the session waits (the injected clock, here
// synctest's): deny with reason expired, no run, "not run" result.
func TestDurableExpiresWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMarker()
		e := durableEnv(t, m, &scripted{}, &fake.Script{Responses: []fake.Response{batch("c", 2), reply("done")}}, func(d *Deps) {
			d.Settings.ApprovalDeferTTL = time.Hour
		})
		defer e.s.Close()
		e.s.SetDurableApprovals(true)
		e.runPrompt(t, "go")
		if n := len(eventsOf[events.PermissionRequest](e.rec)); n != 2 {
			t.Fatalf("requests %d", n)
		}
		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		res := eventsOf[events.PermissionResolved](e.rec)
		if len(res) != 2 || res[0].Reason != ResolvedExpired || res[0].Decision != events.ApprovalDeny {
			t.Fatalf("resolved %+v", res)
		}
		st, _ := e.s.State()
		if st.Status != "" || len(st.WaitingApproval) != 0 || st.IsStreaming {
			t.Fatalf("state after expiry %+v", st)
		}
		if m.count("c_0")+m.count("c_1") != 0 {
			t.Fatal("an expired call ran")
		}
		msgs, _ := e.s.Messages()
		tr, ok := msgs[len(msgs)-1].(*llm.ToolResultMessage)
		if !ok || !tr.IsError || !strings.Contains(tr.Content[0].(*llm.TextContent).Text, "expired") {
			t.Fatalf("last message %T %+v", msgs[len(msgs)-1], msgs[len(msgs)-1])
		}
	})
}

// A new prompt supersedes the parked batch: its requests are denied
// (reason superseded), the batch gets results, the prompt runs.
func TestDurableSupersededByPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMarker()
		e := durableEnv(t, m, &scripted{}, &fake.Script{Responses: []fake.Response{batch("c", 1), reply("other")}}, nil)
		defer e.s.Close()
		e.s.SetDurableApprovals(true)
		e.runPrompt(t, "go")
		rid := eventsOf[events.PermissionRequest](e.rec)[0].RequestID
		e.runPrompt(t, "something else")
		res := eventsOf[events.PermissionResolved](e.rec)
		if len(res) != 1 || res[0].Reason != ResolvedSuperseded {
			t.Fatalf("resolved %+v", res)
		}
		if _, err := e.s.AnswerApproval(rid, events.ApprovalAllow, func() {}); !errors.Is(err, ErrApprovalResolved) {
			t.Fatalf("answer after supersede: %v", err)
		}
		if m.count("c_0") != 0 {
			t.Fatal("a superseded call ran")
		}
	})
}

// The frozen call is resolved again when it finally runs: a target that
// changed (here a symlink now points elsewhere) refuses it with the usual
// path-changed error.
func TestDurableFrozenCallPathChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cwd := t.TempDir()
		other := t.TempDir()
		if err := os.Mkdir(filepath.Join(cwd, "real"), 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(cwd, "dir")
		if err := os.Symlink(filepath.Join(cwd, "real"), link); err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, setup{cwd: cwd, approver: &scripted{}, deps: persisted(t), tools: tools.Default().Tools(),
			script: &fake.Script{Responses: []fake.Response{toolCall("write", `{"path":"dir/x.txt","content":"hi"}`), reply("done")}}})
		defer e.s.Close()
		e.s.SetDurableApprovals(true)
		e.runPrompt(t, "go")
		reqs := eventsOf[events.PermissionRequest](e.rec)
		if len(reqs) != 1 {
			t.Fatalf("requests %d", len(reqs))
		}
		// The world changes while the request waits.
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, link); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.AnswerApproval(reqs[0].RequestID, events.ApprovalAllow, func() {}); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, e.s)
		for _, d := range []string{filepath.Join(cwd, "real"), other} {
			if _, err := os.Stat(filepath.Join(d, "x.txt")); err == nil {
				t.Fatalf("the changed call wrote %s", d)
			}
		}
		ends := eventsOf[events.ToolExecutionEnd](e.rec)
		if len(ends) == 0 || !ends[len(ends)-1].IsError || !strings.Contains(ends[len(ends)-1].Result.Content[0].(*llm.TextContent).Text, tools.ErrPathChanged.Error()) {
			t.Fatalf("tool end %+v", ends)
		}
	})
}

// TestDurableCrashAnywhere is the randomised kill/restart property: runs
// that defer, answer and continue are "killed" at random points of their
// append sequence (the session file cut at a line boundary, or inside a
// line: what SIGKILL leaves of an O_APPEND writer), and a restarted
// session is checked: every request the host saw open is sent again,
// none that was resolved is, the re-sent request carries the same input,
// and answering allow runs each call at most once over both processes.
// AMA_DURABLE_RUNS sets the number of restarts (default 1000),
// AMA_DURABLE_SEED the seed.
func TestDurableCrashAnywhere(t *testing.T) {
	runs := 1000
	if v, err := strconv.Atoi(os.Getenv("AMA_DURABLE_RUNS")); err == nil && v > 0 {
		runs = v
	}
	seed := uint64(35)
	if v, err := strconv.ParseUint(os.Getenv("AMA_DURABLE_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const cutsPerScenario = 50
	restarts := 0
	for sc := 0; restarts < runs; sc++ {
		rec := recordScenario(t, rng, sc)
		for range min(cutsPerScenario, runs-restarts) {
			restarts++
			cut := rec.cutPoint(rng)
			checkRestart(t, rec, cut, rng.IntN(3) == 0)
		}
	}
	t.Logf("%d restarts (seed %d)", restarts, seed)
}

// scenarioRecord is one original run: its final file, and when (file
// size) the host saw each request and resolution.
type scenarioRecord struct {
	data     []byte
	lines    []int // offsets of line ends (after '\n')
	seen     map[string]int64
	resolved map[string]int64
	inputs   map[string]string // request id → input
	m        *marker
	deps     *Deps
}

func (r *scenarioRecord) cutPoint(rng *rand.Rand) int {
	i := rng.IntN(len(r.lines))
	if rng.IntN(4) == 0 && i+1 < len(r.lines) { // a torn line
		lo, hi := r.lines[i], r.lines[i+1]
		return lo + 1 + rng.IntN(hi-lo-1)
	}
	return r.lines[i]
}

// recordScenario runs two prompts whose batches (1–3 calls) are answered
// at random (defer, allow, deny); deferred requests of the first are
// answered afterwards, which continues the run; the second stays parked.
func recordScenario(t *testing.T, rng *rand.Rand, n int) *scenarioRecord {
	t.Helper()
	m := newMarker()
	k1, k2 := 1+rng.IntN(3), 1+rng.IntN(3)
	pick := func(k int) []events.Approval {
		out := make([]events.Approval, k)
		for i := range out {
			out[i] = []events.Approval{events.ApprovalDefer, events.ApprovalDefer, events.ApprovalAllow, events.ApprovalDeny}[rng.IntN(4)]
		}
		out[rng.IntN(k)] = events.ApprovalDefer
		return out
	}
	first, second := pick(k1), pick(k2)
	ap := &scripted{answers: first}
	rec := &scenarioRecord{seen: map[string]int64{}, resolved: map[string]int64{}, inputs: map[string]string{}, m: m}
	script := &fake.Script{Responses: []fake.Response{batch(fmt.Sprintf("a%d", n), k1), reply("after a"), batch(fmt.Sprintf("b%d", n), k2), reply("after b")}}
	var later []events.Approval
	for range k1 {
		later = append(later, []events.Approval{events.ApprovalAllow, events.ApprovalDeny, events.ApprovalAllowSession}[rng.IntN(3)])
	}
	// Real time, not a bubble: the restarts below reuse these deps.
	e := durableEnv(t, m, ap, script, nil)
	rec.deps = e.deps
	var file atomic.Value
	file.Store("")
	find := func() string {
		if f := file.Load().(string); f != "" {
			return f
		}
		_ = filepath.WalkDir(e.deps.Dirs.Sessions, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				file.Store(p)
			}
			return nil
		})
		return file.Load().(string)
	}
	m.file = find
	size := func() int64 {
		fi, err := os.Stat(find())
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	var mu sync.Mutex
	e.s.Subscribe(func(ev events.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case events.PermissionRequest:
			if _, ok := rec.seen[ev.RequestID]; !ok {
				rec.seen[ev.RequestID] = size()
			}
			rec.inputs[ev.RequestID] = string(ev.Input)
		case events.PermissionResolved:
			rec.resolved[ev.RequestID] = size()
		}
	})
	e.s.SetDurableApprovals(true)
	e.runPrompt(t, "first")
	st, _ := e.s.State()
	for i, w := range st.WaitingApproval {
		if _, err := e.s.AnswerApproval(w.RequestID, later[i], func() {}); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, e.s)
	}
	ap.mu.Lock()
	ap.answers = second
	ap.mu.Unlock()
	e.runPrompt(t, "second")
	path, _ := e.s.SessionFile()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec.data = data
	e.s.Close()
	m.mu.Lock()
	m.file = nil // restarts do not move the original's execution points
	m.mu.Unlock()
	for i, b := range rec.data {
		if b == '\n' {
			rec.lines = append(rec.lines, i+1)
		}
	}
	return rec
}

// checkRestart opens the file cut at cut, as a restarted process would,
// and checks the property; with answer, it also answers every re-sent
// request allow and checks that each call ran at most once in all.
func checkRestart(t *testing.T, rec *scenarioRecord, cut int, answer bool) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, rec.data[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(rec.deps, path, Options{})
	if err != nil {
		t.Fatalf("cut %d: open: %v", cut, err)
	}
	defer s.Close()
	r := &recorder{}
	s.Subscribe(r.add)
	s.SetDurableApprovals(true)
	s.ReopenApprovals(false)
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	resent := map[string]events.PermissionRequest{}
	for _, q := range eventsOf[events.PermissionRequest](r) {
		resent[q.RequestID] = q
	}
	for id, at := range rec.seen {
		if int64(cut) < at {
			continue // the host never saw it
		}
		if res, ok := rec.resolved[id]; ok && int64(cut) >= res {
			if _, again := resent[id]; again {
				t.Fatalf("cut %d: resolved request %s sent again", cut, id)
			}
			continue
		}
		if _, ok := resent[id]; !ok && !resolvedIn(rec.data[:cut], id) {
			t.Fatalf("cut %d of %d: open request %s lost (state %+v)", cut, len(rec.data), id, st)
		}
	}
	for id, q := range resent {
		if resolvedIn(rec.data[:cut], id) {
			t.Fatalf("cut %d: request %s resolved in the file but sent again", cut, id)
		}
		if in := rec.inputs[id]; string(q.Input) != in {
			t.Fatalf("cut %d: re-sent input %s, want %s", cut, q.Input, in)
		}
	}
	if len(st.WaitingApproval) != len(resent) {
		t.Fatalf("cut %d: get_state lists %d, %d were sent", cut, len(st.WaitingApproval), len(resent))
	}
	if !answer || len(resent) == 0 {
		return
	}
	before := map[string]int{}
	rec.m.mu.Lock()
	for id, n := range rec.m.runs {
		before[id] = n
	}
	rec.m.mu.Unlock()
	for _, w := range st.WaitingApproval {
		if _, err := s.AnswerApproval(w.RequestID, events.ApprovalAllow, func() {}); err != nil {
			t.Fatalf("cut %d: answer: %v", cut, err)
		}
	}
	if err := s.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.m.mu.Lock()
	defer rec.m.mu.Unlock()
	for id, n := range rec.m.runs {
		ranBefore := 0
		if at, ok := rec.m.at[id]; ok && int64(cut) >= at {
			ranBefore = 1 // the original process had run it before the kill
		}
		if ranBefore+n-before[id] > 1 {
			t.Fatalf("cut %d: call %s ran %d times over both processes\nevents %s\nfile:\n%s", cut, id, ranBefore+n-before[id], joinTypes(r.types()), rec.data[:cut])
		}
		rec.m.runs[id] = before[id] // the next restart counts afresh
	}
}

// resolvedIn reports whether data holds a resolution entry for id.
func resolvedIn(data []byte, id string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"customType":"`+CustomApprovalResolved+`"`) && strings.Contains(line, `"requestId":"`+id+`"`) && strings.HasSuffix(line, "}") {
			return true
		}
	}
	return false
}

// A plan approval deferred across a restart: the proposal is recorded,
// the reopened session sends plan_proposed again and lists it in
// get_state, the answer carries it out once, and a second answer is
// ErrApprovalResolved. A plan whose deadline passed is rejected (reason
// expired) instead.
func TestDurablePlanAcrossRestart(t *testing.T) {
	for _, expire := range []bool{false, true} {
		t.Run(fmt.Sprintf("expire=%v", expire), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				script := &fake.Script{Responses: []fake.Response{reply(proposal), reply("working on it")}}
				e := newEnv(t, setup{script: script, deps: persisted(t)})
				e.s.SetPlanAttended(true)
				e.s.SetDurableApprovals(true)
				if _, err := e.s.SetPermissionMode("plan"); err != nil {
					t.Fatal(err)
				}
				e.runPrompt(t, "make a plan")
				pp := eventsOf[events.PlanProposed](e.rec)
				if len(pp) != 1 {
					t.Fatalf("plan_proposed %d", len(pp))
				}
				st, _ := e.s.State()
				if len(st.WaitingApproval) != 1 || st.WaitingApproval[0].Kind != "plan" || st.WaitingApproval[0].PlanID != pp[0].PlanID {
					t.Fatalf("state %+v", st.WaitingApproval)
				}
				path, _ := e.s.SessionFile()
				e.s.Close() // the process ends with the plan unanswered
				if expire {
					time.Sleep(25 * time.Hour) // past the default deadline, on the bubble's clock
				}

				s, err := Open(e.deps, path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				rec := &recorder{}
				s.Subscribe(rec.add)
				s.SetPlanAttended(true)
				s.SetDurableApprovals(true)
				s.ReopenApprovals(false)
				if expire {
					st, _ := s.State()
					res := eventsOf[events.PlanResolved](rec)
					if len(res) != 1 || res[0].Decision != "reject" || res[0].Reason != ResolvedExpired || len(st.WaitingApproval) != 0 {
						t.Fatalf("after expiry: resolved %+v, waiting %+v", res, st.WaitingApproval)
					}
					return
				}
				st, _ = s.State() // the reopen ran on the actor
				again := eventsOf[events.PlanProposed](rec)
				if len(again) != 1 || again[0].PlanID != pp[0].PlanID || again[0].Markdown != pp[0].Markdown {
					t.Fatalf("plan_proposed after reopen: %+v", again)
				}
				if st, _ := s.State(); len(st.WaitingApproval) != 1 {
					t.Fatalf("state after reopen %+v", st.WaitingApproval)
				}
				done := make(chan error, 1)
				s.PlanResponse(PlanDecision{PlanID: pp[0].PlanID, Decision: "approve"}, func(_ PlanOutcome, err error) { done <- err })
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				waitIdle(t, s)
				if n := len(eventsOf[events.PlanResolved](rec)); n != 1 {
					t.Fatalf("plan_resolved %d", n)
				}
				s.PlanResponse(PlanDecision{PlanID: pp[0].PlanID, Decision: "approve"}, func(_ PlanOutcome, err error) { done <- err })
				if err := <-done; !errors.Is(err, ErrApprovalResolved) {
					t.Fatalf("second answer: %v", err)
				}
				if st, _ := s.State(); len(st.WaitingApproval) != 0 {
					t.Fatalf("still waiting %+v", st.WaitingApproval)
				}
			})
		})
	}
}

// The session file is the only link between a recorded request and the
// call it approves: a request whose input no longer matches the call (an
// edited file) is refused, never run.
func TestDurableMismatchedRequestRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMarker()
		e := durableEnv(t, m, &scripted{}, &fake.Script{Responses: []fake.Response{batch("c", 1), reply("done")}}, nil)
		e.s.SetDurableApprovals(true)
		e.runPrompt(t, "go")
		path, _ := e.s.SessionFile()
		e.s.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(data), `"input":{"n":0}`, `"input":{"n":7}`, 1)
		if edited == string(data) {
			t.Fatal("no request input in the file")
		}
		if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(e.deps, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec := &recorder{}
		s.Subscribe(rec.add)
		s.SetDurableApprovals(true)
		s.ReopenApprovals(false)
		st, _ := s.State()
		if len(st.WaitingApproval) != 1 {
			t.Fatalf("waiting %+v", st.WaitingApproval)
		}
		if _, err := s.AnswerApproval(st.WaitingApproval[0].RequestID, events.ApprovalAllow, func() {}); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, s)
		if m.count("c_0") != 0 {
			t.Fatal("a call that does not match its approved request ran")
		}
		ends := eventsOf[events.ToolExecutionEnd](rec)
		if len(ends) != 1 || !ends[0].Denied {
			t.Fatalf("tool end %+v", ends)
		}
	})
}

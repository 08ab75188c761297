package agents

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/tools"
)

// recorder keeps the events of a session.
type recorder struct {
	mu   sync.Mutex
	evs  []events.Event
	wake chan struct{} // closed and replaced on every event
}

func (r *recorder) add(e events.Event) {
	if _, ok := e.(events.MessageUpdate); ok {
		return
	}
	r.mu.Lock()
	r.evs = append(r.evs, e)
	if r.wake != nil {
		close(r.wake)
	}
	r.wake = make(chan struct{})
	r.mu.Unlock()
}

// waitFor blocks until pred holds for the events so far (or fails the
// test after 10 s).
func (r *recorder) waitFor(t *testing.T, what string, pred func([]events.Event) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		if r.wake == nil {
			r.wake = make(chan struct{})
		}
		ok, wake := pred(r.evs), r.wake
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *recorder) all() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.evs...)
}

func (r *recorder) count(typ string) int {
	n := 0
	for _, e := range r.all() {
		if e.Type() == typ {
			n++
		}
	}
	return n
}

// countingApprover allows everything (or denies, with deny set) and
// counts the asks; with gate set each ask waits for it to close.
type countingApprover struct {
	asks atomic.Int32
	deny atomic.Bool
	gate chan struct{}
}

func (a *countingApprover) Ask(ctx context.Context, _ *events.PermissionRequest) events.Approval {
	a.asks.Add(1)
	if a.gate != nil {
		select {
		case <-a.gate:
		case <-ctx.Done():
			return "deny"
		}
	}
	if a.deny.Load() {
		return "deny"
	}
	return "allow"
}

type rig struct {
	t      testing.TB
	dir    string
	script string
	parent *session.Session
	reg    *Registry
	rec    *recorder
	fp     *fake.Provider
	appr   *countingApprover

	reqMu      sync.Mutex
	parentReqs []*llm.Request
	childReqs  []*llm.Request
}

func (r *rig) see(child bool, req *llm.Request) {
	r.reqMu.Lock()
	defer r.reqMu.Unlock()
	if child {
		r.childReqs = append(r.childReqs, req)
	} else {
		r.parentReqs = append(r.parentReqs, req)
	}
}

// router serves a child's requests (system prompt with the sub-agent
// role) from one script and the parent's from another, so background
// children and the parent do not race for script positions.
type router struct {
	parent, child *fake.Provider
	seen          func(child bool, req *llm.Request) // sees every request (nil: none)
}

func (r router) Stream(ctx context.Context, req *llm.Request, emit func(llm.StreamEvent, *llm.AssistantMessage)) (*llm.AssistantMessage, error) {
	child := strings.Contains(req.System, rolePreamble) || forkedRequest(req)
	if r.seen != nil {
		r.seen(child, req)
	}
	if child {
		return r.child.Stream(ctx, req, emit)
	}
	return r.parent.Stream(ctx, req, emit)
}

// forkedRequest: a fork child has the parent's system prompt; its
// requests carry the <task> brief.
func forkedRequest(req *llm.Request) bool {
	for _, m := range req.Messages {
		if u, ok := m.(*llm.UserMessage); ok && strings.HasPrefix(u.Content.PlainText(), "<task>\n") {
			return true
		}
	}
	return false
}

// newRig starts a root session with sub-agents in mode. Responses
// prefixed "C:" form the children's script, the others the parent's
// (files, so waitFile gates work).
func newRig(t *testing.T, mode string, responses ...string) *rig {
	t.Helper()
	return startRig(t, mode, responses...)
}

// newBenchRig is newRig for benchmarks (full-auto).
func newBenchRig(b *testing.B, responses ...string) *rig {
	b.Helper()
	return startRig(b, "full-auto", responses...)
}

func startRig(t testing.TB, mode string, responses ...string) *rig {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var ps, cs []string
	for _, r := range responses {
		if c, ok := strings.CutPrefix(r, "C:"); ok {
			cs = append(cs, c)
		} else {
			ps = append(ps, r)
		}
	}
	write := func(name string, rs []string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`{"responses":[`+strings.Join(rs, ",")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	script := write("script.json", ps)
	fp := fake.New(fake.Options{ScriptPath: script})
	fc := fake.New(fake.Options{ScriptPath: write("child.json", cs)})
	entry := fp.Entry()
	r := &rig{t: t, dir: dir, script: script, rec: &recorder{}, fp: fp, appr: &countingApprover{}}
	entry.Provider = router{parent: fp, child: fc, seen: r.see}
	base := tools.Default()
	all, err := base.With(NewTools(NewCatalog(nil), true)...)
	if err != nil {
		t.Fatal(err)
	}
	deps := &session.Deps{Models: llm.NewRegistry(entry), Tools: all, Approver: r.appr,
		Policy:   &approvals.Policy{Mode: approvals.ModeDefault, PlanBash: approvals.PlanBashReadonly},
		Dirs:     session.Dirs{Data: filepath.Join(dir, "data"), Sessions: filepath.Join(dir, "sessions"), Home: dir},
		Settings: session.Settings{Persist: true, MaxRetries: -1}}
	deps.Tasks = Factory(Config{Deps: deps})
	p, err := session.New(deps, session.Options{Cwd: work, Model: llm.ModelRef{Provider: "fake", ID: "echo"},
		PermissionMode: mode, ActiveTools: []string{"bash", "read", "write", ToolTask, ToolTaskCtl}})
	if err != nil {
		t.Fatal(err)
	}
	p.Subscribe(r.rec.add)
	if err := p.Start("startup"); err != nil {
		t.Fatal(err)
	}
	r.parent, r.reg = p, p.Tasks().(*Registry)
	t.Cleanup(p.Close)
	return r
}

// prompt runs one parent prompt to the end.
func (r *rig) prompt(text string) {
	r.t.Helper()
	errc := make(chan error, 1)
	r.parent.Prompt("prompt", session.PromptInput{Message: text}, func(_ session.Disposition, err error) { errc <- err })
	if err := <-errc; err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.parent.WaitIdle(ctx); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) release(name string) {
	if err := os.WriteFile(filepath.Join(r.dir, name), nil, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func taskCall(args string) string {
	return `{"steps":[{"toolCall":{"name":"task","arguments":` + args + `}}]}`
}

// toolResults returns the tool results of a session's context.
func toolResults(t *testing.T, s *session.Session) []*llm.ToolResultMessage {
	t.Helper()
	msgs, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	var out []*llm.ToolResultMessage
	for _, m := range msgs {
		if tr, ok := m.(*llm.ToolResultMessage); ok {
			out = append(out, tr)
		}
	}
	return out
}

func TestReadOnlyChildNeverAsks(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"look","agent":"explore","background":false}`),
		`C:{"steps":[{"toolCall":{"name":"write","arguments":{"path":"marker.txt","content":"x"}}}]}`,
		`C:{"steps":[{"toolCall":{"name":"bash","arguments":{"command":"touch marker2.txt"}}}]}`,
		`C:{"text":"nothing changed"}`,
		`{"text":"done"}`)
	r.prompt("go")
	if n := r.appr.asks.Load(); n != 0 {
		t.Fatalf("a read-only child asked %d times", n)
	}
	if r.rec.count("permission_request") != 0 {
		t.Fatal("permission_request emitted for a read-only child")
	}
	for _, f := range []string{"marker.txt", "marker2.txt"} {
		if _, err := os.Stat(filepath.Join(r.dir, "work", f)); err == nil {
			t.Fatalf("%s was created by a read-only child", f)
		}
	}
	child := r.reg.Get("t1").child
	for _, tr := range toolResults(t, child) {
		if !tr.IsError {
			t.Fatalf("child call %s was not refused: %s", tr.ToolName, tr.Content)
		}
	}
}

func TestNestedTaskRefused(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"delegate","agent":"general","background":false}`),
		`C:{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"deeper"}}},{"toolCall":{"name":"task_ctl","arguments":{"action":"list"}}}]}`,
		`C:{"text":"could not"}`,
		`{"text":"done"}`)
	r.prompt("go")
	trs := toolResults(t, r.reg.Get("t1").child)
	if len(trs) != 2 {
		t.Fatalf("child tool results: %d", len(trs))
	}
	for _, tr := range trs {
		if !tr.IsError || !strings.Contains(llm.JoinText(tr.Content, ""), "cannot start sub-agents") {
			t.Fatalf("%s in a child: %v %s", tr.ToolName, tr.IsError, llm.JoinText(tr.Content, ""))
		}
	}
	if got := len(r.reg.List()); got != 1 {
		t.Fatalf("tasks = %d, want 1 (the child started none)", got)
	}
}

func TestStopRunningTaskSendsNoNotification(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"slow","agent":"explore","background":true}`),
		`C:{"steps":[{"waitFile":"never"},{"text":"late"}]}`,
		`{"text":"parent idle"}`)
	r.prompt("go")
	task := r.reg.Get("t1")
	if task == nil {
		t.Fatal("no task t1")
	}
	// The child may not have reached its request yet; stop works either way.
	if st := task.Stop(); st != StatusAborted {
		t.Fatalf("status after stop = %s", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.parent.WaitIdle(ctx)
	for _, e := range r.rec.all() {
		if me, ok := e.(events.MessageEnd); ok {
			if u, ok := me.Message.(*llm.UserMessage); ok && u.Origin == "task" {
				t.Fatal("a stopped task sent a notification")
			}
		}
	}
	ends := 0
	for _, e := range r.rec.all() {
		if se, ok := e.(events.SubagentEnd); ok {
			ends++
			if se.Status != StatusAborted {
				t.Fatalf("subagent_end status %s", se.Status)
			}
		}
	}
	if ends != 1 {
		t.Fatalf("subagent_end events: %d", ends)
	}
}

func TestBackgroundNotificationAndOutputFile(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"bg","agent":"explore","description":"d&\"<","background":true}`),
		`C:{"steps":[{"waitFile":"go"},{"text":"report body"}],"usage":{"input":1500,"output":5}}`,
		`{"text":"parent idle"}`,
		`{"text":"noted"}`)
	r.prompt("go")
	r.release("go")
	<-r.reg.Get("t1").done
	r.rec.waitFor(t, "the notification run to settle", func(evs []events.Event) bool {
		n := 0
		for _, e := range evs {
			if e.Type() == "agent_settled" {
				n++
			}
		}
		return n >= 2
	})
	var note string
	for _, e := range r.rec.all() {
		if me, ok := e.(events.MessageEnd); ok {
			if u, ok := me.Message.(*llm.UserMessage); ok && u.Origin == "task" {
				note = u.Content.PlainText()
			}
		}
	}
	info := r.reg.Get("t1").Info()
	want := `<task-notification taskId="t1" agent="explore" status="completed" turns="1" tokens="1.5k" outputFile="` + info.OutputFile + "\">\nreport body\n</task-notification>"
	if note != want {
		t.Fatalf("notification:\n%s\nwant:\n%s", note, want)
	}
	data, err := os.ReadFile(info.OutputFile)
	if err != nil || string(data) != "report body" {
		t.Fatalf("output file: %q %v", data, err)
	}
	if !strings.HasPrefix(filepath.Base(info.OutputFile), r.parent.ID()+"-t1") {
		t.Fatalf("output file name %s", info.OutputFile)
	}
}

func TestContinueTaskUsesSameSession(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"first","agent":"explore","background":false}`),
		`C:{"text":"one"}`,
		taskCall(`{"prompt":"again","taskId":"t1","background":false}`),
		`C:{"text":"two"}`,
		`{"text":"done"}`)
	r.prompt("go")
	starts := 0
	var files []string
	for _, e := range r.rec.all() {
		if s, ok := e.(events.SubagentStart); ok {
			starts++
			files = append(files, s.SessionFile)
		}
	}
	if starts != 2 || files[0] != files[1] || files[0] == "" {
		t.Fatalf("starts %d files %v", starts, files)
	}
	trs := toolResults(t, r.parent)
	if got := llm.JoinText(trs[1].Content, ""); got != "[task t1] two" {
		t.Fatalf("continuation result %q", got)
	}
	if n := len(r.reg.List()); n != 1 {
		t.Fatalf("tasks %d", n)
	}
	// The child file is linked: header parentSession and ama.task first.
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	pf, _ := r.parent.SessionFile()
	var h struct {
		ParentSession string `json:"parentSession"`
	}
	var first struct {
		Type       string `json:"type"`
		CustomType string `json:"customType"`
	}
	_ = json.Unmarshal([]byte(lines[0]), &h)
	_ = json.Unmarshal([]byte(lines[1]), &first)
	if h.ParentSession != pf || first.Type != "custom" || first.CustomType != "ama.task" {
		t.Fatalf("child file head: %s / %s", lines[0], lines[1])
	}
}

func TestCloseAbortsBackgroundChildren(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"slow","agent":"explore","background":true}`),
		`C:{"steps":[{"waitFile":"never"}]}`,
		`{"text":"idle"}`)
	r.prompt("go")
	task := r.reg.Get("t1")
	r.parent.Close()
	select {
	case <-task.done:
	default:
		t.Fatal("Close returned before the task ended")
	}
	if st := task.Info().Status; st != StatusAborted {
		t.Fatalf("status %s", st)
	}
}

func TestTextMergedOverThrottle(t *testing.T) {
	r := newRig(t, "full-auto")
	var now time.Time
	r.reg.cfg.Now = func() time.Time { return now }
	task := &Task{reg: r.reg, settled: make(chan struct{}, 1)}
	task.info.TaskID = "t7"
	delta := func(ms int, s string) {
		now = time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond)
		task.onChild(events.MessageUpdate{AssistantMessageEvent: llm.StreamEvent{Type: llm.EvTextDelta, Delta: s}})
	}
	delta(1000, "a")
	delta(1100, "b")
	delta(1200, "c")
	delta(1260, "d")
	delta(1300, "e")
	task.onChild(events.TurnEnd{Message: &llm.AssistantMessage{}})
	var got []string
	for _, e := range r.rec.all() {
		if u, ok := e.(events.SubagentUpdate); ok {
			if u.Kind == "text" {
				got = append(got, *u.TextDelta+"@"+itoa(u.Turn))
			} else {
				got = append(got, u.Kind+"@"+itoa(u.Turn))
			}
		}
	}
	want := []string{"a@0", "bcd@0", "e@0", "turn@1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("updates %v, want %v", got, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestCapResult(t *testing.T) {
	text := strings.Repeat("é", 40000) // 80 000 bytes
	got, cut := capResult(text, "/o/t1.md")
	if !cut || !utf8.ValidString(got) {
		t.Fatalf("cut %v valid %v", cut, utf8.ValidString(got))
	}
	i := strings.Index(got, "\n\n[… ")
	if i < 0 || i > ResultLimit*7/10 || !strings.Contains(got, "bytes omitted; full output: /o/t1.md …]\n\n") {
		t.Fatalf("marker at %d: %q", i, got[i:i+80])
	}
	if short, cut := capResult("small", "x"); cut || short != "small" {
		t.Fatal("short text changed")
	}
}

func TestFormatTokens(t *testing.T) {
	for n, want := range map[int]string{55: "55", 999: "999", 1000: "1k", 12345: "12.3k", 1_200_000: "1.2M", 2_000_000: "2M"} {
		if got := formatTokens(n); got != want {
			t.Errorf("formatTokens(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestPoolRefusesBeyondPending(t *testing.T) {
	r := newRig(t, "full-auto")
	r.reg.cfg.MaxPending = 1
	r.reg.slots = make(chan struct{}, 1)
	r.reg.cfg.MaxConcurrent = 1
	r.reg.slots <- struct{}{} // the only slot is taken
	defer func() { <-r.reg.slots }()
	t1, err := r.reg.Launch(Request{Prompt: "a", Agent: "explore"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.reg.Launch(Request{Prompt: "b", Agent: "explore"}); err != nil {
		t.Fatal(err)
	}
	_, err = r.reg.Launch(Request{Prompt: "c", Agent: "explore"})
	if _, ok := Refusal(err); !ok {
		t.Fatalf("third launch: %v", err)
	}
	if _, err := r.reg.Launch(Request{Prompt: "d", Agent: "nope"}); err == nil || !strings.Contains(err.Error(), "general, explore, plan") {
		t.Fatalf("unknown agent: %v", err)
	}
	t1.Abort()
	<-t1.done
	if st := t1.Info().Status; st != StatusAborted {
		t.Fatalf("queued task aborted: %s", st)
	}
}

func TestExternalAgentNeedsTrust(t *testing.T) {
	r := newRig(t, "full-auto")
	// An agent program that leaves a marker when it is started.
	bin := filepath.Join(r.dir, "bin")
	marker := filepath.Join(r.dir, "started")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "marker-agent"), []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	task, err := r.reg.Launch(Request{Prompt: "x", Agent: "acp:marker-agent", Background: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	<-task.done
	res := task.Result()
	if res.Status != StatusFailed || !strings.HasPrefix(res.Text, "agent_untrusted") {
		t.Fatalf("untrusted external: %+v", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an untrusted project started the external agent")
	}
	r.reg.cfg.Trusted = true
	task, _ = r.reg.Launch(Request{Prompt: "x", Agent: "acp:definitely-not-installed", Background: new(bool)})
	<-task.done
	if res := task.Result(); res.Status != StatusFailed || !strings.Contains(res.Text, "not found on PATH") {
		t.Fatalf("missing program: %+v", res)
	}
	if r.appr.asks.Load() != 0 {
		t.Fatal("full-auto asked for the first-run confirmation")
	}
}

func TestChildEnvStripsSecrets(t *testing.T) {
	in := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=k", "ANTHROPIC_AUTH_TOKEN=t", "FOO_BASE_URL=u", "AMA_FAKE_SCRIPT=s",
		"ARMADRA_TOKEN=x", "ARMADRA_ASKPASS_SOCK=y", "CODEX_API_KEY=c"}
	got := strings.Join(childenv.Scrub(in, childenv.Policy{ModelClient: true}, nil), " ")
	if !strings.HasPrefix(got, "PATH=/bin HOME=/h ARMADRA_ASKPASS_SOCK=y GIT_CONFIG_KEY_0=") {
		t.Fatalf("child env %s", got)
	}
}

func TestForkFallsBackToFresh(t *testing.T) {
	// A thinking level other than the parent's cannot share its prefix.
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"p","agent":"explore","background":false,"context":"fork","thinkingLevel":"high"}`),
		`C:{"text":"fresh child"}`,
		`{"text":"done"}`)
	r.prompt("go")
	trs := toolResults(t, r.parent)
	var d taskDetails
	raw, _ := json.Marshal(trs[0].Details)
	_ = json.Unmarshal(trs[0].Details, &d)
	if d.Context != "fresh" {
		t.Fatalf("details %s", raw)
	}
}

func TestWorktreeIsolation(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := newRig(t, "full-auto",
		`{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"change","agent":"general","background":false,"isolation":"worktree"}}},`+
			`{"toolCall":{"name":"task","arguments":{"prompt":"look","agent":"explore","background":false,"isolation":"worktree"}}}]}`,
		`C:{"steps":[{"toolCall":{"name":"write","arguments":{"path":"new.txt","content":"from the child\n"}}}]}`,
		`C:{"text":"wrote new.txt"}`,
		`C:{"text":"looked"}`,
		`{"text":"done"}`)
	work := filepath.Join(r.dir, "work")
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", work}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	r.prompt("go")
	name1 := r.parent.ID()[:8] + "-t1"
	name2 := r.parent.ID()[:8] + "-t2"
	kept := filepath.Join(work, ".ama", "worktrees", name1)
	if data, err := os.ReadFile(filepath.Join(kept, "new.txt")); err != nil || string(data) != "from the child\n" {
		t.Fatalf("the change is not in the kept worktree: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(work, "new.txt")); err == nil {
		t.Fatal("the child's write reached the main tree")
	}
	if _, err := os.Stat(filepath.Join(work, ".ama", "worktrees", name2)); err == nil {
		t.Fatal("the clean worktree was not removed")
	}
	if out, _ := exec.Command("git", "-C", work, "branch", "--list", "ama/task-"+name2).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("branch of the clean worktree kept: %s", out)
	}
	trs := toolResults(t, r.parent)
	if got := llm.JoinText(trs[0].Content, ""); !strings.Contains(got, "[worktree kept: branch ama/task-"+name1+" at "+kept+"]") ||
		!strings.Contains(got, "new.txt") {
		t.Fatalf("t1 result %q", got)
	}
	var ends []events.SubagentEnd
	for _, e := range r.rec.all() {
		if se, ok := e.(events.SubagentEnd); ok {
			ends = append(ends, se)
		}
	}
	if len(ends) != 2 || ends[0].Worktree == nil || ends[0].Worktree.Branch != "ama/task-"+name1 || !ends[0].Worktree.Changed || ends[1].Worktree != nil {
		t.Fatalf("subagent_end worktrees: %+v", ends)
	}
	var starts []events.SubagentStart
	for _, e := range r.rec.all() {
		if s, ok := e.(events.SubagentStart); ok {
			starts = append(starts, s)
		}
	}
	if starts[0].Cwd != kept {
		t.Fatalf("child cwd %s, want %s", starts[0].Cwd, kept)
	}
}

func TestResumeRebuildsTasks(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"first","agent":"explore","background":false}`),
		`C:{"text":"one"}`,
		`{"text":"done"}`,
		taskCall(`{"prompt":"again","taskId":"t1","background":false}`),
		`C:{"text":"two"}`,
		taskCall(`{"prompt":"new","agent":"plan","background":false}`),
		`C:{"text":"three"}`,
		`{"text":"done again"}`)
	r.prompt("go")
	pfile, _ := r.parent.SessionFile()
	childFile := r.reg.Get("t1").SessionFile()
	deps := r.reg.cfg.Deps
	r.parent.Close()

	p2, err := session.Open(deps, pfile, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	rec := &recorder{}
	p2.Subscribe(rec.add)
	if err := p2.Start("resume"); err != nil {
		t.Fatal(err)
	}
	reg := p2.Tasks().(*Registry)
	infos := reg.List()
	if len(infos) != 1 || infos[0].TaskID != "t1" || infos[0].Status != StatusCompleted || infos[0].SessionRef == nil {
		t.Fatalf("rebuilt tasks %+v", infos)
	}
	r.parent, r.reg, r.rec = p2, reg, rec
	r.prompt("continue")
	trs := toolResults(t, p2)
	var got []string
	for _, tr := range trs {
		got = append(got, llm.JoinText(tr.Content, ""))
	}
	if n := len(got); n < 3 || got[n-2] != "[task t1] two" || got[n-1] != "[task t2] three" {
		t.Fatalf("results after resume %q", got)
	}
	if f := reg.Get("t1").SessionFile(); f != childFile {
		t.Fatalf("continued in %s, want %s", f, childFile)
	}
}

func TestRetainClosesOldChildren(t *testing.T) {
	r := newRig(t, "full-auto",
		`{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"a","agent":"explore","background":false}}},`+
			`{"toolCall":{"name":"task","arguments":{"prompt":"b","agent":"explore","background":false}}}]}`,
		`C:{"text":"one"}`,
		`C:{"text":"two"}`,
		`{"text":"done"}`,
		taskCall(`{"prompt":"more","taskId":"t1","background":false}`),
		`C:{"text":"one again"}`,
		`{"text":"done again"}`)
	r.reg.cfg.Retain = 1
	r.prompt("go")
	t1 := r.reg.Get("t1")
	r.reg.mu.Lock()
	released := t1.child == nil && t1.resumeFile != ""
	r.reg.mu.Unlock()
	if !released {
		t.Fatal("the older child was not released")
	}
	r.prompt("continue")
	trs := toolResults(t, r.parent)
	if got := llm.JoinText(trs[len(trs)-1].Content, ""); got != "[task t1] one again" {
		t.Fatalf("continuation of a released child: %q", got)
	}
}

func TestAutoBackgroundAfterTimeout(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"slow","agent":"explore","background":false}`),
		`C:{"steps":[{"waitFile":"go"},{"text":"late report"}]}`,
		`{"text":"parent goes on"}`,
		`{"text":"noted"}`)
	r.reg.cfg.AutoBackgroundAfter = time.Millisecond
	r.prompt("go") // returns: the task call did not wait for the child
	trs := toolResults(t, r.parent)
	if got := llm.JoinText(trs[0].Content, ""); !strings.HasPrefix(got, "[task t1] Moved to the background after") {
		t.Fatalf("result %q", got)
	}
	var bg []events.SubagentBackground
	for _, e := range r.rec.all() {
		if b, ok := e.(events.SubagentBackground); ok {
			bg = append(bg, b)
		}
	}
	if len(bg) != 1 || bg[0].Reason != "timeout" {
		t.Fatalf("subagent_background %+v", bg)
	}
	r.release("go")
	r.rec.waitFor(t, "the notification", func(evs []events.Event) bool {
		for _, e := range evs {
			if me, ok := e.(events.MessageEnd); ok {
				if u, ok := me.Message.(*llm.UserMessage); ok && u.Origin == "task" {
					return true
				}
			}
		}
		return false
	})
}

func TestSubagentStopSeam(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"p","agent":"explore","background":false}`),
		`C:{"text":"report"}`,
		`{"text":"done"}`)
	var mu sync.Mutex
	var stops []string
	r.reg.cfg.SubagentStop = func(info TaskInfo, res Result) {
		mu.Lock()
		stops = append(stops, info.TaskID+" "+res.Status+" "+res.Text)
		mu.Unlock()
	}
	r.prompt("go")
	mu.Lock()
	defer mu.Unlock()
	if len(stops) != 1 || stops[0] != "t1 completed report" {
		t.Fatalf("SubagentStop calls %q", stops)
	}
}

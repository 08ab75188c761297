package session

// Test harness of the session package: a session on the scripted fake
// provider, an events recorder, reply collectors and a way to hold the
// actor so that several commands land in its mailbox as one batch.
//
// Timing: the actor and runner tests run inside testing/synctest bubbles.
// Scripted delays (fake DelayMs steps) and retry backoffs sleep on the
// bubble's fake clock, so "the model is still streaming" is a durable
// block that synctest.Wait observes; no test sleeps to wait for an event.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/telemetry"
	"github.com/armadra/ama-rpc/tools"
)

// recorder keeps every event a session publishes, plus marks the test
// adds (reply callbacks) in the same total order.
type recorder struct {
	mu  sync.Mutex
	evs []events.Event
}

// mark is a pseudo event a test records to place a reply among events.
type mark string

func (m mark) Type() string { return "mark:" + string(m) }

func (r *recorder) add(e events.Event) {
	if u, ok := e.(events.MessageUpdate); ok {
		u.Partial = nil // owned by the producer; never read after the callback
		e = u
	}
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *recorder) all() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// types lists the event types in order.
func (r *recorder) types() []string {
	var out []string
	for _, e := range r.all() {
		out = append(out, e.Type())
	}
	return out
}

// count counts events of type typ.
func (r *recorder) count(typ string) int {
	n := 0
	for _, e := range r.all() {
		if e.Type() == typ {
			n++
		}
	}
	return n
}

// reset forgets what was recorded so far.
func (r *recorder) reset() {
	r.mu.Lock()
	r.evs = nil
	r.mu.Unlock()
}

// eventsOf returns the recorded events of type T, in order.
func eventsOf[T events.Event](r *recorder) []T {
	var out []T
	for _, e := range r.all() {
		if v, ok := e.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// userTexts lists the user messages recorded by message_end, as
// "origin:text" (origin empty for plain prompts).
func userTexts(r *recorder) []string {
	var out []string
	for _, e := range eventsOf[events.MessageEnd](r) {
		if u, ok := e.Message.(*llm.UserMessage); ok {
			out = append(out, string(u.Origin)+":"+u.Content.PlainText())
		}
	}
	return out
}

// assistantEnds lists the assistant messages recorded by message_end.
func assistantEnds(r *recorder) []*llm.AssistantMessage {
	var out []*llm.AssistantMessage
	for _, e := range eventsOf[events.MessageEnd](r) {
		if a, ok := e.Message.(*llm.AssistantMessage); ok {
			out = append(out, a)
		}
	}
	return out
}

// subsequence reports whether want appears in got in order (not
// necessarily adjacent).
func subsequence(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// indexOf returns the index of the n-th (0-based) occurrence of typ.
func indexOf(types []string, typ string, n int) int {
	for i, t := range types {
		if t == typ {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// replyLog collects the replies of Prompt (and friends) in order.
type replyLog struct {
	rec *recorder
	ch  chan promptReply
}

type promptReply struct {
	name string
	d    Disposition
	err  error
}

func newReplyLog(rec *recorder) *replyLog {
	return &replyLog{rec: rec, ch: make(chan promptReply, 64)}
}

// fn returns a reply callback that marks name in the recorder and logs
// the reply.
func (l *replyLog) fn(name string) func(Disposition, error) {
	return func(d Disposition, err error) {
		l.rec.add(mark(name))
		l.ch <- promptReply{name: name, d: d, err: err}
	}
}

// next returns the next reply, failing the test when none has been given
// yet. It does not wait: call it once the session is idle (waitIdle) or
// every goroutine is blocked (synctest.Wait).
func (l *replyLog) next(t *testing.T) promptReply {
	t.Helper()
	select {
	case r := <-l.ch:
		return r
	default:
		t.Fatalf("no reply was given")
		return promptReply{}
	}
}

// none fails when a reply is pending.
func (l *replyLog) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-l.ch:
		t.Fatalf("unexpected reply %s: %v %v", r.name, r.d, r.err)
	default:
	}
}

// env is one test session with its collaborators.
type env struct {
	s     *Session
	rec   *recorder
	fp    *fake.Provider
	deps  *Deps
	tools *testTools
}

// setup configures a test session.
type setup struct {
	script   *fake.Script
	settings Settings
	mode     string
	tools    []tools.Tool
	approver Approver
	models   []*llm.Model // extra models of the fake provider
	cwd      string       // session directory (default: a fresh temporary one)
	deps     func(*Deps)  // last changes to the dependencies
}

// newEnv starts a session on the fake provider (model fake/echo), subscribes
// a recorder and announces the session. It must run inside the bubble of
// the test; the caller defers e.s.Close().
func newEnv(t *testing.T, c setup) *env {
	t.Helper()
	if c.script == nil {
		c.script = &fake.Script{}
	}
	fp := fake.New(fake.Options{Script: c.script})
	entry := fp.Entry()
	entry.Models = append(entry.Models, c.models...)
	var n, u atomic.Int64
	tt := &testTools{list: c.tools}
	deps := &Deps{
		Models:     llm.NewRegistry(entry),
		NewEntryID: func() string { return fmt.Sprintf("%08x", n.Add(1)) },
		NewUUID:    func() string { return fmt.Sprintf("uuid-%d", u.Add(1)) },
		Dirs:       Dirs{Data: t.TempDir(), Home: t.TempDir()},
		Settings:   c.settings,
		Approver:   c.approver,
		Tools:      tt,
		Policy:     &approvals.Policy{Mode: approvals.ModeDefault, PlanBash: approvals.PlanBashReadonly},
		Reporting:  telemetry.NewReporting(), // each test is its own process
	}
	if c.deps != nil {
		c.deps(deps)
	}
	if c.cwd == "" {
		c.cwd = t.TempDir()
	}
	s, err := New(deps, Options{Cwd: c.cwd, Model: llm.ModelRef{Provider: fake.ProviderID, ID: "echo"}, PermissionMode: c.mode})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := &recorder{}
	s.Subscribe(rec.add)
	if err := s.Start("new"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	rec.reset()
	return &env{s: s, rec: rec, fp: fp, deps: deps, tools: tt}
}

// holdActor blocks the actor until release is called: commands posted in
// between run as one batch, in order, before anything a runner posts
// afterwards.
func holdActor(t *testing.T, s *Session) (release func()) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	if !s.post(func(*state) { close(entered); <-gate }) {
		t.Fatal("holdActor: session closed")
	}
	<-entered
	return func() { close(gate) }
}

// text returns a pointer to s (script fields).
func text(s string) *string { return &s }

// slow is a reply that streams "a", waits d on the fake clock, then
// streams "b": while it waits the run is mid-stream.
func slow(d time.Duration) fake.Response {
	return fake.Response{Steps: []fake.Step{{Text: text("a")}, {DelayMs: d.Milliseconds()}, {Text: text("b")}}}
}

func reply(s string) fake.Response { return fake.Response{Text: text(s)} }

func fail(kind string) fake.Response { return fake.Response{Error: &fake.ErrorSpec{Kind: kind}} }

func toolCall(name, args string) fake.Response {
	return fake.Response{Steps: []fake.Step{{ToolCall: &fake.ToolCallSpec{Name: name, Arguments: json.RawMessage(args)}}}}
}

// testTools is a ToolSet of test tools (no schema validation).
type testTools struct{ list []tools.Tool }

func (t *testTools) Tools() []tools.Tool                    { return t.list }
func (t *testTools) Validate(string, json.RawMessage) error { return nil }

// probe is a test tool: it counts its executions (the side effect safety
// tests check) and answers "ok <args>".
type probe struct {
	name, perm string
	runs       atomic.Int32
	// block, when set, makes Execute wait for it (or ctx).
	block chan struct{}
}

func (p *probe) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: p.name, Description: "Probe tool. For tests.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (p *probe) Permission() string { return p.perm }
func (p *probe) Execute(ctx context.Context, c *tools.Call) (*tools.Result, error) {
	p.runs.Add(1)
	if p.block != nil {
		select {
		case <-p.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return tools.TextResult("ok " + string(c.Args)), nil
}

// answer is an Approver that records each ask and answers with decision
// (or, with wait set, blocks until ctx ends and then answers decision).
type answer struct {
	decision events.Approval
	wait     bool
	asks     atomic.Int32
}

func (a *answer) Ask(ctx context.Context, _ *events.PermissionRequest) events.Approval {
	a.asks.Add(1)
	if a.wait {
		<-ctx.Done()
	}
	return a.decision
}

// runPrompt sends a prompt and waits (synctest) until the session is idle
// again; it returns the reply.
func (e *env) runPrompt(t *testing.T, msg string) promptReply {
	t.Helper()
	l := newReplyLog(e.rec)
	e.s.Prompt("prompt", PromptInput{Message: msg}, l.fn("prompt"))
	waitIdle(t, e.s)
	return l.next(t)
}

// waitIdle blocks until no run is active. Unlike Session.WaitIdle it blocks
// on a bubble channel only, so the fake clock keeps advancing meanwhile.
func waitIdle(t *testing.T, s *Session) {
	t.Helper()
	idle := make(chan struct{})
	if !s.post(func(st *state) { st.whenIdle(func() { close(idle) }) }) {
		t.Fatal("waitIdle: session closed")
	}
	<-idle
}

func joinTypes(ts []string) string { return strings.Join(ts, " ") }

package session

// Unit tests of the pure helpers and of the actor-side bookkeeping that
// can run without an actor: each test names the function it pins down.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func TestTakeQueue(t *testing.T) {
	q := func(ts ...string) []queued {
		var out []queued
		for _, s := range ts {
			out = append(out, queued{text: s})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		in         []queued
		mode       QueueMode
		took, left []string
	}{
		{"empty", nil, "one-at-a-time", nil, nil},
		{"empty all", nil, "all", nil, nil},
		{"one at a time takes the oldest", q("a", "b", "c"), "one-at-a-time", []string{"a"}, []string{"b", "c"}},
		{"all takes everything", q("a", "b", "c"), "all", []string{"a", "b", "c"}, nil},
		{"unknown mode is one at a time", q("a", "b"), "bogus", []string{"a"}, []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			got := takeQueue(&in, tc.mode)
			if g := texts(got); !slices.Equal(g, nonNilStrings(tc.took)) {
				t.Errorf("took %q, want %q", g, tc.took)
			}
			if g := texts(in); !slices.Equal(g, nonNilStrings(tc.left)) {
				t.Errorf("left %q, want %q", g, tc.left)
			}
		})
	}
	t.Run("taken slice does not alias the queue", func(t *testing.T) {
		in := q("a", "b")
		got := takeQueue(&in, "one-at-a-time")
		in = append(in, queued{text: "c"})
		if got[0].text != "a" {
			t.Errorf("taken message changed to %q after the queue grew", got[0].text)
		}
	})
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestUserInputs(t *testing.T) {
	after := llm.NewCustom("ama.x", "handoff", false, 1)
	in := userInputs([]queued{
		{text: "plain"},
		{text: "own origin", origin: "plan", after: after},
	}, "steer", 42)
	if len(in) != 3 {
		t.Fatalf("got %d inputs, want 3 (two messages and one after)", len(in))
	}
	for i, want := range []llm.Origin{llm.OriginSteer, "plan"} {
		u := in[i].msg.(*llm.UserMessage)
		if u.Origin != want {
			t.Errorf("input %d origin %q, want %q", i, u.Origin, want)
		}
		if u.Timestamp != 42 {
			t.Errorf("input %d timestamp %d, want 42", i, u.Timestamp)
		}
	}
	if in[2].msg != after {
		t.Errorf("the after message does not follow its message")
	}
	for i, x := range in {
		if x.newRun {
			t.Errorf("input %d starts a new turn; queued messages join the current one", i)
		}
	}
	if got := promptText(in); got != "plain\n\nown origin" {
		t.Errorf("promptText = %q", got)
	}
}

func TestUserMessageImages(t *testing.T) {
	m := userMessage("look", []*llm.ImageContent{{Type: "image", Data: "AAAA", MimeType: "image/png"}}, "", 1)
	if got := m.Content.PlainText(); got != "look" {
		t.Errorf("text %q", got)
	}
	b, _ := json.Marshal(m.Content)
	if !strings.Contains(string(b), `"image"`) {
		t.Errorf("image block missing: %s", b)
	}
}

func TestRetryable(t *testing.T) {
	msg := func(stop string) *llm.AssistantMessage { return &llm.AssistantMessage{StopReason: stop} }
	for _, tc := range []struct {
		name            string
		tr              turnReply
		retry, overload bool
	}{
		{"ok reply", turnReply{msg: msg(llm.StopStop)}, false, false},
		{"no message", turnReply{err: &llm.Error{Kind: llm.ErrServer}}, false, false},
		{"rate limit", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrRateLimit}}, true, false},
		{"overloaded", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrOverloaded}}, true, true},
		{"server", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrServer}}, true, false},
		{"network", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrNetwork}}, true, false},
		{"cut stream", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrDisconnect}}, true, false},
		{"wrapped", turnReply{msg: msg(llm.StopError), err: fmt.Errorf("x: %w", &llm.Error{Kind: llm.ErrServer})}, true, false},
		{"auth", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrAuth}}, false, false},
		{"overflow", turnReply{msg: msg(llm.StopError), err: &llm.Error{Kind: llm.ErrOverflow}}, false, false},
		{"plain error", turnReply{msg: msg(llm.StopError), err: errors.New("boom")}, false, false},
		{"aborted", turnReply{msg: msg(llm.StopAborted), err: llm.Aborted()}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryable(tc.tr); got != tc.retry {
				t.Errorf("retryable = %v, want %v", got, tc.retry)
			}
			if got := overloaded(tc.tr); got != tc.overload {
				t.Errorf("overloaded = %v, want %v", got, tc.overload)
			}
		})
	}
}

// limitSession is a Session with only what limitReached uses.
func limitSession(set Settings) (*Session, *recorder) {
	rec := &recorder{}
	s := &Session{deps: &Deps{Settings: set}, bus: events.NewBus()}
	s.bus.Subscribe(rec.add)
	return s, rec
}

func costMsg(total float64) *llm.AssistantMessage {
	m := &llm.AssistantMessage{}
	m.Usage.Cost = &llm.Cost{Total: total}
	return m
}

func TestLimitReached(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     Settings
		turns   []*llm.AssistantMessage
		stopAt  int // index of the turn that stops (-1: none)
		kind    string
		value   float64
		limit   float64
		warning string
	}{
		{"no limits", Settings{}, []*llm.AssistantMessage{costMsg(5), costMsg(5), costMsg(5)}, -1, "", 0, 0, ""},
		{"turn limit at the limit", Settings{MaxTurns: 2}, []*llm.AssistantMessage{{}, {}, {}}, 1, "turns", 2, 2, "limit_reached"},
		{"turn limit of one", Settings{MaxTurns: 1}, []*llm.AssistantMessage{{}}, 0, "turns", 1, 1, "limit_reached"},
		{"cost sums over turns", Settings{MaxCost: 1}, []*llm.AssistantMessage{costMsg(0.4), costMsg(0.4), costMsg(0.4)}, 2, "cost", 1.2000000000000002, 1, "limit_reached"},
		{"no cost never reaches the cost limit", Settings{MaxCost: 1}, []*llm.AssistantMessage{{}, {}, {}}, -1, "", 0, 0, ""},
		{"turns win over cost in the same turn", Settings{MaxTurns: 1, MaxCost: 1}, []*llm.AssistantMessage{costMsg(2)}, 0, "turns", 1, 1, "limit_reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec := limitSession(tc.set)
			r := &runState{}
			stopped := -1
			for i, m := range tc.turns {
				if s.limitReached(r, m) {
					stopped = i
					break
				}
			}
			if stopped != tc.stopAt {
				t.Fatalf("stopped after turn %d, want %d", stopped, tc.stopAt)
			}
			lr := eventsOf[events.LimitReached](rec)
			if tc.kind == "" {
				if len(lr) != 0 {
					t.Errorf("limit_reached %+v, want none", lr)
				}
				return
			}
			if len(lr) != 1 {
				t.Fatalf("%d limit_reached events, want 1", len(lr))
			}
			if string(lr[0].Kind) != tc.kind || lr[0].Value != tc.value || lr[0].Limit != tc.limit {
				t.Errorf("limit_reached %+v, want kind %s value %v limit %v", lr[0], tc.kind, tc.value, tc.limit)
			}
			if r.warning != tc.warning || !r.stopping {
				t.Errorf("warning %q stopping %v", r.warning, r.stopping)
			}
			// Once stopping, further checks stop again without a second event.
			if !s.limitReached(r, &llm.AssistantMessage{}) {
				t.Error("a stopping run continued")
			}
			if n := len(eventsOf[events.LimitReached](rec)); n != 1 {
				t.Errorf("limit_reached reported %d times, want once per run", n)
			}
		})
	}
	t.Run("repeated tool call stops without limit_reached", func(t *testing.T) {
		s, rec := limitSession(Settings{})
		r := &runState{warning: "repeated_tool_call"}
		if !s.limitReached(r, &llm.AssistantMessage{}) {
			t.Fatal("run continued after a repeated tool call")
		}
		if rec.count("limit_reached") != 0 {
			t.Error("limit_reached reported for a repeated tool call")
		}
		if r.warning != "repeated_tool_call" {
			t.Errorf("warning %q", r.warning)
		}
	})
}

func TestRepeated(t *testing.T) {
	r := &runState{}
	a := &llm.ToolCall{Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}
	b := &llm.ToolCall{Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)}
	other := &llm.ToolCall{Name: "ls", Arguments: json.RawMessage(`{"path":"a"}`)}
	for i := 1; i < maxRepeats; i++ {
		if repeated(r, a) {
			t.Fatalf("call %d of the same tool call counted as repeated", i)
		}
		if repeated(r, b) || repeated(r, other) {
			t.Fatalf("a different call counted as repeated")
		}
	}
	if !repeated(r, a) {
		t.Errorf("the %dth identical call was not reported", maxRepeats)
	}
}

func TestStartCopy(t *testing.T) {
	m := &llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("x")}, StopReason: llm.StopError,
		ErrorMessage: "e", RetryAfterMs: 5, Model: "echo"}
	m.Usage.Output = 3
	c := startCopy(m)
	if len(c.Content) != 0 || c.Content == nil || c.Usage.Output != 0 || c.StopReason != llm.StopStop || c.ErrorMessage != "" || c.RetryAfterMs != 0 {
		t.Errorf("startCopy kept reply data: %+v", c)
	}
	if c.Model != "echo" || len(m.Content) != 1 {
		t.Errorf("startCopy lost identity or changed the original")
	}
}

func TestFailedMessage(t *testing.T) {
	s := &Session{deps: (&Deps{Now: func() time.Time { return time.UnixMilli(7) }}).withDefaults()}
	model := &llm.Model{Provider: "p", ID: "m", API: "api"}
	m := s.failedMessage(&llm.Request{Model: model, ThinkingLevel: "high"}, errors.New("no key"))
	if m.StopReason != llm.StopError || m.ErrorMessage != "no key" || m.Provider != "p" || m.Model != "m" || m.ThinkingLevel != "high" || m.Timestamp != 7 {
		t.Errorf("failedMessage = %+v", m)
	}
	if m.Usage.Cost == nil {
		t.Error("failed message has no (zero) cost")
	}
	a := s.failedMessage(nil, fmt.Errorf("x: %w", llm.Aborted()))
	if a.StopReason != llm.StopAborted || a.ErrorMessage != llm.AbortMessage {
		t.Errorf("aborted failure = %q %q", a.StopReason, a.ErrorMessage)
	}
}

func TestContextTokens(t *testing.T) {
	user := llm.NewUser("12345678", 0, "")
	userLen := func() int { b, _ := json.Marshal(user); return len(b) }()
	withUsage := func(total int) *llm.AssistantMessage {
		a := &llm.AssistantMessage{Role: llm.RoleAssistant, StopReason: llm.StopStop, Content: []llm.Content{}}
		a.Usage.TotalTokens = total
		return a
	}
	failed := withUsage(999)
	failed.StopReason = llm.StopError
	asst := withUsage(100)
	asstLen := func() int { b, _ := json.Marshal(asst); return len(b) }()
	for _, tc := range []struct {
		name string
		c    modelContext
		want int
	}{
		{"empty", modelContext{}, 0},
		{"system only counts without usage", modelContext{system: "abcdefgh"}, 2},
		{"chars are rounded up", modelContext{system: "abcdefghi"}, 3},
		{"usage of the last reply plus what follows", modelContext{system: "ignored", messages: []llm.Message{user, asst, user}}, 100 + (userLen+3)/4},
		{"failed replies do not count", modelContext{messages: []llm.Message{asst, failed}}, 100 + (func() int { b, _ := json.Marshal(failed); return (len(b) + 3) / 4 })()},
		{"usage before the compaction is stale", modelContext{messages: []llm.Message{asst, user}, fresh: 1}, (asstLen + userLen + 3) / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := contextTokens(tc.c); got != tc.want {
				t.Errorf("contextTokens = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestSettledOrder pins the order of settled: the next queued run starts
// first, then the settle callbacks, and the idle waiters only when no run
// took over.
func TestSettledOrder(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		var log []string
		st := &state{run: &runState{}}
		st.whenSettled(func() { log = append(log, "settle1") })
		st.whenIdle(func() { log = append(log, "idle") })
		st.whenSettled(func() { log = append(log, "settle2") })
		st.settled()
		if want := []string{"settle1", "settle2", "idle"}; !slices.Equal(log, want) {
			t.Errorf("order %q, want %q", log, want)
		}
		if st.run != nil || st.onSettle != nil || st.idleWaiters != nil {
			t.Error("settled left work behind")
		}
	})
	t.Run("a queued run takes over", func(t *testing.T) {
		var log []string
		st := &state{run: &runState{}}
		st.starts = []pendingStart{
			{start: func() { log = append(log, "start1"); st.run = &runState{} }},
			{start: func() { log = append(log, "start2") }},
		}
		st.whenSettled(func() { log = append(log, "settle") })
		st.whenIdle(func() { log = append(log, "idle") })
		st.settled()
		if want := []string{"start1", "settle"}; !slices.Equal(log, want) {
			t.Errorf("order %q, want %q (idle waits for the queued run)", log, want)
		}
		if len(st.starts) != 1 || len(st.idleWaiters) != 1 {
			t.Errorf("starts %d idle waiters %d, want 1 and 1", len(st.starts), len(st.idleWaiters))
		}
		st.settled() // the first queued run ends: start2 runs and, being idle, so does idle
		if want := []string{"start1", "settle", "start2", "idle"}; !slices.Equal(log, want) {
			t.Errorf("order %q, want %q", log, want)
		}
	})
	t.Run("closing fails queued runs", func(t *testing.T) {
		var errs []error
		st := &state{run: &runState{}, closing: true}
		started := false
		for range 2 {
			st.starts = append(st.starts, pendingStart{start: func() { started = true }, fail: func(err error) { errs = append(errs, err) }})
		}
		idle := false
		st.whenIdle(func() { idle = true })
		st.settled()
		if started || len(errs) != 2 || !errors.Is(errs[0], ErrClosed) || !errors.Is(errs[1], ErrClosed) {
			t.Errorf("started %v errs %v, want two ErrClosed and no start", started, errs)
		}
		if !idle {
			t.Error("idle waiters not told")
		}
	})
	t.Run("whenIdle and whenSettled run at once when idle", func(t *testing.T) {
		st := &state{}
		n := 0
		st.whenIdle(func() { n++ })
		st.whenSettled(func() { n++ })
		if n != 2 {
			t.Errorf("%d of 2 callbacks ran", n)
		}
	})
}

func TestToolSummary(t *testing.T) {
	for _, tc := range []struct{ desc, want string }{
		{"Read a file. Then more.", "read a file"},
		{"List files\nsecond line", "list files"},
		{"Single sentence.", "single sentence"},
		{"", "x"},
	} {
		if got := toolSummary(llm.ToolDecl{Name: "x", Description: tc.desc}); got != tc.want {
			t.Errorf("toolSummary(%q) = %q, want %q", tc.desc, got, tc.want)
		}
	}
}

func TestResultHelpers(t *testing.T) {
	if got := truncate("abcdef", 3); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("abc", 3); got != "abc" {
		t.Errorf("truncate = %q", got)
	}
	if details(nil) != nil {
		t.Error("details(nil) is not nil")
	}
	if got := string(details(json.RawMessage(`{"a":1}`))); got != `{"a":1}` {
		t.Errorf("details(raw) = %s", got)
	}
	if got := string(details(map[string]int{"n": 2})); got != `{"n":2}` {
		t.Errorf("details(map) = %s", got)
	}
	if details(func() {}) != nil {
		t.Error("details of an unmarshalable value is not nil")
	}
	if c := contentOrEmpty(nil); c == nil {
		t.Error("contentOrEmpty(nil) is nil")
	}
	tr := toolResultMessage(&llm.ToolCall{ID: "c1", Name: "read"}, tools.ErrorResult("no"), 9)
	if tr.ToolCallID != "c1" || tr.ToolName != "read" || !tr.IsError || tr.Timestamp != 9 {
		t.Errorf("toolResultMessage = %+v", tr)
	}
}

func TestParseMode(t *testing.T) {
	if m, err := parseMode("plan"); err != nil || m != "plan" {
		t.Errorf("parseMode(plan) = %q, %v", m, err)
	}
	_, err := parseMode("yolo")
	if !errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), "full-auto") {
		t.Errorf("parseMode(yolo) = %v, want ErrInvalidArguments listing the modes", err)
	}
}

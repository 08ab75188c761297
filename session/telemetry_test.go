package session

import (
	"context"

	"github.com/armadra/ama-rpc/tools"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/telemetry"
)

func usageReply(s string, in, read, write, out int) fake.Response {
	return fake.Response{Text: text(s), Usage: &fake.UsageSpec{Input: intp(in), CacheRead: intp(read), CacheWrite: intp(write), Output: intp(out)}}
}

// Checklist 1 through the session: the fake provider's cacheRead /
// cacheWrite fields drive one cache_miss evicted 30 500, after the
// message is complete and before message_end.
func TestSessionCacheMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{
			usageReply("a", 0, 0, 30000, 10), usageReply("b", 500, 30000, 0, 10), usageReply("c", 31000, 0, 0, 8)}}})
		defer e.s.Close()
		for _, p := range []string{"one", "two", "three"} {
			e.runPrompt(t, p)
		}
		m := eventsOf[events.CacheMiss](e.rec)
		if len(m) != 1 || m[0].MissedTokens != 30500 || m[0].Reason != telemetry.ReasonEvicted || m[0].MissedCost == nil {
			t.Fatalf("cache_miss %+v", m)
		}
		st, err := e.s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if c := st.Cache; c == nil || c.Reporting != telemetry.Reported || c.ReBilledTokens != 30500 || c.Misses.Count != 1 {
			t.Fatalf("stats cache %+v", st.Cache)
		}
	})
}

// Checklist 10: context_pressure fires once when the context crosses 70 %
// and once at 90 %, with the percent rounded to one decimal.
func TestContextPressureThresholds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tiny := &llm.Model{Provider: fake.ProviderID, ID: "tiny", API: "fake", ContextWindow: 10000, MaxTokens: 100}
		e := newEnv(t, setup{models: []*llm.Model{tiny}, settings: Settings{NoAutoCompaction: true},
			script: &fake.Script{Responses: []fake.Response{usageReply("a", 7050, 0, 0, 10),
				usageReply("b", 8000, 0, 0, 10), usageReply("c", 9050, 0, 0, 10), usageReply("d", 9100, 0, 0, 10)}}})
		defer e.s.Close()
		if _, err := e.s.SetModel(fake.ProviderID, "tiny"); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"1", "2", "3", "4"} {
			e.runPrompt(t, p)
		}
		cp := eventsOf[events.ContextPressure](e.rec)
		if len(cp) != 2 || cp[0].Threshold != 70 || cp[0].Percent != 70.6 || cp[1].Threshold != 90 || cp[1].Percent != 90.6 {
			t.Fatalf("context_pressure %+v", cp)
		}
		if *cp[0].RemainingTokens != 10000-7060 {
			t.Errorf("remainingTokens %d", *cp[0].RemainingTokens)
		}
	})
}

// stepClock moves by step per reading.
func stepClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}

// Checklist 11: telemetry_tick at most every 500 ms of streaming and never
// with ui.animation:false; avgTps = Σoutput / Σgeneration time of turn
// requests (a compaction is not counted).
func TestTelemetryTicksAndAvg(t *testing.T) {
	long := fake.Response{Steps: []fake.Step{{Text: text("abcdefghijklmnopqrstuvwxyzabcdefghijklmn"), ChunkSize: 2}},
		Usage: &fake.UsageSpec{Input: intp(100), Output: intp(30)}}
	for _, animation := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, setup{settings: Settings{NoAnimation: !animation},
				deps:   func(d *Deps) { d.Clock = stepClock(100 * time.Millisecond) },
				script: &fake.Script{Responses: []fake.Response{long, long}}})
			defer e.s.Close()
			e.runPrompt(t, "one")
			e.runPrompt(t, "two")
			ticks := e.rec.count("telemetry_tick")
			// 20 deltas 100 ms apart per reply: ticks 500 ms after the
			// first token and every 500 ms after that, 3 per reply.
			if want := map[bool]int{true: 6, false: 0}[animation]; ticks != want {
				t.Fatalf("animation %v: %d ticks, want %d", animation, ticks, want)
			}
			st, err := e.s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			tel := st.Telemetry
			// Each reply: first token at +100 ms, 19 more deltas, done one
			// reading later: 2 s of generation for 30 tokens.
			if tel == nil || tel.AvgTPS == nil || math.Abs(*tel.AvgTPS-15) > 1e-9 || *tel.Last.TTFTMs != 100 || *tel.Last.OutputTokens != 30 {
				t.Fatalf("telemetry %+v last %+v", tel, tel.Last)
			}
		})
	}
}

// warmTimers captures the warming timers (the test fires them).
type warmTimers struct {
	mu    sync.Mutex
	fns   []func()
	delay []time.Duration
}

func (w *warmTimers) after(d time.Duration, f func()) func() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fns, w.delay = append(w.fns, f), append(w.delay, d)
	return func() bool { return true }
}

func (w *warmTimers) fire(t *testing.T, s *Session) {
	t.Helper()
	w.mu.Lock()
	f := w.fns[len(w.fns)-1]
	w.mu.Unlock()
	f()
	synctest.Wait()
	_ = s.do(func(*state) {}) // the warm's result has been applied
	synctest.Wait()
}

type stopDecider struct{}

func (stopDecider) DecideWarm(telemetry.WarmDecision) string { return "stop" }

func cachedEcho() *llm.Model {
	return &llm.Model{Provider: fake.ProviderID, ID: "cached", API: "fake", ContextWindow: 2_000_000, MaxTokens: 100,
		Prices: llm.Prices{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}, PromptCache: &llm.PromptCache{Short: 300}}
}

// Checklist 7 (session): TTL 300 s arms the warm 270 s after the send;
// checklist 8: a host decider answering "stop" to a built-in warm →
// cache_warm{stopped, declined}. The tests warm in mode idle, where the
// timer outlives agent_settled (a prompt of 1 M tokens is worth warming
// at the idle probability of 0.15).
func TestWarmingDeclinedByHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		timers := &warmTimers{}
		e := newEnv(t, setup{models: []*llm.Model{cachedEcho()}, settings: Settings{CacheWarming: "idle"},
			deps:   func(d *Deps) { d.AfterFunc, d.WarmingDecider = timers.after, stopDecider{} },
			script: &fake.Script{Responses: []fake.Response{usageReply("a", 0, 0, 1_000_000, 10)}}})
		defer e.s.Close()
		if _, err := e.s.SetModel(fake.ProviderID, "cached"); err != nil {
			t.Fatal(err)
		}
		e.runPrompt(t, "one")
		w := eventsOf[events.CacheWarm](e.rec)
		if len(w) != 1 || w[0].Phase != "scheduled" || len(timers.delay) != 1 || timers.delay[0] > 270*time.Second ||
			timers.delay[0] < 269*time.Second {
			t.Fatalf("cache_warm %+v timers %v", w, timers.delay)
		}
		timers.fire(t, e.s)
		w = eventsOf[events.CacheWarm](e.rec)
		if len(w) != 2 || w[1].Phase != "stopped" || w[1].Reason != telemetry.StopDeclined {
			t.Fatalf("cache_warm %+v", w)
		}
		if e.fp.Calls() != 1 {
			t.Errorf("a declined warm was sent (%d calls)", e.fp.Calls())
		}
	})
}

// Checklist 9 (session): two warm replies without cache read/write stop
// warming with no_cache_hits; warms are usage entries, not messages.
func TestWarmingNoCacheHits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		timers := &warmTimers{}
		e := newEnv(t, setup{models: []*llm.Model{cachedEcho()}, settings: Settings{CacheWarming: "idle"},
			deps: func(d *Deps) { d.AfterFunc = timers.after },
			script: &fake.Script{Responses: []fake.Response{usageReply("a", 0, 0, 1_000_000, 10),
				usageReply("w1", 60000, 0, 0, 1), usageReply("w2", 60000, 0, 0, 1)}}})
		defer e.s.Close()
		if _, err := e.s.SetModel(fake.ProviderID, "cached"); err != nil {
			t.Fatal(err)
		}
		e.runPrompt(t, "one")
		timers.fire(t, e.s)
		timers.fire(t, e.s)
		var phases []string
		for _, w := range eventsOf[events.CacheWarm](e.rec) {
			phases = append(phases, w.Phase+":"+w.Reason)
		}
		want := "scheduled: sent: scheduled: sent: stopped:no_cache_hits"
		if got := joinStr(phases); got != want {
			t.Fatalf("cache_warm %s, want %s", got, want)
		}
		if n := e.rec.count("message_end"); n != 2 { // the prompt and the one reply
			t.Errorf("message_end %d: a warm entered the transcript", n)
		}
		st, _ := e.s.Stats()
		if st.AssistantMessages != 1 || st.Tokens.Input != 120000 || st.Cache.Warming.Sent != 2 {
			t.Errorf("stats %+v warming %+v", st, st.Cache.Warming)
		}
	})
}

func joinStr(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// In mode streaming (the default) warming covers the run only:
// agent_settled stops the timer silently, so a late timer sends nothing.
func TestWarmingStreamingEndsAtSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		timers := &warmTimers{}
		e := newEnv(t, setup{models: []*llm.Model{cachedEcho()}, deps: func(d *Deps) { d.AfterFunc = timers.after },
			script: &fake.Script{Responses: []fake.Response{usageReply("a", 0, 0, 60000, 10)}}})
		defer e.s.Close()
		if _, err := e.s.SetModel(fake.ProviderID, "cached"); err != nil {
			t.Fatal(err)
		}
		e.runPrompt(t, "one")
		if w := eventsOf[events.CacheWarm](e.rec); len(w) != 1 || w[0].Phase != "scheduled" {
			t.Fatalf("cache_warm %+v", w)
		}
		timers.fire(t, e.s)
		st, _ := e.s.Stats()
		if e.fp.Calls() != 1 || st.Cache.Warming.State != telemetry.StateInactive || len(eventsOf[events.CacheWarm](e.rec)) != 1 {
			t.Fatalf("calls %d warming %+v", e.fp.Calls(), st.Cache.Warming)
		}
	})
}

// sleeper is a stand-in for the sub-agent task tool: it runs for d on the
// bubble's clock.
type sleeper struct{ d time.Duration }

func (s sleeper) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "task", Description: "sub-agent", Parameters: []byte(`{"type":"object"}`)}
}
func (sleeper) Permission() string { return "read" }
func (s sleeper) Execute(ctx context.Context, _ *tools.Call) (*tools.Result, error) {
	time.Sleep(s.d)
	return &tools.Result{Content: []llm.Content{llm.Text("done")}}, nil
}

// Checklist 2 (subtask): a miss after a task tool ran for most of the gap
// is attributed to the sub-agent, not to eviction.
func TestCacheMissSubtask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		call := toolCall("task", `{}`)
		call.Usage = &fake.UsageSpec{Input: intp(500), CacheRead: intp(30000), Output: intp(5)}
		e := newEnv(t, setup{tools: []tools.Tool{sleeper{5 * time.Minute}}, mode: "full-auto",
			script: &fake.Script{Responses: []fake.Response{call, usageReply("after", 31000, 0, 0, 5)}}})
		defer e.s.Close()
		e.runPrompt(t, "delegate")
		m := eventsOf[events.CacheMiss](e.rec)
		if len(m) != 1 || m[0].Reason != telemetry.ReasonSubtask || m[0].IdleMs < 300000 {
			t.Fatalf("cache_miss %+v", m)
		}
	})
}

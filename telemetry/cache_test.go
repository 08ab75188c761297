package telemetry

import (
	"math"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

var (
	t0     = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fakeEP = Endpoint{Key: "fake|local|echo", Prices: llm.Prices{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}}
	print1 = Fingerprint{System: "s", Tools: "t", Model: "fake/echo"}
)

func rec(at time.Duration, u llm.Usage) Record {
	u.Finalize(fakeEP.Prices)
	return Record{At: t0.Add(at), Purpose: llm.PurposeTurn, Endpoint: fakeEP.Key, Print: print1, Usage: u}
}

// Checklist 1: prompts 30 500 then 31 000 with no cache read on a reported
// endpoint → one evicted miss of 30 500 tokens.
func TestMissEvicted(t *testing.T) {
	c := NewCache(NewReporting(), "")
	for i, u := range []llm.Usage{{CacheWrite: 30000, Output: 10}, {Input: 500, CacheRead: 30000}, {Input: 31000}} {
		m := c.Observe(rec(time.Duration(i)*time.Second, u), fakeEP, 0)
		if i < 2 && m != nil {
			t.Fatalf("request %d: unexpected miss %+v", i, m)
		}
		if i == 2 {
			if m == nil || m.MissedTokens != 30500 || m.Reason != ReasonEvicted || m.IdleMs != 1000 {
				t.Fatalf("miss = %+v", m)
			}
			if m.MissedCost == nil || math.Abs(*m.MissedCost-30500*0.9e-6) > 1e-12 {
				t.Fatalf("missedCost = %v", m.MissedCost)
			}
		}
	}
	st := c.Stats(fakeEP, 0, 0)
	if st.Misses.Count != 1 || st.Misses.ByReason[ReasonEvicted] != 1 || st.ReBilledTokens != 30500 {
		t.Fatalf("stats %+v", st)
	}
}

// The RPC stats example of ama's protocol doc.
func TestStatsExample(t *testing.T) {
	c := NewCache(NewReporting(), "")
	c.Observe(rec(0, llm.Usage{Input: 2000, CacheRead: 140000}), fakeEP, 0)
	c.Observe(rec(3*time.Millisecond, llm.Usage{Input: 150000}), fakeEP, 0)
	st := c.Stats(fakeEP, 150010, 200000)
	if st.Reporting != Reported || *st.LastHitRate != 0 || *st.HitRate != 140000.0/292000 || st.ReBilledTokens != 142000 {
		t.Fatalf("stats %+v", st)
	}
	if math.Abs(*st.ReBilledUsd-0.1278) > 1e-9 || st.Misses.ByReason[ReasonEvicted] != 1 {
		t.Fatalf("reBilledUsd %v misses %+v", *st.ReBilledUsd, st.Misses)
	}
	if *st.ContextRemainingTokens != 49990 || *st.EstimatedTurnsLeft != 49990/8000 {
		t.Fatalf("context %d turns %d", *st.ContextRemainingTokens, *st.EstimatedTurnsLeft)
	}
}

// Checklist 2: a changed tool table → prefix_changed/tools; system →
// prefix_changed/system; model → model_changed; a gap over the TTL → idle;
// task time covering the gap → subtask.
func TestMissReasons(t *testing.T) {
	cases := []struct {
		name           string
		mutate         func(r *Record)
		gap, subtask   time.Duration
		reason, detail string
	}{
		{"tools", func(r *Record) { r.Print.Tools = "t2" }, time.Second, 0, ReasonPrefixChanged, "tools"},
		{"system", func(r *Record) { r.Print.System = "s2"; r.Print.Tools = "t2" }, time.Second, 0, ReasonPrefixChanged, "system"},
		{"model", func(r *Record) { r.Print.Model = "fake/reasoning" }, time.Second, 0, ReasonModelChanged, ""},
		{"idle", func(*Record) {}, 601 * time.Second, 0, ReasonIdle, ""},
		{"subtask", func(*Record) {}, 10 * time.Second, 9 * time.Second, ReasonSubtask, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(NewReporting(), "")
			c.Observe(rec(0, llm.Usage{Input: 500, CacheRead: 30000}), fakeEP, 0)
			r := rec(tc.gap, llm.Usage{Input: 31000})
			tc.mutate(&r)
			m := c.Observe(r, fakeEP, tc.subtask.Milliseconds())
			if m == nil || m.Reason != tc.reason || m.Detail != tc.detail || m.MissedTokens != 30500 {
				t.Fatalf("miss %+v", m)
			}
		})
	}
	// With a catalog TTL of 300 s, a 301 s gap is idle already.
	c := NewCache(NewReporting(), "")
	ep := fakeEP
	ep.TTL = 300 * time.Second
	c.Observe(rec(0, llm.Usage{Input: 500, CacheRead: 30000}), ep, 0)
	if m := c.Observe(rec(301*time.Second, llm.Usage{Input: 31000}), ep, 0); m == nil || m.Reason != ReasonIdle {
		t.Fatalf("miss %+v", m)
	}
}

// Checklist 3: a miss of 900 tokens (under the 1024 floor) is not counted;
// the granularity raises the floor.
func TestMissNoiseFloor(t *testing.T) {
	c := NewCache(NewReporting(), "")
	c.Observe(rec(0, llm.Usage{Input: 100, CacheRead: 2000}), fakeEP, 0)
	if m := c.Observe(rec(time.Second, llm.Usage{Input: 1000, CacheRead: 1200}), fakeEP, 0); m != nil {
		t.Fatalf("900-token miss counted: %+v", m)
	}
	if st := c.Stats(fakeEP, 0, 0); st.Misses.Count != 0 || st.ReBilledTokens != 0 {
		t.Fatalf("stats %+v", st)
	}
	if NoiseFloor(1024, 2048) != 2048 || NoiseFloor(4096, 0) != 4096 || NoiseFloor(0, 0) != 1024 {
		t.Fatal("noise floor")
	}
	// A small relative miss under 20 000 tokens is noise too.
	c = NewCache(NewReporting(), "")
	c.Observe(rec(0, llm.Usage{Input: 100, CacheRead: 200000}), fakeEP, 0)
	if m := c.Observe(rec(time.Second, llm.Usage{Input: 6000, CacheRead: 195000}), fakeEP, 0); m != nil {
		t.Fatalf("ratio below threshold counted: %+v", m)
	}
}

// Checklist 4: unknown until a cache read or write; silent after three
// comparable zero-cache requests above minTokens; a hit makes it reported.
func TestReportingStates(t *testing.T) {
	rep := NewReporting()
	key := fakeEP.Key
	rep.Observe(rec(0, llm.Usage{Input: 500}), 0, 0)                 // small: neither vote nor reset
	rep.Observe(rec(time.Millisecond, llm.Usage{Input: 5000}), 0, 0) // nothing comparable before it
	for i := 1; i <= 3; i++ {
		if s := rep.State(key, ""); s != Unknown {
			t.Fatalf("after %d votes: %s", i-1, s)
		}
		rep.Observe(rec(time.Duration(i)*time.Second, llm.Usage{Input: 5000}), 0, 0)
	}
	if s := rep.State(key, ""); s != Silent {
		t.Fatalf("after three votes: %s", s)
	}
	if s := rep.State(key, Reported); s != Reported {
		t.Fatalf("override: %s", s)
	}
	rep.Observe(rec(5*time.Second, llm.Usage{Input: 100, CacheRead: 4096}), 0, 0)
	if s := rep.State(key, ""); s != Reported {
		t.Fatalf("after a hit: %s", s)
	}
	rep.Observe(rec(6*time.Second, llm.Usage{Input: 100, CacheRead: 6144}), 0, 0)
	if g := rep.Granularity(key); g != 2048 {
		t.Fatalf("granularity %d", g)
	}
	// Non-comparable records (another system prompt) do not vote; a
	// response without cache fields does.
	rep = NewReporting()
	a := rec(0, llm.Usage{Input: 5000})
	rep.Observe(a, 0, 0)
	for i := 1; i <= 3; i++ {
		r := rec(time.Duration(i)*time.Second, llm.Usage{Input: 5000})
		r.Print.System = string(rune('a' + i))
		rep.Observe(r, 0, 0)
	}
	if s := rep.State(key, ""); s != Unknown {
		t.Fatalf("non-comparable votes counted: %s", s)
	}
	for i := 4; i <= 6; i++ {
		r := rec(time.Duration(i)*time.Hour, llm.Usage{Input: 5000})
		r.NoCacheField = true
		rep.Observe(r, 0, 0)
	}
	if s := rep.State(key, ""); s != Silent {
		t.Fatalf("no cache field: %s", s)
	}
}

// Checklist 5: hitRate leaves out non-reported endpoints; lastHitRate is
// absent unless reported. No miss is detected on an unknown endpoint.
func TestHitRateEndpoints(t *testing.T) {
	c := NewCache(NewReporting(), "")
	other := Endpoint{Key: "openai|example.com|m"}
	r := rec(0, llm.Usage{Input: 50000})
	r.Endpoint = other.Key
	c.Observe(r, other, 0)
	st := c.Stats(other, 0, 0)
	if st.Reporting != Unknown || st.LastHitRate != nil || st.HitRate != nil {
		t.Fatalf("unknown endpoint stats %+v", st)
	}
	c.Observe(rec(time.Second, llm.Usage{Input: 1000, CacheRead: 3000}), fakeEP, 0)
	st = c.Stats(fakeEP, 0, 0)
	if st.HitRate == nil || *st.HitRate != 0.75 || st.LastHitRate == nil || *st.LastHitRate != 0.75 {
		t.Fatalf("reported stats %+v", st)
	}
	r2 := rec(2*time.Second, llm.Usage{Input: 80000})
	r2.Endpoint = other.Key
	if m := c.Observe(r2, other, 0); m != nil {
		t.Fatalf("miss on unknown endpoint: %+v", m)
	}
}

// Checklist 6: reBilledUsd disappears once a miss occurs on an unpriced
// model (and stays away).
func TestReBilledUsdUnpriced(t *testing.T) {
	c := NewCache(NewReporting(), "")
	c.Observe(rec(0, llm.Usage{Input: 500, CacheRead: 30000}), fakeEP, 0)
	c.Observe(rec(time.Second, llm.Usage{Input: 31000}), fakeEP, 0)
	if st := c.Stats(fakeEP, 0, 0); st.ReBilledUsd == nil {
		t.Fatal("priced miss has no reBilledUsd")
	}
	free := rec(2*time.Second, llm.Usage{Input: 500, CacheRead: 30000})
	free.Usage.Cost = nil
	c.Observe(free, fakeEP, 0)
	free2 := rec(3*time.Second, llm.Usage{Input: 31000})
	free2.Usage.Cost = nil
	if m := c.Observe(free2, fakeEP, 0); m == nil || m.MissedCost != nil {
		t.Fatalf("unpriced miss %+v", m)
	}
	c.Observe(rec(4*time.Second, llm.Usage{Input: 500, CacheRead: 31000}), fakeEP, 0)
	c.Observe(rec(5*time.Second, llm.Usage{Input: 32000}), fakeEP, 0)
	if st := c.Stats(fakeEP, 0, 0); st.ReBilledUsd != nil || st.Misses.Count != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestResetPointSkipsComparison(t *testing.T) {
	c := NewCache(NewReporting(), "")
	c.Observe(rec(0, llm.Usage{Input: 500, CacheRead: 30000}), fakeEP, 0)
	c.Reset()
	if m := c.Observe(rec(time.Second, llm.Usage{Input: 31000}), fakeEP, 0); m != nil {
		t.Fatalf("miss after a reset point: %+v", m)
	}
}

func TestSubagentsSummary(t *testing.T) {
	rep := NewReporting()
	child := NewCache(rep, ModeOff)
	child.Observe(rec(0, llm.Usage{Input: 500, CacheRead: 30000}), fakeEP, 0)
	child.Observe(rec(time.Second, llm.Usage{Input: 31000}), fakeEP, 0)
	parent := NewCache(rep, "")
	if parent.Stats(fakeEP, 0, 0).Subagents != nil {
		t.Fatal("subagents without children")
	}
	parent.AddSubagent(child.Totals())
	sa := parent.Stats(fakeEP, 0, 0).Subagents
	if sa == nil || sa.Count != 1 || sa.ReBilledTokens != 30500 || *sa.HitRate != 30000.0/61500 {
		t.Fatalf("subagents %+v", sa)
	}
}

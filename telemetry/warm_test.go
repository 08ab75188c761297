package telemetry

import (
	"math"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

func warmInput(ttl time.Duration) WarmInput {
	return WarmInput{TTL: ttl, Retention: "short", State: Reported, Prices: fakeEP.Prices}
}

// Checklist 7: TTL 300 s schedules 270 s after the send (deadline 285 s)
// with a scheduled event; no TTL → stopped no_ttl without an event.
func TestWarmSchedule(t *testing.T) {
	w := NewWarmer("")
	r := rec(0, llm.Usage{Input: 100, CacheRead: 60000})
	ev := w.Schedule(&r, warmInput(300*time.Second))
	if ev == nil || ev.Phase != StateScheduled || ev.NextWarmAt != t0.Add(270*time.Second).UnixMilli() {
		t.Fatalf("event %+v", ev)
	}
	if d, dl := WarmSchedule(300 * time.Second); d != 270*time.Second || dl != 285*time.Second {
		t.Fatalf("schedule %v %v", d, dl)
	}
	st := w.Status()
	if st.State != StateScheduled || st.Phase != ModeStreaming || *st.NextWarmAt != ev.NextWarmAt || st.ExpectedSavingsUsd == nil {
		t.Fatalf("status %+v", st)
	}
	w = NewWarmer("")
	if ev := w.Schedule(&r, warmInput(0)); ev != nil {
		t.Fatalf("no ttl event %+v", ev)
	}
	if st := w.Status(); st.State != StateStopped || st.Reason != StopNoTTL || st.Mode != ModeStreaming {
		t.Fatalf("status %+v", st)
	}
	for _, tc := range []struct {
		in     WarmInput
		reason string
	}{
		{WarmInput{TTL: time.Hour, Retention: "none", State: Reported, Prices: fakeEP.Prices}, StopRetentionNone},
		{WarmInput{TTL: time.Hour, State: Unknown, Prices: fakeEP.Prices}, StopReportingUnk},
		{WarmInput{TTL: time.Hour, State: Silent, Prices: fakeEP.Prices}, StopReportingSilent},
		{WarmInput{TTL: time.Hour, State: Reported}, StopNoPrice},
		{WarmInput{TTL: 5 * time.Second, State: Reported, Prices: fakeEP.Prices}, StopTTLTooShort},
	} {
		w := NewWarmer("")
		if ev := w.Schedule(&r, tc.in); ev != nil || w.Status().Reason != tc.reason {
			t.Fatalf("%s: event %+v status %+v", tc.reason, ev, w.Status())
		}
	}
	small := rec(0, llm.Usage{Input: 10, CacheRead: 2000})
	if w := NewWarmer(""); w.Schedule(&small, warmInput(time.Hour)) != nil || w.Status().Reason != StopBelowMinSavings {
		t.Fatalf("small prompt: %+v", w.Status())
	}
	if w := NewWarmer(ModeOff); w.Schedule(&r, warmInput(time.Hour)) != nil || w.Status().State != StateInactive {
		t.Fatalf("off: %+v", w.Status())
	}
}

type decider string

func (d decider) DecideWarm(WarmDecision) string { return string(d) }

// Checklist 8: a host handler answering "stop" to a built-in warm →
// stopped/declined.
func TestWarmDeclined(t *testing.T) {
	w := NewWarmer("")
	w.Decider = decider("stop")
	r := rec(0, llm.Usage{Input: 100, CacheRead: 60000})
	w.Schedule(&r, warmInput(300*time.Second))
	next, ok := w.Next()
	if !ok {
		t.Fatal("not scheduled")
	}
	replay, ev := w.Fire(next, true)
	if replay != nil || ev == nil || ev.Phase != StateStopped || ev.Reason != StopDeclined {
		t.Fatalf("fire: %v %+v", replay, ev)
	}
	// Any other answer keeps the built-in decision.
	w = NewWarmer("")
	w.Decider = decider("maybe")
	w.Schedule(&r, warmInput(300*time.Second))
	if replay, ev := w.Fire(next, true); replay == nil || ev != nil {
		t.Fatalf("fire: %v %+v", replay, ev)
	}
}

// Checklist 9: two warm responses in a row with zero cache read/write stop
// warming with no_cache_hits; a hit resets the count and reschedules.
func TestWarmNoCacheHits(t *testing.T) {
	w := NewWarmer("")
	r := rec(0, llm.Usage{Input: 100, CacheRead: 60000})
	w.Schedule(&r, warmInput(300*time.Second))
	at := 270 * time.Second
	warmRec := func(u llm.Usage) *Record { x := rec(at, u); x.Purpose = PurposeWarm; return &x }
	next, _ := w.Next()
	if replay, _ := w.Fire(next, true); replay == nil {
		t.Fatal("no replay")
	}
	sent, ev := w.Sent(warmRec(llm.Usage{Input: 1, Output: 1}))
	if sent.Phase != "sent" || sent.Cost == nil || ev == nil || ev.Phase != StateScheduled ||
		ev.NextWarmAt != t0.Add(540*time.Second).UnixMilli() {
		t.Fatalf("first: %+v %+v", sent, ev)
	}
	at = 540 * time.Second
	next, _ = w.Next()
	w.Fire(next, true)
	_, ev = w.Sent(warmRec(llm.Usage{Input: 1, Output: 1}))
	if ev == nil || ev.Phase != StateStopped || ev.Reason != StopNoCacheHits {
		t.Fatalf("second: %+v", ev)
	}
	st := w.Status()
	if st.Sent != 2 || st.CostUsd == nil || st.State != StateStopped {
		t.Fatalf("status %+v", st)
	}
}

func TestWarmFireStops(t *testing.T) {
	r := rec(0, llm.Usage{Input: 100, CacheRead: 60000})
	w := NewWarmer("")
	w.Schedule(&r, warmInput(300*time.Second))
	if _, ev := w.Fire(t0.Add(286*time.Second), true); ev == nil || ev.Reason != StopLate {
		t.Fatalf("late: %+v", ev)
	}
	w = NewWarmer("")
	w.Schedule(&r, warmInput(300*time.Second))
	if _, ev := w.Fire(t0.Add(270*time.Second), false); ev == nil || ev.Reason != StopStale {
		t.Fatalf("stale: %+v", ev)
	}
	w = NewWarmer("")
	w.Schedule(&r, warmInput(300*time.Second))
	w.Pause()
	if _, ok := w.Next(); ok {
		t.Fatal("paused warmer still scheduled")
	}
	// The streaming cap: 60 minutes from the chain's first request.
	w = NewWarmer("")
	w.Schedule(&r, warmInput(300*time.Second))
	later := rec(59*time.Minute, llm.Usage{Input: 100, CacheRead: 60000})
	if ev := w.Schedule(&later, warmInput(300*time.Second)); ev == nil || ev.Reason != StopMaxDuration {
		t.Fatalf("cap: %+v", ev)
	}
}

func TestDecideEconomics(t *testing.T) {
	d := Decide(ModeStreaming, 60000, fakeEP.Prices, 0.05)
	// warm = 60000 × 0.1/1e6 + 2/1e6; miss = 60000 × 1.25/1e6 − 60000 × 0.1/1e6
	if d.Action != "warm" || math.Abs(*d.WarmCost-0.006002) > 1e-12 || math.Abs(*d.MissCost-0.069) > 1e-12 {
		t.Fatalf("%+v warm %v miss %v", d, *d.WarmCost, *d.MissCost)
	}
	if d := Decide(ModeIdle, 60000, fakeEP.Prices, 0.05); d.Action != "stop" || d.Reason != StopBelowMinSavings {
		t.Fatalf("idle %+v", d)
	}
}

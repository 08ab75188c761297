package telemetry

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock               { return &fakeClock{t: t0} }
func ptr[T any](p *T) T                  { return *p }

// Checklist 11 (numbers): ttft, per-request tps, avgTps = Σoutput /
// Σgeneration time over turn requests; live while streaming.
func TestThroughputNumbers(t *testing.T) {
	c := newClock()
	tp := NewThroughput(c.now, true)
	c.add(time.Second)
	tp.Begin()
	c.add(200 * time.Millisecond)
	if tp.Delta("text_delta", "abcd") {
		t.Fatal("tick on the first token") // ticks come after 500 ms of streaming
	}
	for range 10 {
		c.add(100 * time.Millisecond)
		tp.Delta("text_delta", "abcdabcd") // 2 tokens each
	}
	s := tp.Snapshot()
	if s.Live == nil || s.Live.OutputTokens != 21 || s.Live.ElapsedMs != 1000 {
		t.Fatalf("live %+v", s.Live)
	}
	if s.Live.TPS < 19 || s.Live.TPS > 22 {
		t.Fatalf("live tps %v", s.Live.TPS)
	}
	if ptr(s.Last.TTFTMs) != 200 || s.Last.DoneAt != nil {
		t.Fatalf("in-flight last %+v", s.Last)
	}
	tp.Finish(50, false)
	s = tp.Snapshot()
	if s.Live != nil || ptr(s.Last.OutputTokens) != 50 || ptr(s.Last.TPS) != 50 || ptr(s.AvgTPS) != 50 {
		t.Fatalf("after finish %+v %+v", s, s.Last)
	}
	// A second request: 30 tokens over 3 s → avg = 80 / 4 s.
	tp.Begin()
	c.add(time.Second)
	tp.Delta("thinking_delta", "x")
	c.add(3 * time.Second)
	tp.Finish(30, false)
	if s := tp.Snapshot(); ptr(s.AvgTPS) != 20 || ptr(s.Last.TPS) != 10 || ptr(s.Last.TTFTMs) != 1000 {
		t.Fatalf("avg %v last %+v", ptr(s.AvgTPS), s.Last)
	}
	// Failed requests and ones that generated for < 250 ms stay out.
	tp.Begin()
	tp.Delta("text_delta", "x")
	c.add(100 * time.Millisecond)
	tp.Finish(0, false)
	tp.Begin()
	tp.Delta("text_delta", "x")
	c.add(time.Second)
	tp.Finish(100, true)
	if s := tp.Snapshot(); ptr(s.AvgTPS) != 20 || s.SessionStartedAt != t0.UnixMilli() {
		t.Fatalf("avg %v", ptr(s.AvgTPS))
	}
}

// Checklist 11 (ticks): at most one tick per 500 ms of streaming, none for
// an instant reply, none with ui.animation:false.
func TestThroughputTicks(t *testing.T) {
	for _, animation := range []bool{true, false} {
		c := newClock()
		tp := NewThroughput(c.now, animation)
		tp.Begin()
		ticks := 0
		for range 100 { // 100 deltas, 50 ms apart: 5 s of streaming
			if tp.Delta("text_delta", "tok ") {
				ticks++
			}
			c.add(50 * time.Millisecond)
		}
		tp.Finish(0, false)
		want := 9 // at 0.5 s, 1.0 s, … 4.5 s of streaming
		if !animation {
			want = 0
		}
		if ticks != want {
			t.Fatalf("animation %v: %d ticks", animation, ticks)
		}
		tp.Begin()
		if tp.Delta("text_delta", "instant") {
			t.Fatal("instant reply ticked")
		}
		tp.Finish(0, false)
	}
}

func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]float64{"abcd": 1, "日本語": 3, "한국": 2, "ｈｉ": 2, "𠀀": 1, "é": 0.25, "😀": 0.5, "ㄅ": 0.25} {
		if got := EstimateTokens(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// BenchmarkThroughputDelta is the telemetry cost of one streamed delta.
func BenchmarkThroughputDelta(b *testing.B) {
	tp := NewThroughput(nil, true)
	tp.Begin()
	b.ReportAllocs()
	for b.Loop() {
		tp.Delta("text_delta", "tok ")
	}
}

// BenchmarkTelemetryReply100k is the telemetry overhead of one streamed
// reply of 100 000 deltas (Begin, every Delta with the wall clock, Finish
// and a stats snapshot); ns/delta is the per-delta share.
func BenchmarkTelemetryReply100k(b *testing.B) {
	const deltas = 100_000
	tp := NewThroughput(nil, true) // the production clock
	b.ReportAllocs()
	for b.Loop() {
		tp.Begin()
		for range deltas {
			tp.Delta("text_delta", "tok ")
		}
		tp.Finish(0, false)
		_ = tp.Snapshot()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/deltas, "ns/delta")
}

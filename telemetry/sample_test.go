package telemetry

import (
	"math"
	"testing"
	"time"
)

// countingClock is a test clock moved by the test and counting its
// readings.
type countingClock struct {
	t     time.Time
	reads int
}

func (c *countingClock) now() time.Time { c.reads++; return c.t }

// sampledPair feeds the same deltas to a sampled Throughput and to the
// unsampled reference, each with its own clock moved identically.
type sampledPair struct {
	ca, cb *countingClock
	a, b   *Throughput
	ticks  [2][]int // delta numbers that ticked
	n      int
}

func newSampledPair() *sampledPair {
	p := &sampledPair{ca: &countingClock{t: t0}, cb: &countingClock{t: t0}}
	p.a, p.b = NewThroughput(p.ca.now, true), NewThroughput(p.cb.now, true)
	p.b.smp.off = true
	return p
}

func (p *sampledPair) advance(d time.Duration) { p.ca.t, p.cb.t = p.ca.t.Add(d), p.cb.t.Add(d) }

func (p *sampledPair) begin() { p.a.Begin(); p.b.Begin() }

func (p *sampledPair) delta(typ, text string) {
	if p.a.Delta(typ, text) {
		p.ticks[0] = append(p.ticks[0], p.n)
	}
	if p.b.Delta(typ, text) {
		p.ticks[1] = append(p.ticks[1], p.n)
	}
	p.n++
}

// check compares the snapshots: every reported time and count exactly,
// live tps within tol (relative).
func (p *sampledPair) check(t *testing.T, when string, tol float64) {
	t.Helper()
	a, b := p.a.Snapshot(), p.b.Snapshot()
	if (a.Live == nil) != (b.Live == nil) || (a.Last == nil) != (b.Last == nil) {
		t.Fatalf("%s: sampled %+v, reference %+v", when, a, b)
	}
	if l, r := a.Live, b.Live; l != nil {
		if l.OutputTokens != r.OutputTokens || l.ElapsedMs != r.ElapsedMs {
			t.Errorf("%s: live %+v, reference %+v", when, *l, *r)
		}
		if math.Abs(l.TPS-r.TPS) > tol*r.TPS {
			t.Errorf("%s: live tps %v, reference %v", when, l.TPS, r.TPS)
		}
	}
	if l, r := a.Last, b.Last; l != nil {
		eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
		if l.RequestAt != r.RequestAt || !eq(l.FirstTokenAt, r.FirstTokenAt) || !eq(l.TTFTMs, r.TTFTMs) || !eq(l.DoneAt, r.DoneAt) ||
			(l.TPS == nil) != (r.TPS == nil) || (l.TPS != nil && *l.TPS != *r.TPS) ||
			(l.OutputTokens == nil) != (r.OutputTokens == nil) || (l.OutputTokens != nil && *l.OutputTokens != *r.OutputTokens) {
			t.Errorf("%s: last %+v, reference %+v", when, *l, *r)
		}
	}
	if (a.AvgTPS == nil) != (b.AvgTPS == nil) || (a.AvgTPS != nil && *a.AvgTPS != *b.AvgTPS) {
		t.Errorf("%s: avgTps differs", when)
	}
}

// A fast stream (5 µs per delta, 2.5 s): the clock is read on a small
// fraction of the deltas, every reported value is the reference's (live
// tps within the documented resolution), ticks come at most maxStride
// deltas late and never more often.
func TestSampledClockFastStream(t *testing.T) {
	p := newSampledPair()
	p.advance(time.Second)
	p.begin()
	p.advance(300 * time.Millisecond)
	const deltas = 500_000
	for i := range deltas {
		p.delta("text_delta", "tok ")
		p.advance(5 * time.Microsecond)
		if i%50_000 == 0 {
			p.check(t, "streaming", 1.0/2000)
		}
	}
	p.check(t, "end of stream", 1.0/2000)
	p.a.Finish(0, false)
	p.b.Finish(0, false)
	p.check(t, "finished", 0)
	if p.ca.reads > deltas/maxStride+1000 || p.cb.reads < deltas {
		t.Errorf("clock readings: sampled %d, reference %d for %d deltas", p.ca.reads, p.cb.reads, deltas)
	}
	checkTicks(t, p)
}

// checkTicks: as many ticks as the reference; each comes at most
// maxStride deltas later after the previous one than in the reference (a
// tick is timed from the previous tick, so the lateness does not add up
// to more than one stride per tick).
func checkTicks(t *testing.T, p *sampledPair) {
	t.Helper()
	a, b := p.ticks[0], p.ticks[1]
	if len(a) != len(b) {
		t.Fatalf("ticks: sampled %d, reference %d", len(a), len(b))
	}
	prevA, prevB := 0, 0
	for i := range a {
		if late := (a[i] - prevA) - (b[i] - prevB); a[i] < b[i] || late >= maxStride {
			t.Errorf("tick %d at delta %d (previous %d), reference %d (previous %d)", i, a[i], prevA, b[i], prevB)
		}
		prevA, prevB = a[i], b[i]
	}
}

// Deltas 1 ms or more apart read the clock every time: the numbers are
// the reference's exactly.
func TestSampledClockSlowStream(t *testing.T) {
	p := newSampledPair()
	p.begin()
	for range 5000 {
		p.delta("text_delta", "tok ")
		p.advance(time.Millisecond)
	}
	p.check(t, "streaming", 0)
	p.a.Finish(0, false)
	p.b.Finish(0, false)
	p.check(t, "finished", 0)
	if p.ca.reads != p.cb.reads || len(p.ticks[0]) == 0 {
		t.Errorf("readings %d vs %d, ticks %d", p.ca.reads, p.cb.reads, len(p.ticks[0]))
	}
	checkTicks(t, p)
}

// Bursts (a network read of 500 deltas, then 40 ms of nothing): stamps
// after a pause are stale for fewer than maxStride deltas, so live tps
// stays within a burst's share and ticks within maxStride deltas.
func TestSampledClockBursts(t *testing.T) {
	p := newSampledPair()
	p.begin()
	p.advance(50 * time.Millisecond)
	for burst := range 100 {
		for range 500 {
			p.delta("text_delta", "tok ")
			p.advance(100 * time.Nanosecond)
		}
		p.advance(40 * time.Millisecond)
		if burst%10 == 9 {
			// At most maxStride-1 deltas of the burst at the window's
			// trailing edge (of ~24,000 in the window) are misplaced.
			p.check(t, "after a burst", 2*float64(maxStride)/20_000)
		}
	}
	p.a.Finish(0, false)
	p.b.Finish(0, false)
	p.check(t, "finished", 0)
	checkTicks(t, p)
	if p.ca.reads*5 > p.cb.reads {
		t.Errorf("clock readings: sampled %d, reference %d", p.ca.reads, p.cb.reads)
	}
}

// The first token is always read from the clock, also after sampled
// deltas of the previous request.
func TestSampledClockFirstTokenRead(t *testing.T) {
	c := &countingClock{t: t0}
	tp := NewThroughput(c.now, false)
	for req := range 3 {
		tp.Begin()
		c.t = c.t.Add(time.Duration(req+1) * 100 * time.Millisecond)
		for range 1000 {
			tp.Delta("text_delta", "tok ")
			c.t = c.t.Add(time.Microsecond)
		}
		tp.Finish(0, false)
		if s := tp.Snapshot(); *s.Last.TTFTMs != int64(req+1)*100 {
			t.Fatalf("request %d: ttft %d", req, *s.Last.TTFTMs)
		}
	}
}

// BenchmarkThroughputDeltaUnsampled is BenchmarkThroughputDelta reading
// the clock on every delta, as before the sampling (for comparison).
func BenchmarkThroughputDeltaUnsampled(b *testing.B) {
	tp := NewThroughput(nil, true)
	tp.smp.off = true
	tp.Begin()
	b.ReportAllocs()
	for b.Loop() {
		tp.Delta("text_delta", "tok ")
	}
}

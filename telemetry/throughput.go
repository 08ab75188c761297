package telemetry

import (
	"math"
	"sync"
	"time"
	"unicode/utf8"
)

// TickInterval is the minimum gap between two telemetry_tick events of a
// session (at most 2 Hz).
const TickInterval = 500 * time.Millisecond

// liveWindow is the span of the live tokens/s estimate; liveMinSpan the
// shortest span it is computed over.
const (
	liveWindow  = 2 * time.Second
	liveMinSpan = 250 * time.Millisecond
	// bucketWidth is the resolution of the live window: deltas are summed
	// per 100 ms bucket, so the window costs a fixed array, not a slice of
	// samples that grows with the reply.
	bucketWidth = 100 * time.Millisecond
	buckets     = int(liveWindow / bucketWidth)
)

// Clock sampling: Delta does not read the clock for every delta. After
// the first token of a request, while deltas come faster than one per
// sampleResolution, it reads the clock on every stride-th delta and stamps
// the deltas in between with the latest reading; stride doubles (up to
// maxStride) while readings are less than half a resolution apart and
// falls back to 1 as soon as two readings are a resolution or more apart.
// A stamp is thus at most about one resolution old in a steady stream; in
// a stream whose deltas are 1 ms or more apart every delta reads the
// clock, as before. After a fast burst followed by a pause, at most
// maxStride-1 deltas are stamped with the reading before the pause.
//
// The resolution is 1 ms, the unit of every time telemetry reports
// (requestAt, firstTokenAt, doneAt, ttftMs and elapsedMs are whole
// milliseconds, and those are always read from the clock: the first token,
// Finish and Snapshot never use a stamp). Stamps only place deltas into
// the 100 ms buckets of the live tokens/s and decide the 500 ms ticks, so
// a stamp 1 ms old moves at most the tokens of the last millisecond
// between two buckets (live tps changes by under 1/2000 of its value, the
// 2 s window) and delays a tick by under 1 ms. At 3 deltas per µs (the
// fake provider) stride 64 means one reading per 64 deltas.
const (
	sampleResolution = time.Millisecond
	maxStride        = 64
)

// RequestTelemetry is SessionStats.telemetry.last (epoch ms).
type RequestTelemetry struct {
	RequestAt    int64    `json:"requestAt"`
	FirstTokenAt *int64   `json:"firstTokenAt,omitempty"`
	TTFTMs       *int64   `json:"ttftMs,omitempty"`
	DoneAt       *int64   `json:"doneAt,omitempty"`
	OutputTokens *int     `json:"outputTokens,omitempty"`
	TPS          *float64 `json:"tps,omitempty"`
}

// Live is SessionStats.telemetry.live: the request streaming now.
type Live struct {
	TPS          float64 `json:"tps"`
	OutputTokens int     `json:"outputTokens"`
	ElapsedMs    int64   `json:"elapsedMs"`
}

// SessionTelemetry is SessionStats.telemetry.
type SessionTelemetry struct {
	SessionStartedAt int64             `json:"sessionStartedAt"`
	Last             *RequestTelemetry `json:"last,omitempty"`
	Live             *Live             `json:"live,omitempty"`
	AvgTPS           *float64          `json:"avgTps,omitempty"`
}

// Throughput measures the turn requests of one session. Begin, Delta and
// Finish are called by the goroutine that streams; Snapshot from anywhere.
//
// Times are kept as offsets from the session's start: without an injected
// clock they come from the monotonic clock alone (time.Since), which costs
// about half of a time.Now reading. Delta samples the clock (see
// sampleResolution).
type Throughput struct {
	now       func() time.Time // nil: monotonic offsets from startedAt
	animation bool

	mu        sync.Mutex
	startedAt time.Time
	lastTick  time.Duration // offset of the last tick (-1: none yet)
	cur       *inflight
	last      RequestTelemetry
	hasLast   bool
	sumOut    int
	sumGen    time.Duration
	smp       sampler
}

// sampler is the clock sampling state of the current request (under mu).
type sampler struct {
	first  bool          // the first token has its reading
	at     time.Duration // the latest reading
	stride int           // deltas per reading (0 or 1: every delta)
	left   int           // deltas still stamped with at
	off    bool          // read on every delta (tests: the unsampled reference)
}

// reading records a clock reading now and sets the next stride.
func (s *sampler) reading(now time.Duration) {
	if s.first && !s.off {
		switch gap := now - s.at; {
		case gap >= sampleResolution:
			s.stride = 1
		case 2*gap < sampleResolution:
			s.stride = min(2*max(s.stride, 1), maxStride)
		}
	}
	s.at = now
	s.left = max(s.stride, 1) - 1
}

// noTime marks an offset not reached yet.
const noTime = time.Duration(-1 << 63)

type inflight struct {
	requestAt, firstAt time.Duration // offsets; firstAt noTime before the first token
	estimate           float64
	bucket             [buckets]float64
	bucketAt           [buckets]int64 // bucket number each slot holds
}

// NewThroughput starts the telemetry of a session opened now. now is the
// clock (nil: the wall clock, read monotonically). animation false
// (ui.animation:false) turns telemetry_tick off; the numbers are still
// kept.
func NewThroughput(now func() time.Time, animation bool) *Throughput {
	t := &Throughput{now: now, animation: animation, lastTick: noTime}
	if now != nil {
		t.startedAt = now()
	} else {
		t.startedAt = time.Now()
	}
	return t
}

// elapsed is the offset of now from the session's start.
func (t *Throughput) elapsed() time.Duration {
	if t.now != nil {
		return t.now().Sub(t.startedAt)
	}
	return time.Since(t.startedAt)
}

// ms is the epoch-ms time of an offset.
func (t *Throughput) ms(d time.Duration) int64 { return t.startedAt.Add(d).UnixMilli() }

// Begin starts a turn request sent now.
func (t *Throughput) Begin() {
	at := t.elapsed()
	t.mu.Lock()
	t.cur = &inflight{requestAt: at, firstAt: noTime}
	t.smp = sampler{off: t.smp.off}
	t.mu.Unlock()
}

// FirstToken reports whether an event of type typ is the first token of a
// reply: text or thinking deltas and the start of a tool call.
func FirstToken(typ string) bool {
	return typ == "text_delta" || typ == "thinking_delta" || typ == "toolcall_start"
}

// Delta observes one stream event of the current request (typ is the
// event type, text its delta or, for toolcall_start, the tool name). It
// reports whether a telemetry_tick is due: the request has streamed for at
// least TickInterval since its first token or the session's previous tick.
func (t *Throughput) Delta(typ, text string) (tick bool) {
	counted := typ == "text_delta" || typ == "thinking_delta" || typ == "toolcall_delta" || typ == "toolcall_start"
	if !counted {
		return false
	}
	n := EstimateTokens(text)
	t.mu.Lock()
	c := t.cur
	var now time.Duration
	if c != nil && t.smp.left > 0 {
		t.smp.left--
		now = t.smp.at
	} else {
		now = t.elapsed()
		t.smp.reading(now)
	}
	if c == nil {
		t.mu.Unlock()
		return false
	}
	if c.firstAt == noTime && FirstToken(typ) {
		c.firstAt = now
		t.smp.first = true
	}
	if c.firstAt == noTime || text == "" { // empty deltas neither count nor tick
		t.mu.Unlock()
		return false
	}
	c.estimate += n
	b := int64((now - c.firstAt) / bucketWidth)
	slot := int(b % int64(buckets))
	if c.bucketAt[slot] != b {
		c.bucketAt[slot], c.bucket[slot] = b, 0
	}
	c.bucket[slot] += n
	if t.animation {
		ref := max(t.lastTick, c.firstAt)
		if now-ref >= TickInterval {
			t.lastTick, tick = now, true
		}
	}
	t.mu.Unlock()
	return tick
}

// Finish ends the current request: outputTokens is the provider's count
// (0: use the estimate); failed requests (stop reason error; aborted ones
// still count, as in ama) are kept as last but not in the average.
func (t *Throughput) Finish(outputTokens int, failed bool) {
	now := t.elapsed()
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.cur
	t.cur = nil
	if c == nil {
		return
	}
	out := outputTokens
	if out <= 0 {
		out = int(math.Round(c.estimate))
	}
	r := RequestTelemetry{RequestAt: t.ms(c.requestAt)}
	done := t.ms(now)
	r.DoneAt = &done
	r.OutputTokens = &out
	if c.firstAt != noTime {
		first := t.ms(c.firstAt)
		ttft := first - r.RequestAt
		r.FirstTokenAt, r.TTFTMs = &first, &ttft
		gen := now - c.firstAt
		// Requests that generated for less than 250 ms get no tps and stay
		// out of the average (the newest ama docs; see README "Telemetry").
		if gen >= liveMinSpan {
			tps := float64(out) / gen.Seconds()
			r.TPS = &tps
			if !failed {
				t.sumOut += out
				t.sumGen += gen
			}
		}
	}
	t.last, t.hasLast = r, true
}

// Snapshot returns SessionStats.telemetry now.
func (t *Throughput) Snapshot() SessionTelemetry {
	now := t.elapsed()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := SessionTelemetry{SessionStartedAt: t.startedAt.UnixMilli()}
	if c := t.cur; c != nil && c.firstAt != noTime {
		first := t.ms(c.firstAt)
		ttft := first - t.ms(c.requestAt)
		out.Last = &RequestTelemetry{RequestAt: t.ms(c.requestAt), FirstTokenAt: &first, TTFTMs: &ttft}
		elapsed := now - c.firstAt
		live := &Live{OutputTokens: int(math.Round(c.estimate)), ElapsedMs: elapsed.Milliseconds()}
		span := min(elapsed, liveWindow)
		if span >= liveMinSpan {
			cur := int64(elapsed / bucketWidth)
			sum := 0.0
			for i := range buckets {
				if b := c.bucketAt[i]; b > cur-int64(buckets) && b <= cur {
					sum += c.bucket[i]
				}
			}
			live.TPS = sum / span.Seconds()
		}
		out.Live = live
	} else if t.hasLast {
		l := t.last
		out.Last = &l
	}
	if t.sumGen > 0 {
		avg := float64(t.sumOut) / t.sumGen.Seconds()
		out.AvgTPS = &avg
	}
	return out
}

// EstimateTokens estimates the tokens of streamed text: CJK ideographs,
// kana, hangul and full-width forms count one per character, everything
// else a quarter.
func EstimateTokens(s string) float64 {
	// Counted in quarters (an integer: no chain of float additions per
	// byte); every sum of quarters below 2^53 is exact in a float64.
	q := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			q++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case wide(r):
			q += 4
		case r > 0xFFFF:
			q += 2 // ama counts UTF-16 code units: a surrogate pair is two quarters
		default:
			q++
		}
	}
	return float64(q) / 4
}

// wide reports the characters counted one token each (ama's ranges): CJK
// symbols, kana, hangul (jamo, compatibility, syllables), CJK ideographs
// (ext A, unified, compatibility, and the supplementary plane U+20000–
// U+2FFFF, whose surrogate pairs start U+D840–U+D87F) and full-width forms.
func wide(r rune) bool {
	switch {
	case r >= 0x1100 && r <= 0x11FF,
		r >= 0x3000 && r <= 0x30FF,
		r >= 0x3130 && r <= 0x318F,
		r >= 0x31F0 && r <= 0x31FF,
		r >= 0x3400 && r <= 0x4DBF,
		r >= 0x4E00 && r <= 0x9FFF,
		r >= 0xAC00 && r <= 0xD7AF,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0xFF00 && r <= 0xFFEF,
		r >= 0x20000 && r <= 0x2FFFF:
		return true
	}
	return false
}

package telemetry

import (
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// Warming modes, states and phases.
const (
	ModeOff       = "off"
	ModeStreaming = "streaming"
	ModeIdle      = "idle"

	StateInactive  = "inactive"
	StateScheduled = "scheduled"
	StateStopped   = "stopped"
)

// Stop reasons of warming.
const (
	StopOff             = "off"
	StopRetentionNone   = "retention_none"
	StopReportingUnk    = "reporting_unknown"
	StopReportingSilent = "reporting_silent"
	StopNoTTL           = "no_ttl"
	StopNoPrice         = "no_price"
	StopBelowMinSavings = "below_min_savings"
	StopTTLTooShort     = "ttl_too_short"
	StopMaxDuration     = "max_duration"
	StopLate            = "late"
	StopStale           = "stale"
	StopDeclined        = "declined"
	StopError           = "error"
	StopNoCacheHits     = "no_cache_hits"
)

// DefaultMinSavingsUsd is cache.minSavingsUsd.
const DefaultMinSavingsUsd = 0.05

// Phase caps measured from the first real request of the chain.
const (
	streamingCap = 60 * time.Minute
	idleCap      = 30 * time.Minute
)

// WarmDecision is the built-in economics of one warm.
type WarmDecision struct {
	Action       string   `json:"action"` // "warm" or "stop"
	Phase        string   `json:"phase"`
	PromptTokens int      `json:"promptTokens"`
	WarmCost     *float64 `json:"warmCost,omitempty"`
	MissCost     *float64 `json:"missCost,omitempty"`
	Probability  float64  `json:"probability"`
	Reason       string   `json:"reason,omitempty"`
}

// Decide applies the cost rule: warm iff probability × missCost − warmCost
// ≥ minSavings (probability 1 while streaming, 0.15 idle).
func Decide(phase string, promptTokens int, p llm.Prices, minSavings float64) WarmDecision {
	d := WarmDecision{Phase: phase, PromptTokens: promptTokens, Probability: 1}
	if phase == ModeIdle {
		d.Probability = 0.15
	}
	if p.Input == 0 && p.CacheWrite == 0 {
		d.Action, d.Reason = "stop", StopNoPrice
		return d
	}
	price := func(u llm.Usage) float64 { u.Finalize(p); return u.Cost.Total }
	warm := price(llm.Usage{CacheRead: promptTokens, Output: 1})
	full := llm.Usage{Input: promptTokens}
	if p.CacheWrite > 0 {
		full = llm.Usage{CacheWrite: promptTokens}
	}
	miss := price(full) - price(llm.Usage{CacheRead: promptTokens})
	d.WarmCost, d.MissCost = &warm, &miss
	if d.Probability*miss-warm >= minSavings {
		d.Action = "warm"
	} else {
		d.Action, d.Reason = "stop", StopBelowMinSavings
	}
	return d
}

// Savings is probability × missCost − warmCost (nil when unpriced).
func (d WarmDecision) Savings() *float64 {
	if d.WarmCost == nil || d.MissCost == nil {
		return nil
	}
	v := d.Probability**d.MissCost - *d.WarmCost
	return &v
}

// WarmingDecider is the host veto (cache.onWarmingDecision): it sees the
// built-in decision and returns "warm" or "stop"; any other answer keeps
// the built-in one. A decider that also has Active() bool (a host adapter,
// whose handler may come and go) counts only while Active is true.
type WarmingDecider interface {
	DecideWarm(d WarmDecision) string
}

// deciding reports whether d takes warming decisions now.
func deciding(d WarmingDecider) bool {
	if d == nil {
		return false
	}
	if a, ok := d.(interface{ Active() bool }); ok {
		return a.Active()
	}
	return true
}

// WarmSchedule returns the delay after the base send time and the deadline
// offset: delay = max(1 s, min(0.9 TTL, TTL − 10 s)), deadline = delay +
// (TTL − delay)/2.
func WarmSchedule(ttl time.Duration) (delay, deadline time.Duration) {
	delay = max(time.Second, min(ttl*9/10, ttl-10*time.Second))
	delay = delay.Truncate(time.Millisecond)
	return delay, delay + (ttl-delay)/2
}

// WarmStatus is SessionStats.cache.warming.
type WarmStatus struct {
	Mode               string   `json:"mode"`
	State              string   `json:"state"`
	Phase              string   `json:"phase,omitempty"`
	NextWarmAt         *int64   `json:"nextWarmAt,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	Sent               int      `json:"sent,omitempty"`
	CostUsd            *float64 `json:"costUsd,omitempty"`
	ExpectedSavingsUsd *float64 `json:"expectedSavingsUsd,omitempty"`
}

// WarmEvent is a cache_warm event: phase scheduled (NextWarmAt), sent
// (Usage, Cost) or stopped (Reason).
type WarmEvent struct {
	Phase      string
	NextWarmAt int64
	Usage      *llm.Usage
	Cost       *float64
	Reason     string
}

// WarmInput is what Schedule needs about the session's model.
type WarmInput struct {
	TTL           time.Duration // 0: the model declares no prompt-cache TTL
	Retention     string        // none, short, long
	State         string        // reporting state of the endpoint
	Prices        llm.Prices
	MinSavingsUsd float64
	// Blocked is a precondition the caller checked (payload_replaced,
	// thinking_budget); "" when none.
	Blocked string
}

// Warmer is the warming state machine of one session. The session owns
// the timer: it arms one for Next() after a scheduled event and calls Fire
// when it expires.
type Warmer struct {
	Mode    string
	Decider WarmingDecider

	state, phase, reason string
	next, deadline       time.Time
	origin               time.Time // first real request of the chain
	base                 *Record
	in                   WarmInput
	sent                 int
	costUsd              float64
	expected             *float64
	zeroHits             int
}

// NewWarmer returns a warmer in mode (off, streaming, idle).
func NewWarmer(mode string) *Warmer {
	if mode == "" {
		mode = ModeStreaming
	}
	return &Warmer{Mode: mode, state: StateInactive}
}

// Pause is a new real request: warming is inactive until Schedule.
func (w *Warmer) Pause() {
	if w.state == StateScheduled {
		w.state = StateInactive
	}
}

// Reset is a reset point (compaction, model change…): inactive, and the
// phase cap restarts with the next chain.
func (w *Warmer) Reset() {
	w.state, w.reason, w.base, w.origin, w.zeroHits = StateInactive, "", nil, time.Time{}, 0
}

// Settled is agent_settled: in streaming mode warming ends silently; in
// idle mode the phase switches to idle and the timer continues.
func (w *Warmer) Settled() {
	if w.Mode == ModeIdle {
		w.phase = ModeIdle
		return
	}
	if w.state == StateScheduled {
		w.state = StateInactive
	}
}

// Schedule runs after each completed turn record. It returns the
// cache_warm{scheduled} event, or nil when warming is off or blocked
// (blocked reasons are only visible in Status).
func (w *Warmer) Schedule(rec *Record, in WarmInput) *WarmEvent {
	if w.origin.IsZero() {
		w.origin = rec.At
	}
	w.in, w.phase = in, ModeStreaming
	block := func(reason string) *WarmEvent {
		w.state, w.reason, w.next = StateStopped, reason, time.Time{}
		return nil
	}
	switch {
	case w.Mode == ModeOff:
		w.state, w.reason = StateInactive, ""
		return nil
	case in.Retention == "none":
		return block(StopRetentionNone)
	case in.Blocked != "":
		return block(in.Blocked)
	case in.State == Unknown:
		return block(StopReportingUnk)
	case in.State == Silent:
		return block(StopReportingSilent)
	case in.TTL <= 0:
		return block(StopNoTTL)
	}
	d := Decide(ModeStreaming, rec.PromptTokens(), in.Prices, w.minSavings())
	w.expected = d.Savings()
	if !deciding(w.Decider) && d.Action == "stop" {
		return block(d.Reason)
	}
	if in.TTL <= 10*time.Second {
		return block(StopTTLTooShort)
	}
	w.base = rec
	return w.arm(rec.At)
}

func (w *Warmer) minSavings() float64 {
	if w.in.MinSavingsUsd > 0 {
		return w.in.MinSavingsUsd
	}
	return DefaultMinSavingsUsd
}

func (w *Warmer) cap() time.Duration {
	if w.phase == ModeIdle {
		return idleCap
	}
	return streamingCap
}

func (w *Warmer) arm(base time.Time) *WarmEvent {
	delay, deadline := WarmSchedule(w.in.TTL)
	next := base.Add(delay)
	if next.Sub(w.origin) > w.cap() {
		return w.stop(StopMaxDuration)
	}
	w.state, w.reason, w.next, w.deadline = StateScheduled, "", next, base.Add(deadline)
	return &WarmEvent{Phase: StateScheduled, NextWarmAt: next.UnixMilli()}
}

func (w *Warmer) stop(reason string) *WarmEvent {
	w.state, w.reason, w.next = StateStopped, reason, time.Time{}
	return &WarmEvent{Phase: StateStopped, Reason: reason}
}

// Next is when the timer should fire (ok false: nothing scheduled).
func (w *Warmer) Next() (time.Time, bool) {
	return w.next, w.state == StateScheduled
}

// Fire runs the checks of an expired timer. current says the base record
// still matches the session (model, thinking level, tools, transcript
// prefix). It returns the record to replay (nil: no warm) and a stopped
// event when warming ended.
func (w *Warmer) Fire(now time.Time, current bool) (*Record, *WarmEvent) {
	if w.state != StateScheduled {
		return nil, nil
	}
	switch {
	case now.After(w.deadline):
		return nil, w.stop(StopLate)
	case w.Mode == ModeOff || (w.phase == ModeIdle && w.Mode != ModeIdle):
		return nil, w.stop(StopOff)
	case now.Sub(w.origin) > w.cap():
		return nil, w.stop(StopMaxDuration)
	case !current:
		return nil, w.stop(StopStale)
	}
	d := Decide(w.phase, w.base.PromptTokens(), w.in.Prices, w.minSavings())
	w.expected = d.Savings()
	action := d.Action
	if deciding(w.Decider) {
		switch h := w.Decider.DecideWarm(d); h {
		case "warm", "stop":
			action = h
		}
	}
	if action != "warm" {
		reason := d.Reason
		if d.Action == "warm" {
			reason = StopDeclined
		}
		return nil, w.stop(reason)
	}
	return w.base, nil
}

// Sent accounts a successful warm (rec is its record, sent at rec.At) and
// returns the sent event and then either the next scheduled or a stopped
// event.
func (w *Warmer) Sent(rec *Record) (sent, next *WarmEvent) {
	w.sent++
	u := rec.Usage
	sent = &WarmEvent{Phase: "sent", Usage: &u}
	if u.Cost != nil {
		c := u.Cost.Total
		w.costUsd += c
		sent.Cost = &c
	}
	if rec.cacheTouched() {
		w.zeroHits = 0
	} else {
		w.zeroHits++
	}
	if w.zeroHits >= 2 {
		return sent, w.stop(StopNoCacheHits)
	}
	w.base = &Record{At: rec.At, Purpose: w.base.Purpose, Endpoint: w.base.Endpoint, Print: w.base.Print,
		Usage: w.base.Usage, NoCacheField: w.base.NoCacheField}
	return sent, w.arm(rec.At)
}

// Failed ends warming after a warm request failed.
func (w *Warmer) Failed() *WarmEvent { return w.stop(StopError) }

// Status is SessionStats.cache.warming.
func (w *Warmer) Status() WarmStatus {
	s := WarmStatus{Mode: w.Mode, State: w.state, Reason: w.reason, Sent: w.sent, ExpectedSavingsUsd: w.expected}
	if w.state == StateScheduled {
		s.Phase = w.phase
		n := w.next.UnixMilli()
		s.NextWarmAt = &n
	}
	if w.sent > 0 {
		c := w.costUsd
		s.CostUsd = &c
	}
	return s
}

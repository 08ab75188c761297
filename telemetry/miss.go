package telemetry

import (
	"math"
	"time"
)

// Miss reasons.
const (
	ReasonPrefixChanged = "prefix_changed"
	ReasonModelChanged  = "model_changed"
	ReasonIdle          = "idle"
	ReasonSubtask       = "subtask"
	ReasonEvicted       = "evicted"
)

// Miss is a prefix that should have been cached but was billed again.
type Miss struct {
	MissedTokens int
	Reason       string
	Detail       string // prefix_changed only: "system" or "tools"
	IdleMs       int64
	MissedCost   *float64 // nil: the request had no cost
}

// MissInput is what DetectMiss compares.
type MissInput struct {
	Prev, Cur *Record // Prev nil after a reset point
	TTL       time.Duration
	State     string // reporting state of Cur's endpoint
	MinTokens int
	// Granularity raises the noise floor (0: unknown).
	Granularity int
	// SubtaskMs is the time a task tool ran between the two requests.
	SubtaskMs int64
	// CacheReadPrice is the catalog price per million cache-read tokens.
	CacheReadPrice float64
}

// bigMiss is always a miss, whatever the ratio.
const bigMiss = 20000

// DetectMiss returns the miss between two consecutive turn records, or nil.
func DetectMiss(in MissInput) *Miss {
	prev, cur := in.Prev, in.Cur
	minTokens := in.MinTokens
	if minTokens <= 0 {
		minTokens = DefaultMinTokens
	}
	if prev == nil || cur.PromptTokens() <= 0 {
		return nil
	}
	if !cur.cacheTouched() && in.State != Reported {
		return nil
	}
	if prev.PromptTokens() < minTokens {
		return nil
	}
	missed := min(prev.PromptTokens(), cur.PromptTokens()) - cur.Usage.CacheRead
	if missed <= NoiseFloor(minTokens, in.Granularity) {
		return nil
	}
	ratio := float64(missed) / float64(prev.PromptTokens())
	threshold := min(max(0.10*math.Sqrt(100000/float64(prev.PromptTokens())), 0.02), 0.30)
	if ratio <= threshold && missed < bigMiss {
		return nil
	}
	idle := max(cur.At.Sub(prev.At), 0)
	m := &Miss{MissedTokens: missed, IdleMs: idle.Milliseconds(), MissedCost: missedCost(cur, missed, in.CacheReadPrice)}
	ttl := in.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	switch {
	case prev.Print.System != cur.Print.System:
		m.Reason, m.Detail = ReasonPrefixChanged, "system"
	case prev.Print.Tools != cur.Print.Tools:
		m.Reason, m.Detail = ReasonPrefixChanged, "tools"
	case prev.Print.Model != cur.Print.Model:
		m.Reason = ReasonModelChanged
	case idle > ttl:
		m.Reason = ReasonIdle
	case idle > 0 && float64(in.SubtaskMs) >= 0.8*float64(idle.Milliseconds()):
		m.Reason = ReasonSubtask
	default:
		m.Reason = ReasonEvicted
	}
	return m
}

// NoiseFloor is the largest miss that is not counted: max(1024, minTokens,
// granularity).
func NoiseFloor(minTokens, granularity int) int {
	return max(1024, minTokens, granularity)
}

func missedCost(cur *Record, missed int, catalogRead float64) *float64 {
	c := cur.Usage.Cost
	if c == nil {
		return nil
	}
	zero := 0.0
	paid := cur.Usage.Input + cur.Usage.CacheWrite
	if paid <= 0 {
		return &zero
	}
	paidPer := (c.Input + c.CacheWrite) / float64(paid)
	var readPer float64
	switch {
	case cur.Usage.CacheRead > 0:
		readPer = c.CacheRead / float64(cur.Usage.CacheRead)
	case catalogRead > 0:
		readPer = catalogRead / 1e6
	default:
		return nil
	}
	v := float64(missed) * max(0, paidPer-readPer)
	return &v
}

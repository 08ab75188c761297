package telemetry

import (
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// Endpoint describes the model a record was made with, as the catalog and
// config know it.
type Endpoint struct {
	Key string
	// Override is compat.cacheReporting ("", auto, silent, reported).
	Override  string
	MinTokens int
	// TTL is the catalog prompt-cache TTL for the retention in use (0:
	// none).
	TTL    time.Duration
	Prices llm.Prices
}

// Misses is SessionStats.cache.misses.
type Misses struct {
	Count    int            `json:"count"`
	ByReason map[string]int `json:"byReason"`
}

// CacheStats is SessionStats.cache. The key order is the one ama's
// controller builds (the always-present fields, then the optional ones),
// not the order of its RPC docs' example.
type CacheStats struct {
	Reporting              string     `json:"reporting"`
	ReBilledTokens         int        `json:"reBilledTokens"`
	Misses                 Misses     `json:"misses"`
	Warming                WarmStatus `json:"warming"`
	LastHitRate            *float64   `json:"lastHitRate,omitempty"`
	HitRate                *float64   `json:"hitRate,omitempty"`
	ReBilledUsd            *float64   `json:"reBilledUsd,omitempty"`
	ContextRemainingTokens *int       `json:"contextRemainingTokens,omitempty"`
	EstimatedTurnsLeft     *int       `json:"estimatedTurnsLeft,omitempty"`
	Subagents              *Subagents `json:"subagents,omitempty"`
	Granularity            *int       `json:"granularity,omitempty"`
}

// Subagents sums the cache accounting of the session's task sub-sessions.
type Subagents struct {
	Count          int      `json:"count"`
	HitRate        *float64 `json:"hitRate,omitempty"`
	ReBilledTokens int      `json:"reBilledTokens"`
}

// Cache is the cache accounting of one session.
type Cache struct {
	rep  *Reporting
	Warm *Warmer

	prev     *Record            // previous record of the turn chain (nil after a reset)
	lastTurn *Record            // likewise, for the growth samples
	last     *Record            // the last turn record (lastHitRate)
	sums     map[string]*hitSum // by endpoint
	growth   []int

	subagents      struct{ count, read, prompt, reBilled int }
	misses         Misses
	reBilledTokens int
	reBilledUsd    float64
	unpriced       bool
}

type hitSum struct{ read, prompt int }

// NewCache returns the accounting of a session that reports to rep
// (Process when nil) and warms in mode.
func NewCache(rep *Reporting, mode string) *Cache {
	if rep == nil {
		rep = Process
	}
	return &Cache{rep: rep, Warm: NewWarmer(mode), sums: map[string]*hitSum{},
		misses: Misses{ByReason: map[string]int{}}}
}

// Reset is a reset point: the next turn request is not compared (neither
// for a miss nor for the context growth).
func (c *Cache) Reset() {
	c.prev, c.lastTurn = nil, nil
	c.Warm.Reset()
}

// Observe accounts a completed request. Turn records are compared with the
// previous one of the chain; a detected miss is returned (it is already
// counted). Other purposes only feed the reporting state and hit rates;
// warm records also become the chain's previous record.
func (c *Cache) Observe(r Record, ep Endpoint, subtaskMs int64) *Miss {
	c.rep.Observe(r, ep.MinTokens, ep.TTL)
	s := c.sums[r.Endpoint]
	if s == nil {
		s = &hitSum{}
		c.sums[r.Endpoint] = s
	}
	s.read += r.Usage.CacheRead
	s.prompt += r.PromptTokens()
	rec := r
	switch r.Purpose {
	case PurposeWarm:
		if c.prev != nil {
			c.prev = &rec
		}
		return nil
	case llm.PurposeTurn:
	default:
		return nil
	}
	if c.lastTurn != nil {
		if g := rec.PromptTokens() - c.lastTurn.PromptTokens(); g > 0 {
			c.growth = append(c.growth, g)
			if len(c.growth) > 5 {
				c.growth = c.growth[1:]
			}
		}
	}
	c.lastTurn, c.last = &rec, &rec
	m := DetectMiss(MissInput{Prev: c.prev, Cur: &rec, TTL: ep.TTL, State: c.rep.State(r.Endpoint, ep.Override),
		MinTokens: ep.MinTokens, Granularity: c.rep.Granularity(r.Endpoint), SubtaskMs: subtaskMs,
		CacheReadPrice: ep.Prices.CacheRead})
	c.prev = &rec
	if m == nil {
		return nil
	}
	c.misses.Count++
	c.misses.ByReason[m.Reason]++
	c.reBilledTokens += m.MissedTokens
	if m.MissedCost == nil {
		c.unpriced = true
	} else {
		c.reBilledUsd += *m.MissedCost
	}
	return m
}

// AddSubagent adds a finished task sub-session: its cache reads and prompt
// tokens on reported endpoints and its re-billed tokens (each sub-session
// keeps its own Cache; the parent only sums).
func (c *Cache) AddSubagent(cacheRead, prompt, reBilledTokens int) {
	c.subagents.count++
	c.AddSubagentRun(cacheRead, prompt, reBilledTokens)
}

// AddSubagentRun adds a later run of a sub-session already counted (a
// task continued with task_ctl): its tokens, not another count.
func (c *Cache) AddSubagentRun(cacheRead, prompt, reBilledTokens int) {
	c.subagents.read += cacheRead
	c.subagents.prompt += prompt
	c.subagents.reBilled += reBilledTokens
}

// Totals are a session's cache reads and prompt tokens on reported
// endpoints (what a parent passes to AddSubagent) and its re-billed tokens.
func (c *Cache) Totals() (cacheRead, prompt, reBilledTokens int) {
	for key, s := range c.sums {
		if c.rep.State(key, "") == Reported {
			cacheRead += s.read
			prompt += s.prompt
		}
	}
	return cacheRead, prompt, c.reBilledTokens
}

// Last is the last turn record (nil: none yet).
func (c *Cache) Last() *Record { return c.last }

// TurnsLeft is floor(remaining / average prompt growth of the last five
// turns), nil without growth samples.
func (c *Cache) TurnsLeft(remaining int) *int {
	if len(c.growth) == 0 {
		return nil
	}
	sum := 0
	for _, g := range c.growth {
		sum += g
	}
	n := remaining * len(c.growth) / sum
	return &n
}

// Stats returns SessionStats.cache for the session's current endpoint.
// contextTokens and window are the session's context estimate (0: unknown).
func (c *Cache) Stats(ep Endpoint, contextTokens, window int) CacheStats {
	st := c.rep.State(ep.Key, ep.Override)
	out := CacheStats{Reporting: st, ReBilledTokens: c.reBilledTokens, Warming: c.Warm.Status(),
		Misses: Misses{Count: c.misses.Count, ByReason: map[string]int{}}}
	for k, v := range c.misses.ByReason {
		out.Misses.ByReason[k] = v
	}
	if st == Reported && c.last != nil && c.last.PromptTokens() > 0 {
		v := float64(c.last.Usage.CacheRead) / float64(c.last.PromptTokens())
		out.LastHitRate = &v
	}
	read, prompt, _ := c.Totals()
	if prompt > 0 {
		v := float64(read) / float64(prompt)
		out.HitRate = &v
	}
	if !c.unpriced {
		v := c.reBilledUsd
		out.ReBilledUsd = &v
	}
	if window > 0 && contextTokens > 0 {
		rem := max(0, window-contextTokens)
		out.ContextRemainingTokens = &rem
		out.EstimatedTurnsLeft = c.TurnsLeft(rem)
	}
	if sa := c.subagents; sa.count > 0 {
		out.Subagents = &Subagents{Count: sa.count, ReBilledTokens: sa.reBilled}
		if sa.prompt > 0 {
			v := float64(sa.read) / float64(sa.prompt)
			out.Subagents.HitRate = &v
		}
	}
	if g := c.rep.Granularity(ep.Key); g > 0 {
		out.Granularity = &g
	}
	return out
}

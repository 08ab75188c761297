package session

import (
	"context"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/telemetry"
)

// Cache and throughput accounting of the session (package telemetry does
// the arithmetic; this file feeds it and turns its results into events).
// Records are timed with the request timestamps of the session clock
// (Deps.Now), so miss idle times and warm schedules are deterministic
// under a test clock; throughput uses Deps.Clock, a wall clock read on
// streamed deltas (sampled while they come faster than one per
// millisecond; telemetry.Throughput documents the resolution).

// warmState is the session's part of cache warming: the timer and the
// snapshot of the last turn request, replayed by a warm.
type warmState struct {
	stop   func() bool // stops the armed timer (nil: none)
	gen    int         // bumped whenever the timer is re-armed or cancelled
	req    *llm.Request
	entry  *llm.ProviderEntry
	busy   bool               // a warm request is in flight
	cancel context.CancelFunc // aborts it
}

func (s *Session) clock() time.Time {
	if c := s.deps.Clock; c != nil {
		return c()
	}
	return time.Now()
}

// endpointOf describes m's endpoint for the cache accounting.
func (st *state) endpointOf(m *llm.Model, entry *llm.ProviderEntry) telemetry.Endpoint {
	if m == nil {
		return telemetry.Endpoint{}
	}
	base := ""
	if entry != nil {
		base = entry.BaseURL
	} else if p, err := st.s.deps.Models.Provider(m.Provider); err == nil {
		base = p.BaseURL
	}
	ep := telemetry.Endpoint{Key: telemetry.EndpointKey(m.Provider, base, m.ID, ""), Prices: m.Prices}
	if pc := m.PromptCache; pc != nil {
		ep.MinTokens = pc.MinTokens
		ttl := pc.Short
		if st.s.deps.Settings.CacheRetention == "long" && pc.Long > 0 {
			ttl = pc.Long
		}
		ep.TTL = time.Duration(ttl) * time.Second
	}
	return ep
}

// recordRequest accounts a completed model request (failed and aborted
// ones are not recorded). Turn requests are compared for misses
// (cache_miss) and (re)schedule warming (cache_warm).
func (st *state) recordRequest(req *llm.Request, entry *llm.ProviderEntry, msg *llm.AssistantMessage) {
	if req == nil || req.Model == nil || msg == nil || msg.Failed() {
		return
	}
	ep := st.endpointOf(req.Model, entry)
	rec := telemetry.Record{
		At: time.UnixMilli(req.Timestamp), Purpose: req.Purpose, Endpoint: ep.Key,
		Print: telemetry.FingerprintOf(req.System, req.Tools, req.Model.Ref()), Usage: msg.Usage,
		NoCacheField: msg.Usage.NoCacheField,
	}
	if rec.Purpose == "" {
		rec.Purpose = llm.PurposeTurn
	}
	var subtaskMs int64
	if rec.Purpose == llm.PurposeTurn {
		subtaskMs = st.takeSubtaskMs()
	}
	if m := st.cache.Observe(rec, ep, subtaskMs); m != nil {
		st.s.publish(events.CacheMiss{MissedTokens: m.MissedTokens, MissedCost: m.MissedCost, Reason: m.Reason,
			Detail: m.Detail, IdleMs: m.IdleMs})
	}
	if rec.Purpose != llm.PurposeTurn {
		return
	}
	st.warm.req, st.warm.entry = req, entry
	if entry == nil {
		st.warm.entry = st.provider
	}
	in := telemetry.WarmInput{TTL: ep.TTL, Retention: st.s.deps.Settings.CacheRetention,
		State: st.cacheReporting(ep), Prices: ep.Prices, MinSavingsUsd: st.s.deps.Settings.CacheMinSavingsUsd}
	last := st.cache.Last()
	st.publishWarm(st.cache.Warm.Schedule(last, in))
	st.armWarm()
}

func (st *state) cacheReporting(ep telemetry.Endpoint) string {
	return st.s.deps.reporting().State(ep.Key, ep.Override)
}

func (d *Deps) reporting() *telemetry.Reporting {
	if d.Reporting != nil {
		return d.Reporting
	}
	return telemetry.Process
}

func (st *state) publishWarm(ev *telemetry.WarmEvent) {
	if ev == nil {
		return
	}
	st.s.publish(events.CacheWarm{Phase: ev.Phase, NextWarmAt: ev.NextWarmAt, Usage: ev.Usage, Cost: ev.Cost, Reason: ev.Reason})
}

// pauseWarm is a new real request: the timer stops, warming is inactive
// until the request's record reschedules it.
func (st *state) pauseWarm() {
	st.cancelWarmTimer()
	st.cache.Warm.Pause()
}

// subtaskTool is the sub-agent tool whose wall time between two turn
// requests is attributed to cache misses (reason subtask).
const subtaskTool = "task"

// subtask accumulates the time during which at least one task tool call
// ran since the last turn request (session clock).
type subtask struct {
	running int
	since   time.Time
	total   time.Duration
}

// subtaskSpan marks a task tool call as running; the returned func ends it.
func (s *Session) subtaskSpan() func() {
	_ = s.do(func(st *state) {
		if st.sub.running == 0 {
			st.sub.since = st.now()
		}
		st.sub.running++
	})
	return func() {
		_ = s.do(func(st *state) {
			st.sub.running--
			if st.sub.running == 0 {
				st.sub.total += st.now().Sub(st.sub.since)
			}
		})
	}
}

// takeSubtaskMs returns the task time since the previous turn request and
// starts a new count.
func (st *state) takeSubtaskMs() int64 {
	d := st.sub.total
	if st.sub.running > 0 {
		now := st.now()
		d += now.Sub(st.sub.since)
		st.sub.since = now
	}
	st.sub.total = 0
	return d.Milliseconds()
}

// warmSettled is agent_settled: streaming-mode warming ends silently (the
// timer stops); in idle mode the phase becomes idle and the timer runs on.
func (st *state) warmSettled() {
	st.cache.Warm.Settled()
	if _, ok := st.cache.Warm.Next(); !ok {
		st.cancelWarmTimer()
	}
}

// resetCache is a reset point (compaction, branch summary, prune, model
// switch): the next turn request is not compared, warming stops silently.
func (st *state) resetCache() {
	st.cancelWarmTimer()
	st.cache.Reset()
}

func (st *state) cancelWarmTimer() {
	st.warm.gen++
	if st.warm.cancel != nil {
		st.warm.cancel()
		st.warm.cancel = nil
	}
	if st.warm.stop != nil {
		st.warm.stop()
		st.warm.stop = nil
	}
}

// armWarm starts the timer of a scheduled warm.
func (st *state) armWarm() {
	st.cancelWarmTimer()
	next, ok := st.cache.Warm.Next()
	if !ok {
		return
	}
	gen := st.warm.gen
	after := st.s.deps.AfterFunc
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	s := st.s
	st.warm.stop = after(next.Sub(st.now()), func() {
		_ = s.do(func(st *state) {
			if st.warm.gen == gen {
				st.warm.stop = nil
				st.fireWarm()
			}
		})
	})
}

// fireWarm runs on the actor when the warm timer expires: the warmer's
// checks, then the replay of the last turn request with a 1-token reply.
// The warm is auxiliary: its usage is a usage entry (kind cache_warm),
// never a transcript message.
func (st *state) fireWarm() {
	if st.warm.busy || st.warm.req == nil {
		return
	}
	replay, stop := st.cache.Warm.Fire(st.now(), st.warmCurrent())
	st.publishWarm(stop)
	if replay == nil {
		return
	}
	req := *st.warm.req
	req.MaxTokens, req.Purpose, req.Timestamp = 1, telemetry.PurposeWarm, st.nowMs()
	entry := st.warm.entry
	if entry == nil || entry.Provider == nil {
		st.publishWarm(st.cache.Warm.Failed())
		return
	}
	st.warm.busy = true
	ctx, cancel := context.WithCancel(context.Background())
	st.warm.cancel = cancel
	s, gen := st.s, st.warm.gen
	go func() { // the only goroutine of warming; it ends with the request
		defer cancel()
		msg, err := entry.Provider.Stream(ctx, &req, nil)
		_ = s.do(func(st *state) {
			st.warm.busy = false
			if gen != st.warm.gen { // a real request or reset came first
				return
			}
			if err != nil || msg == nil || msg.Failed() {
				st.publishWarm(st.cache.Warm.Failed())
				return
			}
			ep := st.endpointOf(req.Model, entry)
			rec := telemetry.Record{At: time.UnixMilli(req.Timestamp), Purpose: telemetry.PurposeWarm, Endpoint: ep.Key,
				Print: telemetry.FingerprintOf(req.System, req.Tools, req.Model.Ref()), Usage: msg.Usage}
			st.cache.Observe(rec, ep, 0)
			st.appendEntry(store.UsageEntry("cache_warm", req.Model.Provider, req.Model.ID, msg.Usage))
			sent, next := st.cache.Warm.Sent(&rec)
			st.publishWarm(sent)
			st.publishWarm(next)
			st.armWarm()
		})
	}()
}

// warmCurrent reports whether the snapshot to replay still matches the
// session: same model, thinking level and tools, and the transcript still
// starts with the snapshot's messages.
func (st *state) warmCurrent() bool {
	r := st.warm.req
	if r == nil || st.model == nil || r.Model.Ref() != st.model.Ref() || r.ThinkingLevel != st.thinkingLevel {
		return false
	}
	if telemetry.FingerprintOf("", st.activeDecls(), "").Tools != telemetry.FingerprintOf("", r.Tools, "").Tools {
		return false
	}
	msgs := st.context().messages
	if len(msgs) < len(r.Messages) {
		return false
	}
	for i, m := range r.Messages {
		if msgs[i] != m {
			return false
		}
	}
	return true
}

// resetPoint reports entries after which the next request is not
// compared for a cache miss.
func resetPoint(e *store.Entry) bool {
	switch e.Type {
	case store.TypeCompaction, store.TypeBranchSummary, store.TypeModelChange:
		return true
	case store.TypeContextEdit:
		var b struct {
			Reason string `json:"reason"`
		}
		return e.Decode(&b) == nil && b.Reason == "prune"
	}
	return false
}

// cacheStats is SessionStats.cache.
func (st *state) cacheStats(ctx *ContextUse) *telemetry.CacheStats {
	ep := st.endpointOf(st.model, nil)
	tokens, window := 0, 0
	if ctx != nil {
		tokens, window = ctx.Tokens, ctx.Window
	}
	cs := st.cache.Stats(ep, tokens, window)
	return &cs
}

// CacheTotals are the session's cache reads and prompt tokens on reported
// endpoints and its re-billed tokens: what a task child's parent sums
// into SessionStats.cache.subagents.
func (s *Session) CacheTotals() (cacheRead, prompt, reBilled int, err error) {
	err = s.do(func(st *state) { cacheRead, prompt, reBilled = st.cache.Totals() })
	return
}

// AddSubagentCache adds a finished child run's cache totals (see
// CacheTotals) to SessionStats.cache.subagents; first counts a new
// sub-session, later runs of the same child only add their tokens.
func (s *Session) AddSubagentCache(first bool, cacheRead, prompt, reBilled int) {
	_ = s.do(func(st *state) {
		if first {
			st.cache.AddSubagent(cacheRead, prompt, reBilled)
		} else {
			st.cache.AddSubagentRun(cacheRead, prompt, reBilled)
		}
	})
}

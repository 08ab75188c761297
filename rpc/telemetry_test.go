package rpc

import (
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

// The wire shapes of the cache and telemetry events (key order pinned; the
// examples of ama's RPC docs). The scheduled phase and cache_miss are also
// pinned by the cache-warm / cache-miss goldens.
func TestCacheEventShapes(t *testing.T) {
	cost := 0.1278
	wcost := 0.0012
	u := &llm.Usage{Input: 1, Output: 1, CacheRead: 12000, TotalTokens: 12002}
	for _, tc := range []struct {
		ev   events.Event
		want string
	}{
		{events.CacheMiss{MissedTokens: 142000, MissedCost: &cost, Reason: "evicted", IdleMs: 3},
			`{"type":"cache_miss","missedTokens":142000,"reason":"evicted","idleMs":3,"missedCost":0.1278}`},
		{events.CacheMiss{MissedTokens: 30500, Reason: "prefix_changed", Detail: "tools", IdleMs: 0},
			`{"type":"cache_miss","missedTokens":30500,"reason":"prefix_changed","idleMs":0,"detail":"tools"}`},
		{events.CacheWarm{Phase: "scheduled", NextWarmAt: 1790000000000},
			`{"type":"cache_warm","phase":"scheduled","nextWarmAt":1790000000000}`},
		{events.CacheWarm{Phase: "sent", Usage: u, Cost: &wcost},
			`{"type":"cache_warm","phase":"sent","usage":{"input":1,"output":1,"cacheRead":12000,"cacheWrite":0,"totalTokens":12002},"cost":0.0012}`},
		{events.CacheWarm{Phase: "stopped", Reason: "no_cache_hits"},
			`{"type":"cache_warm","phase":"stopped","reason":"no_cache_hits"}`},
		{events.TelemetryTick{}, `{"type":"telemetry_tick"}`},
		{events.ContextPressure{Percent: 70.6, Threshold: 70, RemainingTokens: new(int)},
			`{"type":"context_pressure","percent":70.6,"threshold":70,"remainingTokens":0}`},
	} {
		b, err := encodeEvent(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != tc.want+"\n" {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

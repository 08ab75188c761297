package host

import (
	"context"
	"time"

	"github.com/armadra/ama-rpc/telemetry"
)

// This file is cache.onWarmingDecision (host-api.md §4.11): the bridge
// reports whether a handler is registered (cache.decider), and ama-rpc
// asks it with cache.decide before every warming send. It implements
// telemetry.WarmingDecider.

var _ telemetry.WarmingDecider = (*Host)(nil)

// decideWait bounds a decision: the warmer asks on the session's actor,
// so a slow handler must not hold the session; past it the built-in
// decision applies.
const decideWait = time.Second

// Active reports whether the adapter has a warming handler registered
// (and is running): only then the warmer defers to it.
func (h *Host) Active() bool {
	h.mu.Lock()
	on := h.warmDecider
	h.mu.Unlock()
	return on && h.Alive()
}

// DecideWarm asks the adapter's last registered handler: "warm" or
// "stop", "" (a throw, another answer, a timeout) keeps the built-in
// decision.
func (h *Host) DecideWarm(d telemetry.WarmDecision) string {
	if !h.Active() {
		return ""
	}
	var res struct {
		Answer *string `json:"answer"`
	}
	done := make(chan error, 1)
	go func() { done <- h.conn.Call(context.Background(), "cache.decide", map[string]any{"decision": d}, &res) }()
	select {
	case err := <-done:
		if err != nil || res.Answer == nil {
			return ""
		}
	case <-time.After(decideWait):
		h.log.Warn("host cache.onWarmingDecision handler too slow; the built-in decision applies")
		return ""
	case <-h.gone:
		return ""
	}
	switch a := *res.Answer; a {
	case "warm", "stop":
		return a
	}
	return ""
}

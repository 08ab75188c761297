package session

import (
	"github.com/armadra/ama-rpc/permlog"
	"math"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/telemetry"
)

// Stats are the numbers of get_session_stats. Counts cover the active
// branch; tokens and cost cover every request the session paid for
// (abandoned branches and auxiliary requests included).
type Stats struct {
	SessionID, SessionFile                                  string
	UserMessages, AssistantMessages, ToolCalls, ToolResults int
	Tokens                                                  TokenTotals
	// Cost is nil when some request has no cost.
	Cost *float64
	// Context is nil when the model has no context window.
	Context      *ContextUse
	CacheHitRate *float64
	// Cache is the prompt-cache accounting; Telemetry the throughput of
	// turn requests (package telemetry).
	Cache     *telemetry.CacheStats
	Telemetry *telemetry.SessionTelemetry
	// Permissions are the permission decision counters (nil: no decision
	// yet).
	Permissions *permlog.Counts
}

// TokenTotals sums usage. The tags are its wire shape (the tokens of
// get_session_stats).
type TokenTotals struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

// ContextUse estimates how full the context window is. The tags are its
// wire shape (the context of get_session_stats).
type ContextUse struct {
	Tokens  int     `json:"tokens"`
	Window  int     `json:"window,omitempty"`
	Percent float64 `json:"percent"`
}

// Stats returns the session statistics.
func (s *Session) Stats() (Stats, error) {
	out, err := call(s, func(st *state) Stats { return st.stats() })
	if err == nil {
		t := s.tput.Snapshot()
		out.Telemetry = &t
		if c := s.perm.counts.Snapshot(); c.Allowed+c.Denied > 0 {
			out.Permissions = &c
		}
	}
	return out, err
}

func (st *state) stats() Stats {
	out := Stats{SessionID: st.id, SessionFile: st.filePath()}
	ctx := st.context()
	c := &st.ctx
	out.UserMessages, out.AssistantMessages, out.ToolCalls, out.ToolResults = c.users, c.assistants, c.toolCalls, c.toolResults
	u := st.usageTotals()
	out.Tokens = u.tokens
	cost, priced := u.cost, u.priced
	if priced {
		out.Cost = &cost
	}
	if den := out.Tokens.Input + out.Tokens.CacheRead + out.Tokens.CacheWrite; den > 0 {
		r := float64(out.Tokens.CacheRead) / float64(den)
		out.CacheHitRate = &r
	}
	if st.model != nil && st.model.ContextWindow > 0 {
		tokens := contextTokens(ctx)
		pct := math.Round(float64(tokens)/float64(st.model.ContextWindow)*1000) / 10
		out.Context = &ContextUse{Tokens: tokens, Window: st.model.ContextWindow, Percent: pct}
	}
	out.Cache = st.cacheStats(out.Context)
	return out
}

// usageTotals sums the usage of every entry of the session (file order,
// all branches): kept between calls and extended by the entries appended
// since, so get_session_stats decodes each entry once.
type usageTotals struct {
	tree   *store.Tree
	n      int // entries summed
	tokens TokenTotals
	cost   float64
	priced bool
}

func (st *state) usageTotals() *usageTotals {
	u := &st.usage
	if u.tree != st.tree {
		*u = usageTotals{tree: st.tree, priced: true}
	}
	add := func(us llm.Usage) {
		u.tokens.Input += us.Input
		u.tokens.Output += us.Output
		u.tokens.CacheRead += us.CacheRead
		u.tokens.CacheWrite += us.CacheWrite
		u.tokens.Total += us.Input + us.Output + us.CacheRead + us.CacheWrite
		if us.Cost == nil {
			u.priced = false
		} else {
			u.cost += us.Cost.Total
		}
	}
	entries := st.tree.Entries()
	for _, e := range entries[u.n:] {
		switch e.Type {
		case store.TypeMessage:
			if m, err := e.Message(); err == nil {
				if a, ok := m.(*llm.AssistantMessage); ok {
					add(a.Usage)
				}
			}
		case store.TypeCompaction, store.TypeBranchSummary:
			var aux struct {
				Usage *llm.Usage `json:"usage"`
			}
			if e.Decode(&aux) == nil && aux.Usage != nil {
				add(*aux.Usage)
			}
		case store.TypeUsage:
			var aux struct {
				Usage llm.Usage `json:"usage"`
			}
			if e.Decode(&aux) == nil {
				add(aux.Usage)
			}
		}
	}
	u.n = len(entries)
	return u
}

// contextTokens estimates the size of the context: the usage of the last
// successful reply plus about a token per four characters of what came
// after it (everything, when no reply has usage yet).
func contextTokens(c modelContext) int {
	last := -1
	base := 0
	for i := len(c.messages) - 1; i >= c.fresh; i-- {
		if a, ok := c.messages[i].(*llm.AssistantMessage); ok && !a.Failed() && a.Usage.TotalTokens > 0 {
			last, base = i, a.Usage.TotalTokens
			break
		}
	}
	chars := 0
	if last < 0 {
		chars += len(c.system)
	}
	for _, m := range c.messages[last+1:] {
		chars += llm.EncodedLen(m)
	}
	return base + (chars+3)/4
}

package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session/store"
)

// Compaction triggers.
const (
	TriggerManual    = "manual"
	TriggerThreshold = "threshold"
	TriggerOverflow  = "overflow"
)

// Compaction defaults.
const (
	defaultThresholdPercent = 80
	defaultKeepRecentTokens = 20000
)

// ErrNothingToCompact: the context holds nothing before the recent part.
var ErrNothingToCompact = errors.New("nothing to compact")

const compactionPrompt = `You write the working summary of a coding session so that it can continue without the earlier messages.
Summarise the conversation so far for the agent that will continue it. Keep what is needed to go on:
- the user's goals and requests, in their own terms, and any constraints or preferences they stated;
- decisions made and why; what was tried and did not work;
- files read, created or changed (with paths) and what was done to them;
- commands run and their important results; errors still open;
- what remains to be done next.
Write compact markdown under the heading "## Summary". Do not invent anything; do not address the user.`

// CompactionResult describes a finished compaction.
type CompactionResult struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int
	TokensAfter      *int
	Usage            *llm.Usage
}

// compactPlan is what the actor prepares for a compaction.
type compactPlan struct {
	req          *llm.Request
	provider     llm.Provider
	firstKept    string
	tokensBefore int
	err          error
}

// Compact summarises the older part of the context (manual compaction).
// reply is called when it is done. It needs an idle session.
func (s *Session) Compact(instructions string, reply func(CompactionResult, error)) {
	s.compactCommand(TriggerManual, instructions, "", reply)
}

// SummarizeUpTo compacts everything before the rewind point entryID; the
// leaf does not move.
func (s *Session) SummarizeUpTo(entryID, instructions string, reply func(CompactionResult, error)) {
	s.compactCommand(TriggerManual, instructions, entryID, reply)
}

func (s *Session) compactCommand(trigger, instructions, upTo string, reply func(CompactionResult, error)) {
	if !s.post(func(st *state) {
		if st.run != nil {
			reply(CompactionResult{}, fmt.Errorf("%w: a run is active", ErrBusy))
			return
		}
		if upTo != "" {
			if _, err := st.findPoint(upTo); err != nil {
				reply(CompactionResult{}, err)
				return
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		r := &runState{ctx: ctx, cancel: cancel, kind: runCompact}
		st.run = r
		go func() {
			defer cancel()
			res, err := s.compact(r, trigger, instructions, upTo, false)
			_ = s.do(func(st *state) {
				st.settled()
				reply(res, err)
			})
		}()
	}) {
		reply(CompactionResult{}, ErrClosed)
	}
}

// compact runs one compaction on the runner goroutine: compaction_start,
// the summary request through the session's model, the compaction entry,
// compaction_end.
func (s *Session) compact(r *runState, trigger, instructions, upTo string, willRetry bool) (CompactionResult, error) {
	cp, err := call(s, func(st *state) compactPlan { return st.planCompaction(instructions, upTo) })
	if err == nil {
		err = cp.err
	}
	if err != nil {
		return CompactionResult{}, err
	}
	if cp, err = s.preCompact(r, trigger, instructions, upTo, cp); err != nil {
		return CompactionResult{}, err
	}
	_ = s.do(func(st *state) {
		st.compacting = true
		s.publish(events.CompactionStart{Trigger: trigger})
	})
	msg, streamErr := cp.provider.Stream(r.ctx, cp.req, nil)
	summary := ""
	if msg != nil {
		summary = strings.TrimSpace(msg.Text(""))
	}
	if streamErr == nil && summary == "" {
		streamErr = errors.New("the model returned an empty summary")
	}
	if streamErr != nil {
		aborted := r.ctx.Err() != nil
		_ = s.do(func(st *state) {
			st.compacting = false
			s.publish(events.CompactionEnd{Trigger: trigger, Aborted: aborted, WillRetry: false, Error: streamErr.Error()})
		})
		return CompactionResult{}, fmt.Errorf("compaction: %w", streamErr)
	}
	usage := msg.Usage
	res, _ := call(s, func(st *state) CompactionResult {
		st.appendEntry(store.CompactionEntry(summary, cp.firstKept, cp.tokensBefore, &usage))
		after := contextTokens(st.context())
		res := CompactionResult{Summary: summary, FirstKeptEntryID: cp.firstKept, TokensBefore: cp.tokensBefore, TokensAfter: &after, Usage: &usage}
		st.compacting = false
		st.plan.fullNext = true
		st.pressure = 0
		s.publish(events.CompactionEnd{Trigger: trigger, Result: wireCompaction(res), Aborted: false, WillRetry: willRetry})
		return res
	})
	s.postCompact(r, trigger, res)
	return res, nil
}

// wireCompaction is the result object of compaction_end.
func wireCompaction(r CompactionResult) any {
	return struct {
		Summary          string     `json:"summary"`
		FirstKeptEntryID string     `json:"firstKeptEntryId"`
		TokensBefore     int        `json:"tokensBefore"`
		TokensAfter      *int       `json:"tokensAfter,omitempty"`
		Usage            *llm.Usage `json:"usage,omitempty"`
	}{r.Summary, r.FirstKeptEntryID, r.TokensBefore, r.TokensAfter, r.Usage}
}

// planCompaction picks what to summarise: everything before the first kept
// turn. Without upTo the most recent turns are kept up to about
// keepRecentTokens (at least the last turn).
func (st *state) planCompaction(instructions, upTo string) compactPlan {
	if st.model == nil || st.provider == nil || st.provider.Provider == nil {
		return compactPlan{err: fmt.Errorf("%w: compaction needs a model", ErrNoModel)}
	}
	msgs, info, err := store.Project(st.branch())
	if err != nil {
		return compactPlan{err: err}
	}
	pts := st.points()
	if len(pts) == 0 {
		return compactPlan{err: fmt.Errorf("%w: the session has no messages yet", ErrNothingToCompact)}
	}
	keep := pts[len(pts)-1]
	if upTo != "" {
		keep, _ = st.findPoint(upTo)
	} else {
		budget := st.s.deps.Settings.KeepRecentTokens
		if budget <= 0 {
			budget = defaultKeepRecentTokens
		}
		for i := len(pts) - 1; i > 0; i-- {
			if tokensFrom(msgs, info.Entries, pts[i-1].entry) > budget {
				break
			}
			keep = pts[i-1]
		}
	}
	cut := -1
	for i, e := range info.Entries {
		if e == keep.entry {
			cut = i
			break
		}
	}
	var older []llm.Message
	if cut > 0 {
		for _, m := range msgs[:cut] {
			if _, sys := m.(*llm.SystemMessage); !sys {
				older = append(older, m)
			}
		}
	}
	if len(older) == 0 {
		return compactPlan{err: fmt.Errorf("%w: nothing precedes the most recent turn", ErrNothingToCompact)}
	}
	ask := "Summarise the conversation above."
	if s := strings.TrimSpace(instructions); s != "" {
		ask += "\nAdditional instructions: " + s
	}
	req := &llm.Request{
		Model: st.model, System: compactionPrompt, Purpose: llm.PurposeCompact, SessionID: st.id, ThinkingLevel: "off",
		Messages: append(older, llm.NewUser(ask, st.nowMs(), "")), Timestamp: st.nowMs(),
	}
	return compactPlan{req: req, provider: st.provider.Provider, firstKept: keep.EntryID, tokensBefore: contextTokens(st.context())}
}

// tokensFrom estimates the tokens of the messages from entry on.
func tokensFrom(msgs []llm.Message, entries []*store.Entry, from *store.Entry) int {
	for i, e := range entries {
		if e == from {
			return contextTokens(modelContext{messages: msgs[i:]})
		}
	}
	return 0
}

// autoCompact compacts before a request when the context passed the
// threshold and auto-compaction is on. Failures are reported as
// notifications; the request goes ahead.
func (s *Session) autoCompact(r *runState) {
	due, err := call(s, func(st *state) bool {
		if !st.autoCompaction || st.model == nil || st.model.ContextWindow <= 0 {
			return false
		}
		pct := st.s.deps.Settings.CompactionPercent
		if pct <= 0 {
			pct = defaultThresholdPercent
		}
		return contextTokens(st.context())*100 >= st.model.ContextWindow*pct
	})
	if err != nil || !due {
		return
	}
	if _, err := s.compact(r, TriggerThreshold, "", "", false); err != nil && !errors.Is(err, ErrNothingToCompact) && !errors.Is(err, ErrCompactionBlocked) {
		s.publish(events.Notification{Level: "warn", Message: "automatic compaction failed: " + err.Error()})
	}
}

// pressure thresholds (percent of the context window).
var pressureLevels = []int{90, 70}

// checkPressure reports context_pressure when the context first passes 70 %
// and 90 % of the window (again after a compaction brought it down).
func (st *state) checkPressure() {
	if st.model == nil || st.model.ContextWindow <= 0 {
		return
	}
	tokens := contextTokens(st.context())
	pct := tokens * 100 / st.model.ContextWindow
	for _, lvl := range pressureLevels {
		if pct >= lvl {
			if st.pressure < lvl {
				st.pressure = lvl
				remaining := max(st.model.ContextWindow-tokens, 0)
				ev := events.ContextPressure{Percent: pct, Threshold: lvl, RemainingTokens: &remaining}
				if n := st.turnsLeft(remaining); n != nil {
					ev.EstimatedTurnsLeft = n
				}
				st.s.publish(ev)
			}
			return
		}
	}
	st.pressure = 0
}

// turnsLeft estimates how many turns fit in the remaining tokens from the
// growth of the last five replies.
func (st *state) turnsLeft(remaining int) *int {
	var totals []int
	for _, m := range st.context().messages {
		if a, ok := m.(*llm.AssistantMessage); ok && !a.Failed() && a.Usage.TotalTokens > 0 {
			totals = append(totals, a.Usage.TotalTokens)
		}
	}
	if len(totals) < 2 {
		return nil
	}
	if len(totals) > 6 {
		totals = totals[len(totals)-6:]
	}
	growth := (totals[len(totals)-1] - totals[0]) / (len(totals) - 1)
	if growth <= 0 {
		return nil
	}
	n := remaining / growth
	return &n
}

package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
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

// CompactionResult describes a finished compaction; it is the event
// vocabulary's, whose JSON is the wire shape (compaction_end's result and
// the compact response).
type CompactionResult = events.CompactionResult

// compactPlan is what the actor prepares for a compaction.
type compactPlan struct {
	req       *llm.Request
	provider  llm.Provider
	firstKept string // "" with selfKept
	selfKept  bool   // everything is summarised: nothing before the compaction is kept
	// unchangedFirst is the first entry of the context as it is (the
	// result of a compaction that is not recorded).
	unchangedFirst string
	tokensBefore   int
	// noop: nothing can be summarised; the result (unchanged numbers) is
	// answered without a model call.
	noop *CompactionResult
	err  error
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
		st.ensureFile()
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
	cp, err := call(s, func(st *state) compactPlan { return st.planCompaction(trigger, instructions, upTo) })
	if err == nil {
		err = cp.err
	}
	if err != nil {
		return CompactionResult{}, err
	}
	if cp.noop != nil {
		return *cp.noop, nil
	}
	if cp, err = s.preCompact(r, trigger, instructions, upTo, cp); err != nil {
		return CompactionResult{}, err
	}
	_ = s.do(func(st *state) {
		st.compacting = true
		s.publish(events.CompactionStart{Trigger: trigger})
		st.pauseWarm()
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
		st.recordRequest(cp.req, nil, msg) // reporting state and hit rates only
		// Weigh the context the compaction would leave, with the same
		// estimate as tokensBefore; one that does not shrink the context
		// is not recorded (the result then reports the unchanged size).
		id := st.newEntryID()
		first := cp.firstKept
		if cp.selfKept {
			first = id // nothing before the compaction is kept
		}
		e := store.CompactionEntry(summary, first, cp.tokensBefore, &usage)
		e.ID, e.Timestamp = id, st.isoNow()
		if leaf := st.tree.Leaf(); leaf != nil {
			p := *leaf
			e.ParentID = &p
		}
		// Both numbers are estimateTokens of the context without and with
		// the compaction, so they compare.
		after := estimateTokens(st.contextOf(append(st.branch(), e)))
		res := CompactionResult{Summary: summary, FirstKeptEntryID: first, TokensBefore: cp.tokensBefore, TokensAfter: &after, Usage: &usage}
		if after < cp.tokensBefore {
			st.appendEntry(e)
		} else {
			before := cp.tokensBefore
			res.Summary, res.FirstKeptEntryID, res.TokensAfter = "", cp.unchangedFirst, &before
			st.s.log.Info("compaction not recorded: the summary would not make the context smaller",
				zap.Int("tokensBefore", cp.tokensBefore), zap.Int("tokensAfter", after))
		}
		st.compacting = false
		st.plan.fullNext = true
		st.pressure = 0
		done := res // the event keeps its own copy
		s.publish(events.CompactionEnd{Trigger: trigger, Result: &done, Aborted: false, WillRetry: willRetry})
		return res
	})
	s.postCompact(r, trigger, res)
	return res, nil
}

// planCompaction picks what to summarise, as ama does. Cut points are the
// user, custom and assistant messages after the previous summary (a cut at
// an assistant message splits the current turn: its user message and the
// tool results before the cut are summarised too). Without upTo the
// newest messages are kept up to about keepRecentTokens; when that leaves
// nothing to summarise the budget shrinks (a quarter, then one token: only
// the last cut point is kept). With upTo the cut is that rewind point. An
// overflow that still finds nothing (a first turn with only its user
// message) summarises the whole context, keeping nothing before the
// compaction. Otherwise nothing can be summarised and the plan is a no-op
// result with unchanged numbers (no model call).
func (st *state) planCompaction(trigger, instructions, upTo string) compactPlan {
	if st.model == nil || st.provider == nil || st.provider.Provider == nil {
		return compactPlan{err: fmt.Errorf("%w: compaction needs a model", ErrNoModel)}
	}
	msgs, info, err := store.Project(st.branch())
	if err != nil {
		return compactPlan{err: err}
	}
	before := estimateTokens(st.context())
	start := 0
	for start < len(msgs) {
		r := msgs[start].MessageRole()
		if r != llm.RoleSystem && r != llm.RoleCompactionSummary {
			break
		}
		start++
	}
	unchanged := ""
	if start < len(info.Entries) {
		unchanged = info.Entries[start].ID
	}
	cut := -1
	if upTo != "" {
		for i, e := range info.Entries {
			if e.ID == upTo && i > start {
				cut = i
			}
		}
	} else {
		keep := st.s.deps.Settings.KeepRecentTokens
		if keep <= 0 {
			keep = defaultKeepRecentTokens
		}
		for _, budget := range []int{keep, keep / 4, 1} {
			if cut = cutPoint(msgs, start, max(budget, 1)); cut > start {
				break
			}
		}
	}
	selfKept := false
	if cut <= start {
		if trigger != TriggerOverflow || start >= len(msgs) {
			return compactPlan{noop: &CompactionResult{FirstKeptEntryID: unchanged, TokensBefore: before, TokensAfter: &before}}
		}
		cut, selfKept = len(msgs), true
	}
	var older []llm.Message
	for _, m := range msgs[:cut] {
		if _, sys := m.(*llm.SystemMessage); !sys {
			older = append(older, m)
		}
	}
	ask := "Summarise the conversation above."
	if selfKept {
		ask += " It is all that is left of the session: keep the user's latest request in full detail, as it has to be answered from your summary."
	}
	if s := strings.TrimSpace(instructions); s != "" {
		ask += "\nAdditional instructions: " + s
	}
	req := &llm.Request{
		Model: st.model, System: compactionPrompt, Purpose: llm.PurposeCompact, SessionID: st.id, ThinkingLevel: "off",
		Messages: append(older, llm.NewUser(ask, st.nowMs(), "")), Timestamp: st.nowMs(),
	}
	cp := compactPlan{req: req, provider: st.provider.Provider, selfKept: selfKept, tokensBefore: before, unchangedFirst: unchanged}
	if !selfKept {
		cp.firstKept = info.Entries[cut].ID
	}
	return cp
}

// cutPoint returns the index in msgs where the kept part starts when the
// newest messages are kept up to about budget tokens: the first cut point
// (user, custom or assistant message) at or after the message where the
// budget is reached; start or less when nothing can be summarised.
func cutPoint(msgs []llm.Message, start, budget int) int {
	var points []int
	for i := start; i < len(msgs); i++ {
		switch msgs[i].MessageRole() {
		case llm.RoleUser, llm.RoleCustom, llm.RoleAssistant, llm.RoleBranchSummary:
			points = append(points, i)
		}
	}
	if len(points) == 0 {
		return start
	}
	acc := 0
	for i := len(msgs) - 1; i >= start; i-- {
		if _, sys := msgs[i].(*llm.SystemMessage); sys {
			continue
		}
		acc += estimateTokens(modelContext{messages: msgs[i : i+1]})
		if acc >= budget {
			for _, p := range points {
				if p >= i {
					return p
				}
			}
			return points[len(points)-1]
		}
	}
	return start
}

// estimateTokens is about a token per four characters of the system prompt
// and of every message as JSON. Compaction reports tokensBefore and
// tokensAfter with it (not with contextTokens, which prefers the provider's
// reported usage: that exists only for the context before, so the two
// numbers would not compare). A compaction that would not lower it is not
// recorded.
func estimateTokens(c modelContext) int {
	chars := len(c.system)
	for _, m := range c.messages {
		chars += llm.EncodedLen(m) // len(json.Marshal(m)), without the copy
	}
	return (chars + 3) / 4
}

// compactionDue reports, on the actor, whether the context passed the
// auto-compaction threshold with auto-compaction on. The first request
// snapshot of a turn asks it (replyOnce).
func (st *state) compactionDue() bool {
	if !st.autoCompaction || st.model == nil || st.model.ContextWindow <= 0 {
		return false
	}
	pct := st.s.deps.Settings.CompactionPercent
	if pct <= 0 {
		pct = defaultThresholdPercent
	}
	return contextTokens(st.context())*100 >= st.model.ContextWindow*pct
}

// autoCompact compacts before a request whose context is due
// (compactionDue). Failures are reported as notifications; the request
// goes ahead.
func (s *Session) autoCompact(r *runState) {
	if _, err := s.compact(r, TriggerThreshold, "", "", false); err != nil && !errors.Is(err, ErrNothingToCompact) && !errors.Is(err, ErrCompactionBlocked) {
		s.publish(events.Notification{Level: "warn", Message: "automatic compaction failed: " + err.Error(),
			Key: "notice.compactFailed", Args: []any{err.Error()}})
	}
}

// pressure thresholds (percent of the context window), ascending.
var pressureLevels = []int{70, 90}

// checkPressure reports context_pressure for each threshold the context
// crosses upwards (percent rounded to one decimal): 70 % and 90 % once
// each, again after the context fell below (a compaction).
func (st *state) checkPressure() {
	if st.model == nil || st.model.ContextWindow <= 0 {
		return
	}
	tokens := contextTokens(st.context())
	pct := min(100, math.Round(float64(tokens)/float64(st.model.ContextWindow)*1000)/10)
	prev := st.pressure
	st.pressure = pct
	for _, lvl := range pressureLevels {
		if prev < float64(lvl) && pct >= float64(lvl) {
			remaining := max(st.model.ContextWindow-tokens, 0)
			ev := events.ContextPressure{Percent: pct, Threshold: lvl, RemainingTokens: &remaining}
			if n := st.turnsLeft(remaining); n != nil {
				ev.EstimatedTurnsLeft = n
			}
			st.s.publish(ev)
		}
	}
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

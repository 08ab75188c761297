package session

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/classifier"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// permissionSnapshot is the permission state a turn decides with.
type permissionSnapshot struct {
	policy      approvals.Policy // with the session's current mode
	memory      *approvals.Memory
	home        string
	latestUser  string
	transcript  []classifier.TranscriptEntry // the classifier's evidence (auto mode)
	classifier  *classifier.Classifier       // nil unless the mode is auto
	sandboxDesc string                       // the OS sandbox in words (classifier note)
	// shadow is the policy whose verdict is only recorded (gate shadow:
	// the candidate; gate enforce with a candidate: the current policy,
	// while policy is the candidate); shadowName says which.
	shadow     *approvals.Policy
	shadowName string
}

// permit runs the permission pipeline for one call: deny rules, the
// dangerous list, auto's rule tier, allow rules and session memory, the
// mode, the static judgement and, in auto mode, the model classifier. When
// the verdict is ask, the host is asked. It returns whether the call may
// run, the text the model sees when it may not, and the auto-mode audit.
// Every verdict leaves exactly one decision record (decision.go).
func (s *Session) permit(r *runState, env *toolEnv, p *preparedCall, gate hookGate) (bool, string, any) {
	pol := env.policy
	tool, tc := p.tool, p.call
	call := approvals.Call{Tool: tc.Name, Class: approvals.Class(tools.PermissionOf(tool, tc.Arguments)), Input: tc.Arguments,
		Cwd: env.env.Cwd, Home: pol.home, Facts: p.res.Facts()}
	rec := s.newRecord(r, env, p, string(call.Class))
	v := approvals.Decide(call, hookPolicy(&pol.policy, gate), pol.memory)
	rec.Votes = append(rec.Votes, RuleVote(v))
	var classified *classifier.Verdict // the classifier's answer, when it ran
	if gate.decision != "" {
		rec.Votes = append(rec.Votes, permlog.Vote{Layer: "hook", Vote: string(gate.decision)})
		v = hooks.ApplyToVerdict(v, gate.decision, gate.reason)
		if !v.Classify {
			v = approvals.Finalize(v, &pol.policy)
		}
	}
	// An ask rule's call in auto mode goes to the person first and to the
	// classifier after an accept (seed 003): it cannot lift the ask.
	askFirst := v.Classify && v.AskRule != ""
	if askFirst {
		v.Classify = false
		v = approvals.Finalize(v, &pol.policy)
	}
	if v.Classify {
		if pol.classifier != nil {
			cv := s.classify(r, env, call, rec)
			classified = &cv
			v = v.WithClassifier(cv.Allow, cv.Reason, cv.Cached)
		}
		v = approvals.Finalize(v, &pol.policy)
	}
	if pol.shadow != nil {
		rec.Shadow = s.shadowVerdict(call, pol, gate, classified, v.Decision)
	}
	var auto any
	if v.Auto != nil {
		auto = v.Auto
	}
	if v.Layer == "dangerous" {
		p.danger = v.Dangerous
	}
	switch v.Decision {
	case approvals.Allow:
		rec.Effect = string(approvals.Allow)
		if s.record(rec, tc, s.gateName() == GateEnforce) == nil {
			return true, "", auto
		}
		// The log failed under gate enforce: a person decides instead.
		rec.Votes = append(rec.Votes, permlog.Vote{Layer: "log", Vote: string(approvals.Ask)})
		v.Decision, v.AskReason = approvals.Ask, "log"
		v.Reason = "the permission decision log cannot be written"
		rec.Asked = permlog.AskLog
	case approvals.Deny:
		rec.Effect, rec.Code = string(approvals.Deny), permlog.DenyCode(v.Layer)
		if v.Unattended {
			rec.Asked, rec.Code = permlog.AskCode(v.Layer), permlog.CodeUnattended
		}
		p.denial = &events.Denial{Layer: v.Layer, Code: events.DenialDenied}
		if v.Unattended {
			p.denial.Code = events.DenialUnattended
		}
		_ = s.record(rec, tc, false)
		return false, s.rejectText(v.Reason, rec), auto
	default:
		rec.Asked = permlog.AskCode(v.Layer)
	}
	if s.readOnly { // read-only sub-agent: nobody is asked
		rec.Votes = append(rec.Votes, permlog.Vote{Layer: "agent", Vote: string(approvals.Deny)})
		rec.Effect, rec.Code = string(approvals.Deny), permlog.CodeReadOnlyAgent
		p.denial = &events.Denial{Layer: "read-only", Code: events.DenialUnattended}
		_ = s.record(rec, tc, false)
		return false, s.rejectText(readOnlyDenial, rec), auto
	}
	hookReason := ""
	if v.AskReason == hooks.AskReasonHook {
		hookReason = gate.reason
	}
	start := s.wallNow()
	var answer events.Approval
	var unanswered string
	if a, ok := r.answer(tc); ok && p.parent == "" {
		answer = a.decision // a continuation: the recorded answer, nobody is asked again
	} else {
		answer, unanswered = s.ask(r, env, p, v.AskReason, hookReason, auto)
	}
	if answer == events.ApprovalDefer {
		p.parked = true // the batch waits (durable.go); recorded when it runs
		return false, "", auto
	}
	vote := permlog.Vote{Layer: "person", Vote: string(approvals.Deny), Answer: string(answer), WaitMs: s.wallNow().Sub(start).Milliseconds()}
	if unanswered != "" {
		vote.Answer = "none"
	}
	if answer.Allows() {
		vote.Vote = string(approvals.Allow)
	}
	rec.Votes = append(rec.Votes, vote)
	if answer.Allows() && askFirst {
		// The person accepted an ask rule's call: the classifier still
		// reviews it, and only its allow lets it run.
		allowed := false
		if pol.classifier != nil {
			allowed = s.classify(r, env, call, rec).Allow
		}
		if !allowed {
			rec.Effect, rec.Code = string(approvals.Deny), permlog.CodeClassifierDeny
			_ = s.record(rec, tc, false)
			return false, s.rejectText("Not run: the call was approved, but the auto-mode classifier did not allow it ("+v.Reason+")", rec), auto
		}
	}
	switch answer {
	case events.ApprovalAllow:
		rec.Effect = string(approvals.Allow)
		_ = s.record(rec, tc, false)
		return true, "", auto
	case events.ApprovalAllowSession:
		pol.memory.Remember(call)
		rec.Effect = string(approvals.Allow)
		_ = s.record(rec, tc, false)
		return true, "", auto
	}
	rec.Effect, rec.Code = string(approvals.Deny), permlog.CodeDeclined
	if unanswered != "" {
		rec.Code = unanswered
	}
	_ = s.record(rec, tc, false)
	p.denial = &events.Denial{Layer: v.Layer, Code: events.DenialNotApproved}
	return false, s.rejectText("Not run: this call needed approval and was not approved ("+v.Reason+")", rec), auto
}

// classify asks the auto-mode classifier about call and adds its vote to
// rec. pol.classifier must be set.
func (s *Session) classify(r *runState, env *toolEnv, call approvals.Call, rec *permlog.Record) classifier.Verdict {
	pol, tc := env.policy, call
	start := s.wallNow()
	cv := pol.classifier.Classify(r.ctx, classifier.Input{Tool: tc.Tool, Args: tc.Input, Cwd: env.env.Cwd,
		ProjectRoot: env.env.Cwd, LatestUserMessage: pol.latestUser, SandboxNote: pol.sandboxNote(call),
		Transcript: pol.transcript})
	vote := permlog.Vote{Layer: "classifier", Vote: string(approvals.Ask), Stage: string(cv.Stage),
		LatencyMs: s.wallNow().Sub(start).Milliseconds(), Cached: cv.Cached, Failed: cv.Failed}
	if cv.Allow {
		vote.Vote = string(approvals.Allow)
	}
	rec.Votes = append(rec.Votes, vote)
	return cv
}

// shadowVerdict is the shadow policy's verdict on call, recorded beside
// the deciding one: the same deterministic pipeline and hook, and the
// classifier's answer when the deciding pipeline asked it (the shadow
// never makes a model request of its own: without an answer its verdict is
// the ask the classifier would have to lift). Nobody is asked for it.
func (s *Session) shadowVerdict(call approvals.Call, pol permissionSnapshot, gate hookGate, cv *classifier.Verdict, live approvals.Decision) *permlog.Shadow {
	sv := approvals.Decide(call, hookPolicy(pol.shadow, gate), pol.memory)
	if gate.decision != "" {
		sv = hooks.ApplyToVerdict(sv, gate.decision, gate.reason)
	}
	if sv.Classify && cv != nil {
		sv = sv.WithClassifier(cv.Allow, cv.Reason, cv.Cached)
	}
	sv = approvals.Finalize(sv, pol.shadow)
	out := &permlog.Shadow{Policy: pol.shadowName, Effect: string(sv.Decision), Step: sv.Layer, Rule: sv.Rule, Differs: sv.Decision != live}
	switch {
	case sv.Unattended:
		out.Code = permlog.CodeUnattended
	case sv.Decision == approvals.Deny:
		out.Code = permlog.DenyCode(sv.Layer)
	case sv.Decision == approvals.Ask:
		out.Code = permlog.AskCode(sv.Layer)
	}
	return out
}

// hookDenied records the verdict of a call a PreToolUse hook denied
// before the pipeline ran.
func (s *Session) hookDenied(r *runState, env *toolEnv, p *preparedCall) {
	rec := s.newRecord(r, env, p, "")
	rec.Votes = append(rec.Votes, permlog.Vote{Layer: "hook", Vote: string(approvals.Deny), Step: "hook"})
	rec.Effect, rec.Code = string(approvals.Deny), permlog.CodeHookDeny
	_ = s.record(rec, p.call, false)
	if rec.Rejections > 0 && p.result != nil && len(p.result.Content) == 1 {
		if t, ok := p.result.Content[0].(*llm.TextContent); ok {
			if txt := s.rejectText(t.Text, rec); txt != t.Text {
				p.result = tools.ErrorResult(txt)
			}
		}
	}
}

// ask emits permission_request, waits for the host (bounded by the approval
// timeout and the run) and emits permission_resolved. An aborted run always
// yields deny, even if the host allowed. unanswered is the record code when
// nobody answered (no_answer, aborted), else "".
func (s *Session) ask(r *runState, env *toolEnv, p *preparedCall, reason, hookReason string, auto any) (_ events.Approval, unanswered string) {
	tool, tc := p.tool, p.call
	if reason == "" {
		reason = "mode"
	}
	if r.ctx.Err() != nil { // aborted: nothing to ask
		return events.ApprovalDeny, permlog.CodeAborted
	}
	timeout := s.deps.Settings.ApprovalTimeout
	req := &events.PermissionRequest{
		RequestID: s.deps.NewUUID(), ToolName: tc.Name, Input: tc.Arguments, Reason: reason, Dangerous: p.danger, HookReason: hookReason,
		TimeoutMs: timeout.Milliseconds(), AutoDecision: auto,
		Context: &events.PermissionCtx{ToolCallID: tc.ID, ParentToolCallID: p.parent, ViaCodemode: p.via},
	}
	if pv, ok := tool.(tools.Previewer); ok {
		pctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
		if pre := pv.Preview(pctx, &tools.Call{ID: tc.ID, Args: tc.Arguments, Env: env.env, Resolved: p.res}); pre != nil {
			req.Preview = pre
		}
		cancel()
	}
	rec := s.recordAsk(p, req) // durable approvals: on disk before it is sent
	s.publish(*req)
	s.notify("approval", "approval requested for "+tc.Name)
	decision := events.ApprovalDeny
	unanswered = permlog.CodeNoAnswer
	if s.approver != nil && r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, timeout)
		decision = s.approver.Ask(ctx, req)
		if ctx.Err() == nil {
			unanswered = ""
		}
		cancel()
	}
	if rec != nil && decision == events.ApprovalDefer && unanswered == "" && r.ctx.Err() == nil {
		s.settleAsk(rec, decision, "") // parked: open until answered or expired
		return events.ApprovalDefer, ""
	}
	if r.ctx.Err() != nil {
		unanswered = permlog.CodeAborted
	}
	if r.ctx.Err() != nil || !decision.Allows() {
		decision = events.ApprovalDeny
	}
	resolved := events.PermissionResolved{RequestID: req.RequestID, Decision: decision}
	if rec != nil {
		resolved.Reason = ResolvedAnswered
		if unanswered != "" {
			resolved.Reason = unanswered
		}
		s.settleAsk(rec, decision, resolved.Reason)
	}
	s.publish(resolved)
	return decision, unanswered
}

// toolEnv snapshots what the runner needs to run this turn's tools.
func (st *state) toolEnv() *toolEnv {
	e := &toolEnv{tools: map[string]tools.Tool{}, set: st.s.deps.Tools, mcp: st.mcpTools, env: st.turnTools(), ckpt: st.ckpt, refused: st.unavailable}
	for _, t := range st.allTools() {
		if _, taken := e.tools[t.Decl().Name]; !taken && st.isActive(t.Decl().Name) && !st.unavailable[t.Decl().Name] {
			e.tools[t.Decl().Name] = t
		}
	}
	pol := *st.s.deps.Policy
	pol.Mode = st.gateMode()
	pol.Private = st.s.deps.private()
	e.policy = permissionSnapshot{policy: pol, memory: st.memory, home: st.s.deps.Dirs.Home, latestUser: st.latestUserText()}
	if cand := st.s.deps.Settings.Candidate; cand != nil && st.s.gateName() != GateOff {
		cp := *cand
		cp.Mode = pol.Mode
		if cand.Mode.Valid() && cand.Mode.Strictness() < pol.Mode.Strictness() {
			cp.Mode = cand.Mode
		}
		cp.Private, cp.Sandbox, cp.Unattended = pol.Private, pol.Sandbox, pol.Unattended
		if st.s.gateName() == GateEnforce {
			base := pol
			e.policy.policy, e.policy.shadow, e.policy.shadowName = cp, &base, "current"
			pol = cp
		} else {
			e.policy.shadow, e.policy.shadowName = &cp, "candidate"
		}
	}
	if pol.Mode == approvals.ModeAuto {
		e.policy.classifier = st.classifier()
		if mode, _ := classifier.ParseMode(st.s.deps.Settings.ClassifierMode); mode == classifier.ModeTwoStage {
			e.policy.transcript = st.classifierTranscript()
		}
	}
	st.applySandbox(e, pol.Mode)
	return e
}

// gateMode is the mode calls are judged with: the session's own, or a
// sub-agent's parent's mode now when that one is stricter (a child never
// does more than its parent currently may).
func (st *state) gateMode() approvals.Mode {
	return stricter(st.mode, st.s.bound)
}

// stricter is mode, or bound's answer when that is stricter.
func stricter(mode approvals.Mode, bound func() approvals.Mode) approvals.Mode {
	if bound == nil {
		return mode
	}
	if b := bound(); b.Strictness() < mode.Strictness() {
		return b
	}
	return mode
}

// nestedEnv is env for a nested call (CallSession.ExecuteTool) made now:
// the call is judged with the session's permission mode at this moment,
// not the one of the turn that started the calling tool, so switching to
// plan (or default) stops what a long-running host tool does next. The
// rest of the snapshot (rules, memory, sandbox) is the turn's.
func (s *Session) nestedEnv(env *toolEnv) *toolEnv {
	type cur struct {
		mode  approvals.Mode
		judge *classifier.Classifier
	}
	c, err := call(s, func(st *state) cur {
		out := cur{mode: st.gateMode()}
		if out.mode == approvals.ModeAuto {
			out.judge = st.classifier()
		}
		return out
	})
	if err != nil || c.mode == env.policy.policy.Mode {
		return env
	}
	e := *env
	e.policy.policy.Mode, e.policy.classifier = c.mode, c.judge
	return &e
}

// tightened is env under the session's mode now when that is stricter
// than judged, the mode a call was judged with (the host switched to plan
// while an earlier call of the batch ran, or a sub-agent's parent did),
// else nil. Only the verdict and the sandbox change; the checkpoint and
// tools stay the batch's.
func (s *Session) tightened(env *toolEnv, judged approvals.Mode) *toolEnv {
	now := stricter(s.PermissionMode(), s.bound)
	if now.Strictness() >= judged.Strictness() {
		return nil
	}
	fresh, err := call(s, func(st *state) *toolEnv { return st.toolEnv() })
	if err != nil { // closing: judge as plan
		fresh = &toolEnv{policy: env.policy, env: env.env}
		fresh.policy.policy.Mode, fresh.policy.classifier = approvals.ModePlan, nil
	}
	e := *env
	tenv := *env.env
	tenv.Sandbox = fresh.env.Sandbox
	e.policy, e.env = fresh.policy, &tenv
	return &e
}

// latestUserText is the text of the last user message on the branch.
func (st *state) latestUserText() string {
	branch := st.branch()
	for i := len(branch) - 1; i >= 0; i-- {
		if branch[i].Type != store.TypeMessage {
			continue
		}
		if m, err := branch[i].Message(); err == nil {
			if u, ok := m.(*llm.UserMessage); ok {
				return u.Content.PlainText()
			}
		}
	}
	return ""
}

// transcriptChars bounds what classifierTranscript copies of one kind:
// twice the classifier's budget (about four characters a token), so the
// walk back through a long session stops early.
func transcriptChars(tokens, def int) int {
	if tokens <= 0 {
		tokens = def
	}
	return 2 * 4 * max(tokens, classifier.MinTranscriptTokens)
}

// classifierTranscript is the evidence of the two-stage classifier: the
// user messages and the tool calls (name and arguments) on the branch,
// oldest first — never assistant prose or tool results. The first user
// message (the task) and the latest entries up to transcriptChars of each
// kind are taken. Only the two-stage variant reads it.
func (st *state) classifierTranscript() []classifier.TranscriptEntry {
	branch := st.branch()
	var rev []classifier.TranscriptEntry
	set := st.s.deps.Settings
	userLeft := transcriptChars(set.ClassifierUserTokens, classifier.DefaultMaxUserTranscriptTokens)
	toolLeft := transcriptChars(set.ClassifierToolTokens, classifier.DefaultMaxToolTranscriptTokens)
	firstUser := -1
	for i := range branch {
		if branch[i].Type != store.TypeMessage {
			continue
		}
		if m, err := branch[i].Message(); err == nil {
			if _, ok := m.(*llm.UserMessage); ok {
				firstUser = i
				break
			}
		}
	}
	for i := len(branch) - 1; i >= 0 && (userLeft > 0 || toolLeft > 0); i-- {
		if branch[i].Type != store.TypeMessage {
			continue
		}
		m, err := branch[i].Message()
		if err != nil {
			continue
		}
		switch m := m.(type) {
		case *llm.UserMessage:
			if userLeft > 0 || i == firstUser {
				t := m.Content.PlainText()
				userLeft -= len(t)
				rev = append(rev, classifier.TranscriptEntry{Text: t})
			}
		case *llm.AssistantMessage:
			calls := m.ToolCalls()
			for j := len(calls) - 1; j >= 0 && toolLeft > 0; j-- {
				toolLeft -= len(calls[j].Arguments)
				rev = append(rev, classifier.TranscriptEntry{Tool: calls[j].Name, Text: string(calls[j].Arguments)})
			}
		}
		if i == firstUser {
			break
		}
	}
	if firstUser >= 0 && (userLeft <= 0 || toolLeft <= 0) {
		// The walk stopped early: make sure the task is there.
		if m, err := branch[firstUser].Message(); err == nil {
			if u, ok := m.(*llm.UserMessage); ok && (len(rev) == 0 || rev[len(rev)-1].Text != u.Content.PlainText() || rev[len(rev)-1].Tool != "") {
				rev = append(rev, classifier.TranscriptEntry{Text: u.Content.PlainText()})
			}
		}
	}
	slices.Reverse(rev)
	return rev
}

// classifier returns the session's auto-mode classifier, built on first
// use with permission.autoModel (or the session model).
func (st *state) classifier() *classifier.Classifier {
	if st.judge != nil {
		return st.judge
	}
	d := st.s.deps
	model, provider := st.model, st.provider
	if ref := d.Settings.ClassifierModel; ref.Provider != "" {
		if m, p, err := d.Models.Find(ref.Provider, ref.ID); err == nil {
			model, provider = m, p
		} else {
			st.s.log.Warn("permission.autoModel not usable; classifying with the session model", zap.Error(err))
		}
	}
	if model == nil || provider == nil || provider.Provider == nil {
		return nil
	}
	mode, _ := classifier.ParseMode(d.Settings.ClassifierMode)
	s := st.s
	st.judge = classifier.New(classifier.Options{
		Provider: provider.Provider, Model: model, Mode: mode, Timeout: d.Settings.ClassifierTimeout,
		Now: d.Now, SessionID: st.id + ":classify",
		MaxUserTranscriptTokens: d.Settings.ClassifierUserTokens, MaxToolTranscriptTokens: d.Settings.ClassifierToolTokens,
		Policy: d.Settings.ClassifierPolicy, FastMaxTokens: d.Settings.ClassifierFastTokens, DetailedMaxTokens: d.Settings.ClassifierDetailedTokens,
		ReasoningLevel: d.Settings.ClassifierReasoning,
		OnUsage: func(kind string, m *llm.Model, u llm.Usage) {
			_ = s.do(func(st *state) { st.appendEntry(store.UsageEntry(kind, m.Provider, m.ID, u)) })
		},
	})
	return st.judge
}

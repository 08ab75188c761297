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
}

// permit runs the permission pipeline for one call: deny rules, the
// dangerous list, auto's rule tier, allow rules and session memory, the
// mode, the static judgement and, in auto mode, the model classifier. When
// the verdict is ask, the host is asked. It returns whether the call may
// run, the text the model sees when it may not, and the auto-mode audit.
func (s *Session) permit(r *runState, env *toolEnv, p *preparedCall, gate hookGate) (bool, string, any) {
	pol := env.policy
	tool, tc := p.tool, p.call
	call := approvals.Call{Tool: tc.Name, Class: approvals.Class(tools.PermissionOf(tool, tc.Arguments)), Input: tc.Arguments,
		Cwd: env.env.Cwd, Home: pol.home, Facts: p.res.Facts()}
	v := approvals.Decide(call, hookPolicy(&pol.policy, gate), pol.memory)
	if gate.decision != "" {
		v = hooks.ApplyToVerdict(v, gate.decision, gate.reason)
		if !v.Classify {
			v = approvals.Finalize(v, &pol.policy)
		}
	}
	if v.Classify {
		if pol.classifier != nil {
			cv := pol.classifier.Classify(r.ctx, classifier.Input{Tool: tc.Name, Args: tc.Arguments, Cwd: env.env.Cwd,
				ProjectRoot: env.env.Cwd, LatestUserMessage: pol.latestUser, SandboxNote: pol.sandboxNote(call),
				Transcript: pol.transcript})
			v = v.WithClassifier(cv.Allow, cv.Reason, cv.Cached)
		}
		v = approvals.Finalize(v, &pol.policy)
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
		return true, "", auto
	case approvals.Deny:
		return false, v.Reason, auto
	}
	if s.readOnly { // read-only sub-agent: nobody is asked
		return false, readOnlyDenial, auto
	}
	hookReason := ""
	if v.AskReason == hooks.AskReasonHook {
		hookReason = gate.reason
	}
	switch s.ask(r, env, p, v.AskReason, hookReason, auto) {
	case events.ApprovalAllow:
		return true, "", auto
	case events.ApprovalAllowSession:
		pol.memory.Remember(call)
		return true, "", auto
	}
	return false, "Not run: this call needed approval and was not approved (" + v.Reason + ")", auto
}

// ask emits permission_request, waits for the host (bounded by the approval
// timeout and the run) and emits permission_resolved. An aborted run always
// yields deny, even if the host allowed.
func (s *Session) ask(r *runState, env *toolEnv, p *preparedCall, reason, hookReason string, auto any) events.Approval {
	tool, tc := p.tool, p.call
	if reason == "" {
		reason = "mode"
	}
	if r.ctx.Err() != nil { // aborted: nothing to ask
		return events.ApprovalDeny
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
	s.publish(*req)
	s.notify("approval", "approval requested for "+tc.Name)
	decision := events.ApprovalDeny
	if s.approver != nil && r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, timeout)
		decision = s.approver.Ask(ctx, req)
		cancel()
	}
	if r.ctx.Err() != nil || !decision.Allows() {
		decision = events.ApprovalDeny
	}
	s.publish(events.PermissionResolved{RequestID: req.RequestID, Decision: decision})
	return decision
}

// toolEnv snapshots what the runner needs to run this turn's tools.
func (st *state) toolEnv() *toolEnv {
	e := &toolEnv{tools: map[string]tools.Tool{}, set: st.s.deps.Tools, env: st.turnTools(), ckpt: st.ckpt, refused: st.unavailable}
	for _, t := range st.allTools() {
		if st.isActive(t.Decl().Name) && !st.unavailable[t.Decl().Name] {
			e.tools[t.Decl().Name] = t
		}
	}
	pol := *st.s.deps.Policy
	pol.Mode = st.gateMode()
	pol.Private = st.s.deps.private()
	e.policy = permissionSnapshot{policy: pol, memory: st.memory, home: st.s.deps.Dirs.Home, latestUser: st.latestUserText()}
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
		OnUsage: func(kind string, m *llm.Model, u llm.Usage) {
			_ = s.do(func(st *state) { st.appendEntry(store.UsageEntry(kind, m.Provider, m.ID, u)) })
		},
	})
	return st.judge
}

package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// ErrPromptBlocked: a UserPromptSubmit hook rejected the prompt (wire code
// prompt_blocked). The error text is the hook's reason.
var ErrPromptBlocked = errors.New("prompt blocked")

// ErrCompactionBlocked: a PreCompact hook cancelled the compaction.
var ErrCompactionBlocked = errors.New("compaction blocked by a PreCompact hook")

type hookError struct {
	msg string
	err error
}

func (e hookError) Error() string { return e.msg }
func (e hookError) Unwrap() error { return e.err }

// hookContextType is the customType of hook context messages.
const hookContextType = "ama.hook_context"

// maxStopContinuations bounds the runs a Stop hook adds to one prompt.
const maxStopContinuations = 3

// HookCommon returns the common hook input fields of the session (for
// SessionStart and SessionEnd, which the process runs directly).
func (s *Session) HookCommon() hooks.Common {
	c, _ := call(s, func(st *state) hooks.Common { return st.hookCommon() })
	return c
}

// SetHookContext sets the system prompt's hooks section (SessionStart's
// additionalContext) of a session not started yet, or of the next system
// prompt.
func (s *Session) SetHookContext(text string) {
	_ = s.do(func(st *state) { st.hookContext = text })
}

func (st *state) hookCommon() hooks.Common {
	// A task child reports its own id and file with depth 1 (spec §3.1).
	c := hooks.Common{SessionID: st.id, SessionFile: st.filePath(), Cwd: st.cwd, PermissionMode: string(st.mode), Depth: st.tenv.Depth}
	if st.model != nil {
		c.Model = hooks.Model{Provider: st.model.Provider, ID: st.model.ID}
	}
	if h, ok := st.s.deps.Host.(interface{ ID() string }); ok {
		c.Host = h.ID() // the active host adapter's id
	}
	return c
}

// runHooks runs the hooks of e (never on the actor) and publishes one
// hook_executed per finished hook, in configuration order. nil: no hook ran.
func (s *Session) runHooks(ctx context.Context, e hooks.Event, payload any, tool string, input json.RawMessage) *hooks.Result {
	d := s.deps.Hooks
	if !d.Has(e) {
		return nil
	}
	common, err := call(s, func(st *state) hooks.Common { return st.hookCommon() })
	if err != nil {
		return nil
	}
	res := d.Run(ctx, hooks.Call{Event: e, Common: common, Payload: payload, Tool: tool, Input: input})
	if res == nil {
		return nil
	}
	for _, o := range res.Outcomes {
		s.publish(events.HookExecuted{Event: string(e), Command: o.Command.Command, ExitCode: o.ExitCode, DurationMs: o.Duration.Milliseconds()})
	}
	for _, w := range res.Warnings {
		s.log.Warn("hook: "+w, zap.String("event", string(e)))
	}
	return res
}

// hookGate is what PreToolUse decided for one call.
type hookGate struct {
	decision hooks.Decision // allow or ask for the pipeline ("": none)
	reason   string
	args     json.RawMessage // replacement input (nil: unchanged)
	result   *tools.Result   // the call ends here (deny, invalid input)
	denied   bool
}

// preToolUse runs the PreToolUse hooks of a validated call. With no hook
// that may match the tool it returns at once, without allocating.
func (s *Session) preToolUse(r *runState, env *toolEnv, tc *llm.ToolCall, parent string, via bool) hookGate {
	if !s.deps.Hooks.MayMatch(hooks.PreToolUse, tc.Name) {
		return hookGate{}
	}
	res := s.runHooks(r.ctx, hooks.PreToolUse, hooks.ToolInput{ToolCallID: tc.ID, ToolName: tc.Name, ToolInput: tc.Arguments, ViaCodemode: via, ParentToolCallID: parent}, tc.Name, tc.Arguments)
	if res == nil {
		return hookGate{}
	}
	if res.Stop {
		r.hookStop.Store(true)
	}
	if res.Decision == hooks.Deny || res.Decision == hooks.Block {
		reason := res.Reason
		if reason == "" {
			reason = "Blocked by a PreToolUse hook."
		}
		return hookGate{result: tools.ErrorResult(reason), denied: true}
	}
	g := hookGate{decision: res.Decision, reason: res.Reason}
	if res.HasUpdatedInput {
		if err := env.validate(tc.Name, res.UpdatedInput); err != nil || !isObject(res.UpdatedInput) {
			msg := "not an object"
			if err != nil {
				msg = err.Error()
			}
			return hookGate{result: tools.ErrorResult("Invalid arguments for " + tc.Name + " (from a PreToolUse hook's updatedInput):\n" + msg)}
		}
		g.args = res.UpdatedInput
	}
	return g
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// withArgs is a copy of tc with other arguments (the assistant message
// keeps the model's own).
func withArgs(tc *llm.ToolCall, args json.RawMessage) *llm.ToolCall {
	c := *tc
	c.Arguments = args
	return &c
}

// hookPolicy is the policy the pipeline decides with when a hook decision
// is pending: unattended is applied after the hook's say (Finalize).
func hookPolicy(p *approvals.Policy, g hookGate) *approvals.Policy {
	if g.decision == "" || !p.Unattended {
		return p
	}
	c := *p
	c.Unattended = false
	return &c
}

// postToolUse runs the PostToolUse hooks of an executed call.
func (s *Session) postToolUse(r *runState, p *preparedCall, res *tools.Result) *tools.Result {
	tc := p.call
	if !s.deps.Hooks.MayMatch(hooks.PostToolUse, tc.Name) || r.ctx.Err() != nil {
		return res
	}
	orig := tc.Arguments
	if p.orig != nil {
		orig = p.orig
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*llm.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	hr := s.runHooks(r.ctx, hooks.PostToolUse, hooks.PostToolInput{ToolCallID: tc.ID, ToolName: tc.Name, ToolInput: orig,
		ToolResult: hooks.ToolResult{Content: strings.Join(text, "\n"), IsError: res.IsError}, ViaCodemode: p.via, ParentToolCallID: p.parent}, tc.Name, orig)
	if hr == nil {
		return res
	}
	if hr.Stop {
		r.hookStop.Store(true)
	}
	var parts []string
	out := *res
	if hr.Blocked() {
		out.IsError = true
		reason := hr.Reason
		if reason == "" {
			reason = "Blocked by a PostToolUse hook."
		}
		parts = append(parts, reason)
	}
	if hr.AdditionalContext != "" {
		parts = append(parts, hr.AdditionalContext)
	}
	if len(parts) > 0 {
		out.Content = append(append([]llm.Content{}, res.Content...), llm.Text(strings.Join(parts, "\n\n")))
	}
	return &out
}

// promptHook runs UserPromptSubmit for the first message of a run. It
// returns the (maybe rewritten) inputs and prompt, or an error when a hook
// blocked the prompt.
func (s *Session) promptHook(r *runState, prompt string, first []input) ([]input, string, error) {
	if !s.deps.Hooks.Has(hooks.UserPromptSubmit) || len(first) == 0 || !first[0].newRun {
		return first, prompt, nil
	}
	u, ok := first[0].msg.(*llm.UserMessage)
	if !ok {
		return first, prompt, nil
	}
	res := s.runHooks(r.ctx, hooks.UserPromptSubmit, hooks.PromptInput{Prompt: prompt}, "", nil)
	if res == nil {
		return first, prompt, nil
	}
	if res.Blocked() || res.Stop {
		reason := res.Reason
		if reason == "" {
			reason = "Prompt blocked by a UserPromptSubmit hook."
		}
		return nil, "", hookError{msg: reason, err: ErrPromptBlocked}
	}
	out := append([]input{}, first...)
	if p := res.UpdatedPrompt; p != nil {
		prompt = *p
		nu := *u
		nu.Content = replaceText(u.Content, *p)
		out[0].msg = &nu
	}
	if res.AdditionalContext != "" {
		ctxMsg := input{msg: llm.NewCustom(hookContextType, res.AdditionalContext, false, u.Timestamp)}
		out = append(out[:1], append([]input{ctxMsg}, out[1:]...)...)
	}
	return out, prompt, nil
}

// replaceText swaps the text of a user message's content, keeping images.
func replaceText(c llm.UserContent, text string) llm.UserContent {
	if !c.IsBlocks {
		return llm.StringContent(text)
	}
	out := []llm.Content{llm.Text(text)}
	for _, b := range c.Blocks {
		if _, ok := b.(*llm.TextContent); !ok {
			out = append(out, b)
		}
	}
	return llm.BlockContent(out...)
}

// stopHook runs Stop (SubagentStop in a task child, depth 1) at a settle
// point of a run that ended normally. It returns the continuation message
// when a hook blocked the stop (at most maxStopContinuations per prompt,
// for a child as for a root session; spec §7.3).
func (s *Session) stopHook(r *runState, stop string) []input {
	event := hooks.Stop
	if s.parent {
		event = hooks.SubagentStop
	}
	if !s.deps.Hooks.Has(event) || stop == llm.StopAborted || stop == llm.StopError || r.stopping || r.warning != "" ||
		r.hookStop.Load() || r.ctx.Err() != nil || r.stopContinuations >= maxStopContinuations {
		return nil
	}
	last, _ := s.LastAssistantText()
	res := s.runHooks(r.ctx, event, hooks.StopInput{LastAssistantText: last, StopHookActive: r.stopContinuations > 0}, "", nil)
	if res == nil || res.Decision != hooks.Block || res.Stop || r.ctx.Err() != nil {
		return nil
	}
	r.stopContinuations++
	text := res.Reason
	if text == "" {
		text = "Continue."
	}
	ts, _ := call(s, func(st *state) int64 { return st.nowMs() })
	return []input{{msg: llm.NewUser(text, ts, "hook")}}
}

// notify fires the Notification hooks without waiting for them.
func (s *Session) notify(kind, message string) {
	if !s.deps.Hooks.Has(hooks.Notification) {
		return
	}
	go s.runHooks(context.Background(), hooks.Notification, hooks.NotificationInput{Notification: hooks.NotificationBody{Kind: kind, Message: message}}, "", nil)
}

// lastError is the error text of the last failed reply.
func (st *state) lastError() string {
	msgs := st.context().messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(*llm.AssistantMessage); ok {
			if a.ErrorMessage != "" {
				return a.ErrorMessage
			}
			break
		}
	}
	return "run failed"
}

func hookTrigger(trigger string) string {
	if trigger == TriggerManual {
		return "manual"
	}
	return "auto"
}

// preCompact runs PreCompact before a summary compaction: block cancels
// it, customInstructions are appended to the summary instructions.
func (s *Session) preCompact(r *runState, trigger, instructions, upTo string, cp compactPlan) (compactPlan, error) {
	res := s.runHooks(r.ctx, hooks.PreCompact, hooks.PreCompactInput{TokensBefore: cp.tokensBefore, Trigger: hookTrigger(trigger)}, "", nil)
	switch {
	case res == nil:
		return cp, nil
	case res.Blocked():
		msg := ErrCompactionBlocked.Error()
		if res.Reason != "" {
			msg += ": " + res.Reason
		}
		return cp, hookError{msg: msg, err: ErrCompactionBlocked}
	case res.CustomInstructions == "":
		return cp, nil
	}
	if instructions != "" {
		instructions += "\n\n"
	}
	instructions += res.CustomInstructions
	next, err := call(s, func(st *state) compactPlan { return st.planCompaction(trigger, instructions, upTo) })
	if err == nil {
		err = next.err
	}
	if err != nil {
		return cp, err
	}
	return next, nil
}

// postCompact runs PostCompact after a written compaction; its
// additionalContext goes to the end of the context.
func (s *Session) postCompact(r *runState, trigger string, cr CompactionResult) {
	after := 0
	if cr.TokensAfter != nil {
		after = *cr.TokensAfter
	}
	res := s.runHooks(r.ctx, hooks.PostCompact, hooks.PostCompactInput{TokensBefore: cr.TokensBefore, TokensAfter: after, Trigger: hookTrigger(trigger)}, "", nil)
	if res == nil || res.AdditionalContext == "" {
		return
	}
	_ = s.do(func(st *state) {
		st.appendMessage(llm.NewCustom(hookContextType, res.AdditionalContext, false, st.nowMs()), false)
	})
}

// postRewind runs PostRewind after a real rewind.
func (s *Session) postRewind(req RewindRequest, res RewindResult) {
	if req.DryRun || !s.deps.Hooks.Has(hooks.PostRewind) {
		return
	}
	files := []string{}
	if res.Code != nil {
		files = append(append(files, res.Code.Restored...), res.Code.Deleted...)
	}
	s.runHooks(context.Background(), hooks.PostRewind, hooks.PostRewindInput{EntryID: req.EntryID, Mode: req.Mode, Files: files}, "", nil)
}

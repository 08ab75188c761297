package session

import (
	"context"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// permissionSnapshot is the permission state a turn decides with.
type permissionSnapshot struct {
	mode string
}

// permit runs the permission gate for one call and, when the verdict is
// ask, the approval round trip with the host.
func (s *Session) permit(r *runState, env *toolEnv, tool tools.Tool, tc *llm.ToolCall) (bool, string, any) {
	decision := "ask"
	switch tool.Permission() {
	case tools.PermRead:
		decision = "allow"
	case tools.PermWrite:
		switch env.policy.mode {
		case "auto-edit", "full-auto":
			decision = "allow"
		case "plan", "allowlist":
			decision = "deny"
		}
	default:
		switch env.policy.mode {
		case "full-auto":
			decision = "allow"
		case "plan", "allowlist":
			decision = "deny"
		}
	}
	switch decision {
	case "allow":
		return true, "", nil
	case "deny":
		return false, "Permission denied in " + env.policy.mode + " mode", nil
	}
	answer := s.ask(r, env, tool, tc, "mode", nil)
	if answer == "deny" {
		return false, "The user denied this tool call.", nil
	}
	return true, "", nil
}

// ask emits permission_request, waits for the host (bounded by the approval
// timeout and the run) and emits permission_resolved. An aborted run always
// yields deny, even if the host allowed.
func (s *Session) ask(r *runState, env *toolEnv, tool tools.Tool, tc *llm.ToolCall, reason string, auto any) string {
	timeout := s.deps.Settings.ApprovalTimeout
	req := &events.PermissionRequest{
		RequestID: s.deps.NewUUID(), ToolName: tc.Name, Input: tc.Arguments, Reason: reason,
		TimeoutMs: timeout.Milliseconds(), AutoDecision: auto,
		Context: &events.PermissionCtx{ToolCallID: tc.ID},
	}
	if pv, ok := tool.(tools.Previewer); ok {
		pctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
		if p := pv.Preview(pctx, &tools.Call{ID: tc.ID, Args: tc.Arguments, Env: env.env}); p != nil {
			req.Preview = p
		}
		cancel()
	}
	s.publish(*req)
	decision := "deny"
	if s.deps.Approver != nil {
		ctx, cancel := context.WithTimeout(r.ctx, timeout)
		decision = s.deps.Approver.Ask(ctx, req)
		cancel()
	}
	if r.ctx.Err() != nil || (decision != "allow" && decision != "allow_session") {
		decision = "deny"
	}
	s.publish(events.PermissionResolved{RequestID: req.RequestID, Decision: decision})
	return decision
}

// toolEnv snapshots what the runner needs to run this turn's tools.
func (st *state) toolEnv() *toolEnv {
	e := &toolEnv{tools: map[string]tools.Tool{}, set: st.s.deps.Tools, env: st.tenv,
		policy: permissionSnapshot{mode: st.mode}}
	for _, t := range st.allTools() {
		if st.isActive(t.Decl().Name) {
			e.tools[t.Decl().Name] = t
		}
	}
	return e
}

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// preparedCall is a tool call that passed (or failed) the serial prepare
// phase: lookup, argument validation and the permission gate.
type preparedCall struct {
	call   *llm.ToolCall
	tool   tools.Tool
	res    *tools.Resolved // the one interpretation verdict, preview, checkpoint and execution use
	result *tools.Result   // set when the call ends before execution
	denied bool
	denial *events.Denial  // who refused the call (set with denied)
	auto   any             // autoDecision of the permission step (auto mode)
	danger []string        // ids of the dangerous-list entries the verdict hit
	orig   json.RawMessage // the model's arguments when a hook replaced them
	hook   hookGate        // the PreToolUse verdict the call was judged with (decision, reason)
	mode   approvals.Mode  // the mode the call was judged with
	parent string          // the calling call of a nested call ("": the model's)
	via    bool            // a codemode script's call (viaCodemode on hooks, asks, events)
	depth  int             // nesting level (0: the model's call)
	parked bool            // its ask was deferred: the batch waits (durable.go)
}

// runTools executes the tool calls of msg and records their results. Every
// tool call gets exactly one result. terminate reports a batch whose every
// result asked to end the run (tools.Result.Terminate).
func (s *Session) runTools(r *runState, msg *llm.AssistantMessage) (_ []*llm.ToolResultMessage, terminate bool) {
	calls := msg.ToolCalls()
	if len(calls) == 0 {
		return []*llm.ToolResultMessage{}, false
	}
	env, _ := call(s, func(st *state) *toolEnv { return st.toolEnv() })
	prepared := make([]*preparedCall, len(calls))
	for i, tc := range calls {
		s.publish(events.ToolExecutionStart{ToolCallID: tc.ID, ToolName: tc.Name, Args: tc.Arguments, MCPServer: mcpServer(env.lookup(tc.Name)),
			Path: env.env.Target(tc.Name, tc.Arguments)})
		p := s.prepare(r, env, msg, tc)
		prepared[i] = p
		if p.parked {
			r.parked = true
		} else if p.result != nil {
			s.publishEnd(p, p.result)
		}
	}
	if r.parked {
		// A deferred ask parks the whole batch: nothing runs and no
		// result is recorded; the batch runs once its requests are
		// resolved (durable.go maybeContinue).
		return []*llm.ToolResultMessage{}, false
	}
	results := make([]*tools.Result, len(calls))
	for i, p := range prepared {
		results[i] = p.result
	}
	s.execute(r, env, prepared, results)
	out := make([]*llm.ToolResultMessage, len(calls))
	_ = s.do(func(st *state) {
		st.recordAfter(env.ckpt)
		for i, p := range prepared {
			tr := toolResultMessage(p.call, results[i], st.nowMs())
			st.appendMessage(tr, false)
			out[i] = tr
		}
	})
	terminate = true
	for _, res := range results {
		terminate = terminate && res != nil && res.Terminate
	}
	return out, terminate
}

// prepare runs the serial checks of one call.
func (s *Session) prepare(r *runState, env *toolEnv, msg *llm.AssistantMessage, tc *llm.ToolCall) *preparedCall {
	p := &preparedCall{call: tc}
	switch {
	case msg.Failed():
		p.result = tools.ErrorResult("aborted by user")
		if msg.StopReason == llm.StopError {
			p.result = tools.ErrorResult("not executed: the model reply failed")
		}
		return p
	case msg.StopReason == llm.StopLength:
		p.result = tools.ErrorResult("not executed: the reply hit the output token limit before the call was complete; retry with a shorter call")
		return p
	case r.ctx.Err() != nil:
		p.result = tools.ErrorResult("aborted by user")
		return p
	}
	if repeated(r, tc) {
		p.result = tools.ErrorResult(fmt.Sprintf("not executed: this exact %s call was already made %d times in this run; change the approach", tc.Name, maxRepeats-1))
		r.warning = "repeated_tool_call"
		return p
	}
	t := env.lookup(tc.Name)
	if t == nil && env.lookup(tools.NameCodemode) != nil && env.registered(tc.Name) {
		p.result = tools.ErrorResult(fmt.Sprintf("Tool %s is only callable inside a codemode script: tools.%s({...})", tc.Name, tc.Name))
		return p
	}
	s.gate(r, env, p, t)
	return p
}

// gate runs the checks every call passes, a model's or a nested one
// (CallSession.ExecuteTool): lookup, argument validation, the PreToolUse
// hook and the permission pipeline. p.result is set when the call must
// not run.
func (s *Session) gate(r *runState, env *toolEnv, p *preparedCall, tool tools.Tool) {
	tc := p.call
	if tool == nil {
		p.result = tools.ErrorResult(fmt.Sprintf("Tool %s not found", tc.Name))
		return
	}
	p.tool = tool
	if tc.RawArguments != "" {
		p.result = tools.ErrorResult(fmt.Sprintf("Invalid arguments for %s:\narguments are not a JSON object: %s", tc.Name, truncate(tc.RawArguments, 200)))
		return
	}
	if err := env.validate(tc.Name, tc.Arguments); err != nil {
		p.result = tools.ErrorResult(fmt.Sprintf("Invalid arguments for %s:\n%s", tc.Name, err.Error()))
		return
	}
	gate := s.preToolUse(r, env, tc, p.parent, p.via)
	if gate.result != nil {
		p.result, p.denied = gate.result, gate.denied
		if gate.denied {
			p.denial = &events.Denial{Layer: "hook", Code: events.DenialDenied}
			p.res = nil
			p.mode = env.policy.policy.Mode
			s.hookDenied(r, env, p)
		}
		return
	}
	if gate.args != nil {
		p.orig, tc = tc.Arguments, withArgs(tc, gate.args)
		p.call = tc
	}
	p.hook = hookGate{decision: gate.decision, reason: gate.reason}
	p.res = tools.Resolve(tc.Name, tc.Arguments, env.env) // after a hook's updatedInput
	p.mode = env.policy.policy.Mode
	if a, ok := r.answer(tc); ok && p.parent == "" && !a.matches(tc, p.res) {
		// A deferred call runs on its frozen arguments only while they
		// still mean what the person approved.
		p.result, p.denied = tools.ErrorResult("Not run: "+tools.ErrPathChanged.Error()), true
		p.denial = &events.Denial{Layer: "resolve", Code: events.DenialDenied}
		return
	}
	allowed, denyText, auto := s.permit(r, env, p, gate)
	p.auto = auto
	if p.parked {
		return
	}
	if !allowed {
		p.denied = true
		if r.ctx.Err() != nil {
			denyText = "aborted by user"
			p.denial = &events.Denial{Layer: "abort", Code: events.DenialAborted}
		}
		p.result = tools.ErrorResult(denyText)
	}
}

// maxRepeats is the identical tool call that ends a run (the 5th).
const maxRepeats = 5

// repeated counts identical calls (name and arguments) in the run and
// reports the maxRepeats-th.
func repeated(r *runState, tc *llm.ToolCall) bool {
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	key := tc.Name + "\x00" + string(tc.Arguments)
	r.calls[key]++
	return r.calls[key] >= maxRepeats
}

// execute runs the calls that passed preparation: in parallel when every
// one of them only reads, else one after another in order.
func (s *Session) execute(r *runState, env *toolEnv, prepared []*preparedCall, results []*tools.Result) {
	parallel := true
	for _, p := range prepared {
		if p.result == nil && sequential(p.tool) {
			parallel = false
		}
	}
	var wg sync.WaitGroup
	for i, p := range prepared {
		if p.result != nil {
			continue
		}
		if !parallel && r.ctx.Err() != nil {
			results[i] = tools.ErrorResult("aborted by user")
			s.publishEnd(p, results[i])
			continue
		}
		if !parallel {
			if e := s.tightened(env, p.mode); e != nil {
				// The mode became stricter while an earlier call of the
				// batch ran: the rest is judged again under it.
				env = e
				if ok, text, _ := s.permit(r, env, p, p.hook); !ok {
					p.denied = true
					results[i] = tools.ErrorResult(text)
					s.publishEnd(p, results[i])
					continue
				}
			}
		}
		run := func() {
			res := s.postToolUse(r, p, s.invoke(r.ctx, r, env, p))
			results[i] = res
			s.publishEnd(p, res)
		}
		if parallel {
			wg.Add(1)
			go func() { defer wg.Done(); run() }()
		} else {
			run()
		}
	}
	wg.Wait()
}

// executionModer is implemented by tools that declare how they batch
// (host tools: executionMode "parallel" or "sequential").
type executionModer interface {
	ExecutionMode() string
}

// sequential reports whether t serialises its batch: its declared mode,
// else every class but read.
func sequential(t tools.Tool) bool {
	if em, ok := t.(executionModer); ok {
		switch em.ExecutionMode() {
		case "parallel":
			return false
		case "sequential":
			return true
		}
	}
	return t.Permission() != tools.PermRead
}

// invoke runs one tool through the tools package's runner (panics, error
// texts, the result cap), on the interpretation the verdict judged. The
// files its analysis says a bash command changes are recorded for the
// checkpoint first (file tools record their own target).
func (s *Session) invoke(ctx context.Context, r *runState, env *toolEnv, p *preparedCall) *tools.Result {
	tc := p.call
	if tc.Name == subtaskTool {
		defer s.subtaskSpan()() // task time explains cache misses (reason subtask)
	}
	if tc.Name == tools.NameBash && env.env.BeforeChange != nil && p.res != nil {
		for _, t := range p.res.Changes {
			env.env.BeforeChange(t)
		}
	}
	limit := 0 // the model's call: tools.MaxResultChars
	if p.parent != "" {
		limit = tools.NestedMaxResultChars // the result goes to the calling code
	}
	return tools.Execute(ctx, p.tool, &tools.Call{ID: tc.ID, Args: tc.Arguments, Env: env.env, Resolved: p.res, MaxChars: limit,
		Update: func(partial string) {
			s.publish(events.ToolExecutionUpdate{ToolCallID: tc.ID, ToolName: tc.Name, Partial: partial, ParentToolCallID: p.parent, ViaCodemode: p.via})
		},
		Session: &callSession{s: s, r: r, env: env, parent: tc.ID, parentName: tc.Name, depth: p.depth}})
}

func (s *Session) publishEnd(p *preparedCall, res *tools.Result) {
	s.publish(events.ToolExecutionEnd{
		ToolCallID: p.call.ID, ToolName: p.call.Name, ParentToolCallID: p.parent, ViaCodemode: p.via,
		Result: events.ToolResult{Content: contentOrEmpty(res.Content), IsError: res.IsError, Details: details(res.Details),
			AsText: res.AsText, Terminate: res.Terminate},
		IsError: res.IsError, AutoDecision: p.auto, Denied: p.denied, Dangerous: p.danger, Denial: p.denial, MCPServer: mcpServer(p.tool),
		Diff: (*events.FileDiff)(res.Diff),
	})
}

func toolResultMessage(tc *llm.ToolCall, res *tools.Result, ts int64) *llm.ToolResultMessage {
	return &llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: tc.ID, ToolName: tc.Name,
		Content: contentOrEmpty(res.Content), IsError: res.IsError, Timestamp: ts, Details: details(res.Details)}
}

func contentOrEmpty(c []llm.Content) []llm.Content {
	if c == nil {
		return []llm.Content{}
	}
	return c
}

func details(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// toolEnv is the runner's view of the session's tools for one turn.
type toolEnv struct {
	tools  map[string]tools.Tool
	set    ToolSet
	mcp    *tools.Registry // the MCP servers' tools of this turn (mcp.go)
	env    *tools.Env
	policy permissionSnapshot
	ckpt   *turnCheckpoint
	// refused are the tools in the table that the session refuses (a fork
	// child's disallowed tools): no call reaches them, nested or not.
	refused map[string]bool
}

func (e *toolEnv) lookup(name string) tools.Tool { return e.tools[name] }

// registered reports a tool of the registry the session does not refuse
// (active or not).
func (e *toolEnv) registered(name string) bool {
	if e.set == nil || e.refused[name] {
		return false
	}
	for _, t := range e.set.Tools() {
		if t.Decl().Name == name {
			return true
		}
	}
	return false
}

func (e *toolEnv) validate(name string, args json.RawMessage) error {
	if err, ok := e.mcpValidate(name, args); ok {
		return err
	}
	if e.set == nil {
		return nil
	}
	if _, own := e.tools[name].(inspectTool); own {
		return nil // the session's own tool checks its arguments in Execute
	}
	return e.set.Validate(name, args)
}

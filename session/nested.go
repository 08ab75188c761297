package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// This file is the tools.CallSession of a running call: what ama's
// ToolContext offers a tool beyond its arguments (host tools pass it on to
// the adapter): nested calls through the same pipeline, custom entries and
// sub-agents.

// maxNesting bounds nested tool calls (a tool calling itself).
const maxNesting = 8

// callSession serves one running call.
type callSession struct {
	s          *Session
	r          *runState
	env        *toolEnv
	parent     string // the running call's id
	parentName string
	depth      int // the running call's nesting level
	n          atomic.Int64
}

var _ tools.CallSession = (*callSession)(nil)

// ExecuteTool runs name through the pipeline a model's call takes (gate,
// execution, PostToolUse), announced with tool_execution_* events that
// carry parentToolCallId. Its id is "<parent>.<n>". See lookup for the
// tools it reaches. The call is judged with the session's current mode
// (nestedEnv). The repeated call check is the model's and does not apply.
func (c *callSession) ExecuteTool(ctx context.Context, name string, args json.RawMessage) *tools.Result {
	s := c.s
	env := s.nestedEnv(c.env)
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	// A codemode script's calls are "<outer>_n<k>" (ama's ids) and marked
	// viaCodemode; a host tool's keep "<parent>.<n>".
	via := c.parentName == tools.NameCodemode
	k := c.n.Add(1)
	id := fmt.Sprintf("%s.%d", c.parent, k)
	if via {
		id = fmt.Sprintf("%s_n%d", c.parent, k)
	}
	tc := &llm.ToolCall{Type: "toolCall", ID: id, Name: name, Arguments: args}
	p := &preparedCall{call: tc, parent: c.parent, depth: c.depth + 1, via: via}
	s.publish(events.ToolExecutionStart{ToolCallID: tc.ID, ToolName: name, Args: args, ParentToolCallID: c.parent, ViaCodemode: via,
		Path: env.env.Target(name, args)})
	// The nested call has its own run view: its ctx (the caller's, maybe
	// shortened by the caller's own signal) bounds its ask and execution.
	nr := &runState{ctx: ctx, cancel: func() {}, kind: runAgent}
	switch {
	case p.depth > maxNesting:
		p.result = tools.ErrorResult(fmt.Sprintf("not executed: nested tool calls are limited to %d levels", maxNesting))
	case ctx.Err() != nil:
		p.result = tools.ErrorResult("aborted by user")
	default:
		s.gate(nr, env, p, c.lookup(name))
	}
	res := p.result
	if res == nil {
		res = s.postToolUse(nr, p, s.invoke(ctx, nr, env, p))
	}
	if nr.hookStop.Load() {
		c.r.hookStop.Store(true)
	}
	s.publishEnd(p, res)
	return res
}

// lookup finds the tool of a nested call. A root session reaches every
// registered tool, active or not (ama's rule). A tool the session refuses
// (a fork child's disallowed tools, agents.md §5.3) is never reached, and
// a sub-agent's session reaches only its own tool set (its type's tools):
// nesting must not widen what a child may run.
func (c *callSession) lookup(name string) tools.Tool {
	if t := c.env.lookup(name); t != nil {
		return t
	}
	if c.env.set == nil || c.env.refused[name] || (c.env.env != nil && c.env.env.Depth >= 1) {
		return nil
	}
	for _, t := range c.env.set.Tools() {
		if t.Decl().Name == name {
			return t
		}
	}
	return nil
}

// AppendCustom queues the entry on the actor without waiting (the caller
// may be a connection's read goroutine that the actor waits on); later
// calls of this session see it.
func (c *callSession) AppendCustom(customType string, data json.RawMessage) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = json.RawMessage(`null`)
	}
	c.s.post(func(st *state) { st.appendEntry(store.CustomEntry(customType, data)) })
}

// State reads the custom entries and the thinking level on the actor;
// the active tools are the turn's.
func (c *callSession) State() tools.CallState {
	out, err := call(c.s, func(st *state) tools.CallState {
		o := tools.CallState{Custom: map[string]json.RawMessage{}, ThinkingLevel: st.thinkingLevel}
		for _, e := range st.branch() {
			if e.Type != store.TypeCustom {
				continue
			}
			if ct := e.CustomType(); ct != "" {
				if data, err := store.CustomData[json.RawMessage](e); err == nil {
					o.Custom[ct] = data // a later entry of the type wins
				}
			}
		}
		return o
	})
	if err != nil {
		out = tools.CallState{Custom: map[string]json.RawMessage{}}
	}
	for n := range c.env.tools {
		out.ActiveTools = append(out.ActiveTools, n)
	}
	sort.Strings(out.ActiveTools)
	return out
}

// SpawnSubagent runs the task tool directly (no permission step: it is
// the tool's own facility, as in ama), linked to the calling call: the
// sub-agent events carry its id, the task's progress is its
// tool_execution_update.
func (c *callSession) SpawnSubagent(ctx context.Context, args json.RawMessage) (*tools.Result, bool) {
	if c.env.env == nil || c.env.env.Depth >= 1 || c.env.env.Tasks == nil || c.env.set == nil {
		return nil, false
	}
	// Only with task enabled (host-api.md §5): active and not refused, as
	// a model's task call needs.
	task := c.env.lookup(subtaskTool)
	if task == nil {
		return nil, false
	}
	s := c.s
	defer s.subtaskSpan()()
	return tools.Execute(ctx, task, &tools.Call{ID: c.parent, Args: args, Env: c.env.env,
		Update: func(partial string) {
			s.publish(events.ToolExecutionUpdate{ToolCallID: c.parent, ToolName: c.parentName, Partial: partial})
		}}), true
}

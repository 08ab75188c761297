package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// This file serves the ToolContext members a running host tool reaches
// back through (host-api.md §5): ctx.tools.executeTool (tool.executeTool,
// tool.cancel), ctx.session.appendCustom / lastCustom
// (session.appendCustom; lastCustom is answered by the bridge from the
// snapshot sent with execute) and ctx.spawnSubagent (tool.spawnSubagent).
// Each is bound to the running call it names by toolCallId and ends with
// it.

// liveCall is a running host tool: its toolCallId, session services,
// ctx and partial-output sink.
type liveCall struct {
	id     string
	cs     tools.CallSession
	ctx    context.Context
	env    *tools.Env
	update func(partial any)
}

// errNotRunning answers a request naming a call that has ended.
func errNotRunning(id string) error {
	return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "tool call " + id + " is not running"}
}

// findCall finds the running call a request names: by its callRef (the
// bridge sends it), else (a --host-cmd host that knows only toolCallIds)
// by a toolCallId that exactly one running call has; an ambiguous id
// names none.
func (h *Host) findCall(id, ref string) (liveCall, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ref != "" {
		c, ok := h.calls[ref]
		return c, ok && (id == "" || c.id == id)
	}
	var found liveCall
	n := 0
	for _, c := range h.calls {
		if c.id == id {
			found, n = c, n+1
		}
	}
	return found, n == 1
}

// liveCall is findCall of a call that has a session to reach.
func (h *Host) liveCall(id, ref string) (liveCall, bool) {
	c, ok := h.findCall(id, ref)
	return c, ok && c.cs != nil
}

// nestedCtx is the ctx of one of the adapter's nested requests: the
// running call's, ended early by tool.cancel{callId}.
func (h *Host) nestedCtx(parent context.Context, callID string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	if callID == "" {
		return ctx, cancel
	}
	h.mu.Lock()
	h.nested[callID] = cancel
	h.mu.Unlock()
	return ctx, func() {
		h.mu.Lock()
		delete(h.nested, callID)
		h.mu.Unlock()
		cancel()
	}
}

// nestedParams are the params of a running call's nested requests.
type nestedParams struct {
	ToolCallID string          `json:"toolCallId"`
	CallRef    string          `json:"callRef"`
	CallID     string          `json:"callId"`
	Name       string          `json:"name"`    // tool.executeTool
	Input      json.RawMessage `json:"input"`   // tool.executeTool
	Request    json.RawMessage `json:"request"` // tool.spawnSubagent
}

// serveNested serves a nested request of the running call it names: run works
// on its own goroutine, with a ctx that the call's end or tool.cancel
// ends, and its answer is the request's.
func (h *Host) serveNested(r *reply, raw json.RawMessage, run func(ctx context.Context, lc liveCall, p nestedParams) (any, error)) error {
	var p nestedParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
	}
	lc, ok := h.liveCall(p.ToolCallID, p.CallRef)
	if !ok {
		return errNotRunning(p.ToolCallID)
	}
	ctx, done := h.nestedCtx(lc.ctx, p.CallID)
	go func() {
		defer done()
		res, err := run(ctx, lc, p)
		h.pushTasks(p.ToolCallID, p.CallRef, lc)
		r.send(res, err)
	}()
	return errDeferred
}

// executeTool serves tool.executeTool: the nested call runs through the
// session's pipeline; the answer is its ToolResult.
func (h *Host) executeTool(r *reply, raw json.RawMessage) error {
	return h.serveNested(r, raw, func(ctx context.Context, lc liveCall, p nestedParams) (any, error) {
		return wireOf(lc.cs.ExecuteTool(ctx, p.Name, p.Input)), nil
	})
}

// spawnSubagent serves tool.spawnSubagent: the SubagentRequest becomes the
// task tool's arguments (same names), the task's result a SubagentResult.
func (h *Host) spawnSubagent(r *reply, raw json.RawMessage) error {
	return h.serveNested(r, raw, func(ctx context.Context, lc liveCall, p nestedParams) (any, error) {
		res, ok := lc.cs.SpawnSubagent(ctx, p.Request)
		if !ok {
			return nil, &jsonrpc2.Error{Code: -32000,
				Message: "spawnSubagent is not available: sub-agents are off here (depth 1, or the task tool is not registered)",
				Data:    rawJSON(`{"code":"unavailable"}`)}
		}
		return subagentResultOf(res), nil
	})
}

// appendCustom serves session.appendCustom (a notification).
func (h *Host) appendCustom(raw json.RawMessage) {
	var p struct {
		ToolCallID string          `json:"toolCallId"`
		CallRef    string          `json:"callRef"`
		CustomType string          `json:"customType"`
		Data       json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &p) != nil || p.CustomType == "" {
		return
	}
	if lc, ok := h.liveCall(p.ToolCallID, p.CallRef); ok {
		lc.cs.AppendCustom(p.CustomType, p.Data)
	}
}

// markRead serves session.markRead: ctx.markRead(absolutePath) records a
// read in the session (a relative path is ignored).
func (h *Host) markRead(raw json.RawMessage) {
	var p struct {
		ToolCallID string `json:"toolCallId"`
		CallRef    string `json:"callRef"`
		Path       string `json:"path"`
	}
	if json.Unmarshal(raw, &p) != nil || !filepath.IsAbs(p.Path) {
		return
	}
	if lc, ok := h.liveCall(p.ToolCallID, p.CallRef); ok && lc.env != nil {
		lc.env.Reads.Mark(filepath.Clean(p.Path))
	}
}

// cancelNested serves tool.cancel: the adapter aborted the signal it gave
// a nested request.
func (h *Host) cancelNested(callID string) {
	h.mu.Lock()
	cancel := h.nested[callID]
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// wireResult of a tools.Result: content blocks, isError, details.
type wireOut struct {
	Content []llm.Content `json:"content"`
	IsError bool          `json:"isError"`
	Details any           `json:"details,omitempty"`
}

func wireOf(r *tools.Result) wireOut {
	if r == nil {
		r = tools.ErrorResult("no result")
	}
	c := r.Content
	if c == nil {
		c = []llm.Content{}
	}
	return wireOut{Content: c, IsError: r.IsError, Details: r.Details}
}

// subagentResult is ama's SubagentResult as far as the task tool reports
// it (text, usage, stopReason, isError, status, taskId, sessionFile,
// outputFile).
type subagentResult struct {
	Text        string          `json:"text"`
	Usage       json.RawMessage `json:"usage,omitempty"`
	StopReason  string          `json:"stopReason"`
	IsError     bool            `json:"isError"`
	Status      string          `json:"status,omitempty"`
	TaskID      string          `json:"taskId,omitempty"`
	SessionFile string          `json:"sessionFile,omitempty"`
	OutputFile  string          `json:"outputFile,omitempty"`
}

func subagentResultOf(r *tools.Result) subagentResult {
	out := subagentResult{IsError: r.IsError}
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*llm.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	out.Text = strings.Join(parts, "")
	if r.Details != nil {
		b, err := json.Marshal(r.Details)
		if err == nil {
			var d struct {
				TaskID      string          `json:"taskId"`
				Status      string          `json:"status"`
				SessionFile string          `json:"sessionFile"`
				OutputFile  string          `json:"outputFile"`
				Usage       json.RawMessage `json:"usage"`
				StopReason  string          `json:"stopReason"`
			}
			if json.Unmarshal(b, &d) == nil {
				out.TaskID, out.Status, out.SessionFile, out.OutputFile = d.TaskID, d.Status, d.SessionFile, d.OutputFile
				out.Usage, out.StopReason = d.Usage, d.StopReason
			}
		}
	}
	// The task tool's content names the task for the model; the
	// SubagentResult's text is the sub-agent's own.
	out.Text = strings.TrimPrefix(out.Text, "[task "+out.TaskID+"] ")
	if out.StopReason == "" {
		out.StopReason = "stop"
		if r.IsError {
			out.StopReason = "error"
		}
	}
	return out
}

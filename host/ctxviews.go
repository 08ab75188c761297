package host

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/tools"
)

// This file serves the ToolContext members that are views of session
// machinery owned elsewhere (host-api.md §5):
//
//   - ctx.checkpoint (present when the call's tools.Env records file
//     checkpoints): beforeWrite(absPath) is the checkpoint.beforeWrite
//     request, answered once the turn's checkpoint holds the file's
//     current content (tools.Env.BeforeChange, the hook write and edit
//     call). afterWrite sends nothing: the session takes what the agent
//     left from disk when the tool's batch ends (checkpoint.Turn.After).
//   - ctx.tasks (present when the call's session has a task registry):
//     a snapshot of agents.Registry.Tasks sent with execute, refreshed by
//     a tasks.update notification ahead of every answer to a nested
//     request of the call (so a task the call launched is listed when
//     spawnSubagent resolves).
//   - ctx.maxResultChars: the call's budget (tools.Call.Limit: 30,000, or
//     1 MiB for a nested call), the cut tools.Execute applies to every
//     text block of a result.

// taskLister is the part of the task registry ctx.tasks reads; the
// session's tools.Env.Tasks is an *agents.Registry.
type taskLister interface {
	List() []agents.TaskInfo
}

// taskSnapshot is ctx.tasks of a call: nil without a registry, never a
// nil slice with one (so the adapter sees [] and a defined ctx.tasks).
func taskSnapshot(env *tools.Env) *[]agents.TaskInfo {
	if env == nil {
		return nil
	}
	tl, ok := env.Tasks.(taskLister)
	if !ok || tl == nil {
		return nil
	}
	list := tl.List()
	if list == nil {
		list = []agents.TaskInfo{}
	}
	return &list
}

// fillViews sets the checkpoint, tasks and maxResultChars members of the
// execute context.
func fillViews(tc *toolContext, call *tools.Call) {
	tc.MaxResultChars = call.Limit()
	if call.Env == nil || call.Session == nil {
		return
	}
	tc.Checkpoint = call.Env.BeforeChange != nil
	tc.Tasks = taskSnapshot(call.Env)
}

// pushTasks refreshes the adapter's ctx.tasks of a running call; it is
// sent before the answer of a nested request so the adapter sees the new
// list when that request resolves.
func (h *Host) pushTasks(toolCallID, callRef string, lc liveCall) {
	snap := taskSnapshot(lc.env)
	if snap == nil {
		return
	}
	_ = h.conn.Notify(context.Background(), "tasks.update", map[string]any{"toolCallId": toolCallID, "callRef": callRef, "tasks": *snap})
}

// checkpointBeforeWrite serves checkpoint.beforeWrite: the file joins the
// turn's checkpoint (its content before this write) before the answer.
// BeforeChange may wait for the session's actor, which may itself wait on
// this connection, so it runs on its own goroutine. Sent as a
// notification it is recorded all the same, without an answer.
func (h *Host) checkpointBeforeWrite(r *reply, raw json.RawMessage) error {
	var p struct {
		ToolCallID string `json:"toolCallId"`
		CallRef    string `json:"callRef"`
		Path       string `json:"path"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
	}
	if !filepath.IsAbs(p.Path) {
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "checkpoint.beforeWrite: path must be absolute: " + p.Path}
	}
	lc, ok := h.liveCall(p.ToolCallID, p.CallRef)
	if !ok {
		return errNotRunning(p.ToolCallID)
	}
	if lc.env == nil || lc.env.BeforeChange == nil {
		return nil // checkpoints are off: nothing to record
	}
	go func() {
		lc.env.BeforeChange(filepath.Clean(p.Path))
		r.send(nil, nil) // {}; nothing for a notification
	}()
	return errDeferred
}

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/agents"
)

// This file runs a task on a runner the adapter provided
// (runners.provide; host-api.md §4.12): runner.start over the bridge,
// runner.event notifications back, runner.stop on abort, runner.send to
// continue a finished run on the handle the bridge kept. It implements
// agents.HostRunners and agents.HostSender.

var (
	_ agents.HostRunners = (*Host)(nil)
	_ agents.HostSender  = (*Host)(nil)
)

var runCalls atomic.Int64

// HostRunners lists the provided runners (agents.HostRunners).
func (h *Host) HostRunners() []agents.HostRunnerInfo {
	var out []agents.HostRunnerInfo
	for _, r := range h.Runners() {
		out = append(out, agents.HostRunnerInfo{ID: r.ID, Description: r.Description})
	}
	return out
}

// RunTask starts req on the runner id and waits for its result; the
// runner's progress reaches onEvent in order (on the connection's read
// goroutine). ctx ending sends runner.stop; the runner's result then
// still comes back (usually aborted). A handle the bridge kept is named in
// the result's Handle (for SendTask).
func (h *Host) RunTask(ctx context.Context, id string, req agents.HostRunRequest, onEvent func(agents.HostRunEvent)) (agents.HostRunResult, error) {
	callID := "run" + strconv.FormatInt(runCalls.Add(1), 10)
	return h.runCall(ctx, "runner.start", callID, map[string]any{"runnerId": id, "callId": callID, "request": req}, onEvent)
}

// SendTask continues a finished run on its kept handle (runner.send):
// send(text), then the handle's next result (agents.HostSender). A handle
// the bridge no longer keeps (or a bridge without runner.send) answers
// agents.ErrHandleReleased.
func (h *Host) SendTask(ctx context.Context, handle, text string, onEvent func(agents.HostRunEvent)) (agents.HostRunResult, error) {
	res, err := h.runCall(ctx, "runner.send", handle, map[string]any{"callId": handle, "text": text}, onEvent)
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) && (rpcErr.Code == -32001 || rpcErr.Code == jsonrpc2.CodeMethodNotFound) {
		return res, fmt.Errorf("%w: %s", agents.ErrHandleReleased, rpcErr.Message)
	}
	return res, err
}

// runCall runs one runner call (start or send) under callID.
func (h *Host) runCall(ctx context.Context, method, callID string, params any, onEvent func(agents.HostRunEvent)) (agents.HostRunResult, error) {
	var res struct {
		agents.HostRunResult
		Kept bool `json:"kept"`
	}
	if !h.Alive() {
		return res.HostRunResult, fmt.Errorf("host adapter %s is not running", h.id)
	}
	h.mu.Lock()
	h.runEvents[callID] = onEvent
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.runEvents, callID)
		h.mu.Unlock()
	}()
	done := make(chan error, 1)
	go func() { done <- h.conn.Call(context.Background(), method, params, &res) }()
	finish := func(err error) (agents.HostRunResult, error) {
		if err == nil && res.Kept {
			res.HostRunResult.Handle = callID
		}
		return res.HostRunResult, runErr(h, err)
	}
	select {
	case err := <-done:
		return finish(err)
	case <-ctx.Done():
		_ = h.conn.Notify(context.Background(), "runner.stop", map[string]string{"callId": callID})
	case <-h.gone:
		return res.HostRunResult, fmt.Errorf("host adapter %s exited", h.id)
	}
	select {
	case err := <-done:
		return finish(err)
	case <-h.gone:
		return res.HostRunResult, fmt.Errorf("host adapter %s exited", h.id)
	}
}

func runErr(h *Host, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, jsonrpc2.ErrClosed) || !h.Alive() {
		return fmt.Errorf("host adapter %s is not running", h.id)
	}
	return err
}

// runnerEvent delivers one runner.event notification.
func (h *Host) runnerEvent(raw json.RawMessage) {
	var p struct {
		CallID string              `json:"callId"`
		Event  agents.HostRunEvent `json:"event"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	h.mu.Lock()
	fn := h.runEvents[p.CallID]
	h.mu.Unlock()
	if fn != nil {
		fn(p.Event)
	}
}

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
// runner.event notifications back, runner.stop on abort. It implements
// agents.HostRunners.

var _ agents.HostRunners = (*Host)(nil)

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
// still comes back (usually aborted).
func (h *Host) RunTask(ctx context.Context, id string, req agents.HostRunRequest, onEvent func(agents.HostRunEvent)) (agents.HostRunResult, error) {
	var res agents.HostRunResult
	if !h.Alive() {
		return res, fmt.Errorf("host adapter %s is not running", h.id)
	}
	callID := "run" + strconv.FormatInt(runCalls.Add(1), 10)
	h.mu.Lock()
	h.runEvents[callID] = onEvent
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.runEvents, callID)
		h.mu.Unlock()
	}()
	done := make(chan error, 1)
	go func() {
		done <- h.conn.Call(context.Background(), "runner.start", map[string]any{"runnerId": id, "callId": callID, "request": req}, &res)
	}()
	select {
	case err := <-done:
		return res, runErr(h, err)
	case <-ctx.Done():
		_ = h.conn.Notify(context.Background(), "runner.stop", map[string]string{"callId": callID})
	case <-h.gone:
		return res, fmt.Errorf("host adapter %s exited", h.id)
	}
	select {
	case err := <-done:
		return res, runErr(h, err)
	case <-h.gone:
		return res, fmt.Errorf("host adapter %s exited", h.id)
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

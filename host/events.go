package host

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// omap is a payload with keys in a fixed order.
type kv struct {
	k string
	v any
}
type omap []kv

func (m omap) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, e := range m {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(e.k)
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// hostEvent maps a session event to a host event (spec §6); ok false for
// events hosts do not see.
func hostEvent(e events.Event) (string, omap, bool) {
	switch ev := e.(type) {
	case events.SessionStart:
		m := omap{{"sessionId", ev.SessionID}}
		if ev.SessionFile != "" {
			m = append(m, kv{"sessionFile", ev.SessionFile})
		}
		return "session_start", append(m, kv{"cwd", ev.Cwd}, kv{"reason", ev.Reason}), true
	case events.BeforeAgentStart:
		return "before_agent_start", omap{{"prompt", ev.Prompt}}, true
	case events.AgentStart:
		return "agent_start", omap{}, true
	case events.TurnStart:
		return "turn_start", omap{}, true
	case events.TurnEnd:
		return "turn_end", omap{}, true
	case events.AgentEnd:
		return "agent_end", omap{{"stopReason", ev.StopReason}, {"willRetry", ev.WillRetry}}, true
	case events.AgentBeforeSettle:
		return "agent_before_settle", omap{}, true
	case events.AgentSettled:
		if ev.Warning != "" {
			return "agent_settled", omap{{"warning", ev.Warning}}, true
		}
		return "agent_settled", omap{}, true
	case events.ToolExecutionStart:
		return "tool_call", omap{{"toolCallId", ev.ToolCallID}, {"toolName", ev.ToolName}, {"input", ev.Args}}, true
	case events.ToolExecutionEnd:
		return "tool_result", omap{{"toolCallId", ev.ToolCallID}, {"toolName", ev.ToolName}, {"isError", ev.IsError}}, true
	case events.PermissionRequest:
		return "tool_approval_requested", omap{{"requestId", ev.RequestID}, {"toolName", ev.ToolName}}, true
	case events.PermissionResolved:
		return "tool_approval_resolved", omap{{"requestId", ev.RequestID}, {"decision", ev.Decision}}, true
	case events.CompactionEnd:
		if ev.Result == nil {
			return "", nil, false
		}
		return "session_compact", omap{{"tokensBefore", ev.Result.TokensBefore}}, true
	case events.ModelChanged:
		return "model_select", omap{{"model", ev.Model}}, true
	case events.CacheMiss:
		m := omap{{"missedTokens", ev.MissedTokens}, {"reason", ev.Reason}, {"idleMs", ev.IdleMs}}
		if ev.MissedCost != nil {
			m = append(m, kv{"missedCost", *ev.MissedCost})
		}
		if ev.Detail != "" {
			m = append(m, kv{"detail", ev.Detail})
		}
		return "cache_miss", m, true
	case events.ContextPressure:
		m := omap{{"percent", ev.Percent}, {"threshold", ev.Threshold}}
		if ev.RemainingTokens != nil {
			m = append(m, kv{"remainingTokens", *ev.RemainingTokens})
		}
		if ev.EstimatedTurnsLeft != nil {
			m = append(m, kv{"estimatedTurnsLeft", *ev.EstimatedTurnsLeft})
		}
		return "context_pressure", m, true
	}
	return "", nil, false
}

// Observe implements session.Host: it tracks the current session for
// api.session.* and queues the host event. It does not block the session,
// except for session_start after a switch, which waits (bounded) for the
// handlers as ama does.
func (h *Host) Observe(s *session.Session, e events.Event) {
	switch ev := e.(type) {
	case events.SessionStart:
		h.mu.Lock()
		h.cur = s
		h.info.ID, h.info.Cwd, h.info.File = ev.SessionID, ev.Cwd, ev.SessionFile
		skip := h.skipStart != "" && h.skipStart == ev.SessionID
		h.skipStart = ""
		info := h.info
		h.mu.Unlock()
		h.pushSession(info)
		if skip {
			return
		}
	case events.SessionChanged:
		h.mu.Lock()
		if h.cur != nil && h.cur != s { // not the session the adapter follows
			h.mu.Unlock()
			return
		}
		h.info.ID, h.info.File = ev.SessionID, ev.SessionFile
		info := h.info
		h.mu.Unlock()
		h.pushSession(info)
	case events.ModelChanged:
		h.mu.Lock()
		m := ev.Model
		h.info.Model = &m
		info := h.info
		h.mu.Unlock()
		h.pushSession(info)
	}
	name, payload, ok := hostEvent(e)
	if !ok {
		return
	}
	if name == "session_start" {
		// A session switch waits for the host's handlers, bounded so that
		// a handler waiting on the session itself (sendUser) cannot hang it.
		done := make(chan struct{})
		h.enqueue(name, payload, done)
		select {
		case <-done:
		case <-time.After(switchWait):
			h.log.Warn("host session_start handlers still running; going on")
		}
		return
	}
	h.enqueue(name, payload, nil)
}

// HookExecuted queues the host event hook_executed for one finished
// command hook (spec §6; fed by the hooks dispatcher's observer, so it
// covers every run, SessionStart/SessionEnd and sub-agents' hooks
// included). It does not block.
func (h *Host) HookExecuted(event, command string, exitCode *int, durationMs int64) {
	h.enqueue("hook_executed", omap{{"event", event}, {"command", command}, {"exitCode", exitCode}, {"durationMs", durationMs}}, nil)
}

// switchWait bounds the wait for session_start handlers after a switch.
const switchWait = 10 * time.Second

// pushSession queues a session.update for the bridge (in event order,
// so a handler sees the session its event belongs to).
func (h *Host) pushSession(info SessionInfo) {
	h.evMu.Lock()
	h.evQ = append(h.evQ, evItem{update: &info})
	h.evMu.Unlock()
	select {
	case h.evWake <- struct{}{}:
	default:
	}
}

func (h *Host) subscribed(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs[name]
}

func (h *Host) enqueue(name string, payload any, done chan struct{}) {
	if !h.subscribed(name) || !h.Alive() {
		if done != nil {
			close(done)
		}
		return
	}
	h.evMu.Lock()
	h.evQ = append(h.evQ, evItem{name: name, payload: payload, done: done})
	h.evMu.Unlock()
	select {
	case h.evWake <- struct{}{}:
	default:
	}
}

// deliverEvents sends queued events one at a time, in session order; the
// bridge runs each event's handlers in registration order.
func (h *Host) deliverEvents() {
	defer close(h.evDone)
	for {
		h.evMu.Lock()
		q := h.evQ
		h.evQ = nil
		h.evMu.Unlock()
		for _, it := range q {
			if it.update != nil {
				_ = h.conn.Notify(context.Background(), "session.update", it.update)
				continue
			}
			if it.name == "" { // Flush: everything before it is delivered
				close(it.done)
				continue
			}
			err := h.conn.Call(context.Background(), "event", map[string]any{"name": it.name, "payload": it.payload}, nil)
			if err != nil && h.Alive() {
				h.log.Warn("host event", zap.String("event", it.name), zap.Error(err))
			}
			if it.done != nil {
				close(it.done)
			}
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-h.evWake:
		case <-h.gone:
			h.evMu.Lock()
			q := h.evQ
			h.evQ = nil
			h.evMu.Unlock()
			for _, it := range q {
				if it.done != nil {
					close(it.done)
				}
			}
			return
		}
	}
}

// Flush waits until every host event queued so far has been delivered:
// its handlers have run, and so have the ui.notify calls they made while
// running (the bridge sends them before its answer, and the connection
// handles them in order). Bounded by ctx; at once when the bridge is gone.
func (h *Host) Flush(ctx context.Context) {
	if !h.Alive() {
		return
	}
	done := make(chan struct{})
	h.evMu.Lock()
	h.evQ = append(h.evQ, evItem{done: done})
	h.evMu.Unlock()
	select {
	case h.evWake <- struct{}{}:
	default:
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-h.gone:
	}
}

// Emit delivers a host event and waits until its handlers have run (or
// ctx ends): session_start at startup and session_shutdown.
func (h *Host) Emit(ctx context.Context, name string, payload any) {
	done := make(chan struct{})
	h.enqueue(name, payload, done)
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// StartupSession delivers the startup session_start (awaited, before the
// protocol's hello) and marks the session's own session_start event as
// already delivered. The wait is bounded like create() (Options.
// StartupTimeout, by default CreateTimeout, 10 s): handlers that have
// not settled by then fail the startup (an error wrapping ErrLoad), as
// does ctx ending (its cause is in the error), so a stuck adapter cannot
// hold the process.
func (h *Host) StartupSession(ctx context.Context, info SessionInfo, reason string) error {
	h.mu.Lock()
	h.info = info
	h.skipStart = info.ID
	h.mu.Unlock()
	h.pushSession(info)
	m := omap{{"sessionId", info.ID}}
	if info.File != "" {
		m = append(m, kv{"sessionFile", info.File})
	}
	wait, cancel := context.WithTimeout(ctx, h.opts.StartupTimeout)
	defer cancel()
	done := make(chan struct{})
	h.enqueue("session_start", append(m, kv{"cwd", info.Cwd}, kv{"reason", reason}), done)
	select {
	case <-done:
		return nil
	case <-h.gone:
		return nil // the bridge died: reported by lost(), its tools answer errors
	case <-wait.Done():
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: the host adapter's session_start handlers: %w", ErrLoad, context.Cause(ctx))
	}
	return fmt.Errorf("%w: the host adapter's session_start handlers did not settle within %s", ErrLoad, h.opts.StartupTimeout)
}

// Approve implements session.Host: the adapter's broker (if one is set)
// is asked first. The events.Approval answers ("allow", "deny",
// "allow_session") are final; undefined (or any other value) passes on; a
// throw is deny. Asks are serialised.
func (h *Host) Approve(ctx context.Context, req *events.PermissionRequest) (events.Approval, bool) {
	h.mu.Lock()
	has := h.broker
	h.mu.Unlock()
	if !has || !h.Alive() {
		return "", false
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	var res struct {
		Decision *events.Approval `json:"decision"`
		Error    string           `json:"error"`
	}
	done := make(chan error, 1)
	go func() { done <- h.conn.Call(context.Background(), "ask", map[string]any{"request": req}, &res) }()
	select {
	case err := <-done:
		if err != nil {
			return events.ApprovalDeny, true
		}
	case <-ctx.Done():
		_ = h.conn.Notify(context.Background(), "cancel", map[string]string{"toolCallId": "ask:" + req.RequestID})
		return events.ApprovalDeny, true
	case <-h.gone:
		return "", false
	}
	if res.Decision == nil {
		return "", false
	}
	if d := *res.Decision; d.Valid() {
		return d, true
	}
	return "", false
}

// Shutdown is the exit order's host part without sessions (a start-up
// that failed after the host started): session_shutdown (awaited), then
// dispose. Bounded by ctx. session.Manager.Exit calls the two halves
// itself, with the SessionEnd hooks between them.
func (h *Host) Shutdown(ctx context.Context) {
	h.SessionShutdown(ctx)
	h.Dispose(ctx)
}

// SessionShutdown delivers session_shutdown once and waits for its
// handlers (bounded by ctx); later calls do nothing.
func (h *Host) SessionShutdown(ctx context.Context) {
	h.mu.Lock()
	sent := h.shutdownSent
	h.shutdownSent = true
	h.mu.Unlock()
	if !sent && h.Alive() {
		h.Emit(ctx, "session_shutdown", omap{})
	}
}

// Dispose disposes the adapter and closes the bridge (without
// session_shutdown when none was sent: a startup that failed before the
// session existed). Later calls do nothing.
func (h *Host) Dispose(ctx context.Context) {
	h.SetNotifier(nil)
	h.mu.Lock()
	done, exiting := h.shutdown, h.shutdownSent
	h.shutdown = true
	h.mu.Unlock()
	if done {
		return
	}
	if exiting {
		h.Flush(ctx) // what followed session_shutdown (SessionEnd's hook_executed) goes first
	}
	if h.Alive() {
		_ = h.conn.Call(ctx, "dispose", struct{}{}, nil)
	}
	_ = h.conn.Close()
	select {
	case <-h.exited:
	case <-time.After(2 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
}

// ModelRef is a helper for callers filling SessionInfo.
func ModelRef(provider, id string) *llm.ModelRef { return &llm.ModelRef{Provider: provider, ID: id} }

var _ session.Host = (*Host)(nil)

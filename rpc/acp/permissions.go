package acp

import (
	"context"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
)

// Permission option ids (each also names its kind).
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optRejectOnce  = "reject_once"
)

// permissionOptions are offered with every ask.
var permissionOptions = []permissionOption{
	{OptionID: optAllowOnce, Name: "Allow", Kind: "allow_once"},
	{OptionID: optAllowAlways, Name: "Allow for this session", Kind: "allow_always"},
	{OptionID: optRejectOnce, Name: "Deny", Kind: "reject_once"},
}

// decision maps a session/request_permission answer to the session's
// decision: allow_once → allow, allow_always → allow_session, and
// reject_once, a cancelled outcome or anything not offered → deny.
func decision(r permissionResult) string {
	if r.Outcome.Outcome != "selected" {
		return "deny"
	}
	switch r.Outcome.OptionID {
	case optAllowOnce:
		return "allow"
	case optAllowAlways:
		return "allow_session"
	}
	return "deny"
}

// permAsk is one outstanding session/request_permission.
type permAsk struct {
	cancel context.CancelFunc
}

// approver routes one session's permission asks to the client. It
// implements session.Approver.
type approver struct {
	as *acpSession
}

// Ask sends session/request_permission and waits for the answer. It runs
// on the session's runner goroutine, never on the read loop, so the
// answer (read by the read loop) can always arrive. It returns deny at
// once when nobody can answer; when ctx ends first (cancel, close, the
// approval timeout) or the session's asks are withdrawn, it sends
// $/cancel_request for the request and returns deny.
func (a *approver) Ask(ctx context.Context, req *events.PermissionRequest) string {
	as := a.as
	s := as.srv
	select {
	case <-s.detached:
		return "deny"
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ask := &permAsk{cancel: cancel}
	as.mu.Lock()
	if as.closing {
		as.mu.Unlock()
		return "deny"
	}
	as.asks[ask] = struct{}{}
	as.mu.Unlock()
	defer func() {
		as.mu.Lock()
		delete(as.asks, ask)
		as.mu.Unlock()
	}()
	stop := context.AfterFunc(ctx, func() {}) // no-op; keeps the pattern symmetric with detach below
	defer stop()
	go func() {
		select {
		case <-s.detached:
			cancel()
		case <-ctx.Done():
		}
	}()

	toolCallID := ""
	if req.Context != nil {
		toolCallID = req.Context.ToolCallID
	}
	params := permissionParams{
		SessionID: as.id,
		ToolCall: toolRef{ToolCallID: toolCallID, Title: toolTitle(req.ToolName, req.Input), Kind: toolKind(req.ToolName),
			Status: statusPending, RawInput: rawOrNil(req.Input)},
		Options: permissionOptions,
	}
	id := s.newID()
	w, err := s.conn.DispatchCall(ctx, "session/request_permission", params, pickID(id))
	if err != nil {
		as.log.Warn("session/request_permission not sent", zap.Error(err))
		return "deny"
	}
	var res permissionResult
	if err := w.Wait(ctx, &res); err != nil {
		if ctx.Err() != nil {
			if err := s.conn.Notify(context.Background(), "$/cancel_request", cancelRequestOut{RequestID: id}); err != nil {
				as.log.Debug("$/cancel_request not sent", zap.Error(err))
			}
		} else {
			as.log.Warn("session/request_permission failed", zap.Error(err))
		}
		return "deny"
	}
	return decision(res)
}

// cancelAsks withdraws every outstanding ask of the session (each then
// sends $/cancel_request and yields deny).
func (as *acpSession) cancelAsks() {
	as.mu.Lock()
	defer as.mu.Unlock()
	for ask := range as.asks {
		ask.cancel()
	}
}

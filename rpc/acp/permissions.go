package acp

import (
	"context"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/tools"
)

// Permission option ids (each also names its kind).
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optRejectOnce  = "reject_once"
	optDefer       = "defer" // durable approvals only
)

// permissionOptions are offered with every ask, named in lang.
func permissionOptions(lang i18n.Lang) []permissionOption {
	return []permissionOption{
		{OptionID: optAllowOnce, Name: i18n.T(lang, i18n.ACPOptAllow), Kind: "allow_once"},
		{OptionID: optAllowAlways, Name: i18n.T(lang, i18n.ACPOptAllowSession), Kind: "allow_always"},
		{OptionID: optRejectOnce, Name: i18n.T(lang, i18n.ACPOptDeny), Kind: "reject_once"},
	}
}

// durableOptions are offered to a client that declared durable approvals:
// the usual three and "decide later" (the request stays open across a
// restart; ACP has no kind for it, so it is a reject_once for clients that
// only read kinds, which is what not answering now means for this run).
func durableOptions(lang i18n.Lang) []permissionOption {
	return append(permissionOptions(lang),
		permissionOption{OptionID: optDefer, Name: i18n.T(lang, i18n.ACPOptDefer), Kind: "reject_once"})
}

// decision maps a session/request_permission answer to the session's
// decision: allow_once → allow, allow_always → allow_session, defer (when
// offered) → defer, and reject_once, a cancelled outcome or anything not
// offered → deny.
func decision(r permissionResult, durable bool) events.Approval {
	if r.Outcome.Outcome != "selected" {
		return events.ApprovalDeny
	}
	switch r.Outcome.OptionID {
	case optAllowOnce:
		return events.ApprovalAllow
	case optAllowAlways:
		return events.ApprovalAllowSession
	case optDefer:
		if durable {
			return events.ApprovalDefer
		}
	}
	return events.ApprovalDeny
}

// permAsk is one outstanding session/request_permission.
type permAsk struct {
	cancel context.CancelFunc
}

// approver routes one session's permission asks to the client (allow
// once, allow for the session, deny; anything else is deny). It implements
// session.Approver.
type approver struct {
	as *acpSession
}

// Ask sends session/request_permission for a tool call and waits for the
// answer. It runs on the session's runner goroutine, never on the read
// loop, so the answer (read by the read loop) can always arrive.
func (a *approver) Ask(ctx context.Context, req *events.PermissionRequest) events.Approval {
	toolCallID, title := "", toolTitle(req.ToolName, req.Input)
	if req.Context != nil {
		toolCallID = req.Context.ToolCallID
		if id := req.Context.TaskID; id != "" { // a sub-agent's ask: the origin goes into the title
			toolCallID, title = id+":"+toolCallID, "[task "+id+"] "+title
		} else if tr := a.as.tr; tr != nil {
			toolCallID = tr.ids.get(toolCallID) // the id of this session's tool_call
		}
	}
	ref := toolRef{ToolCallID: toolCallID, Title: title, Kind: toolKind(req.ToolName), Status: statusPending, RawInput: rawOrNil(req.Input)}
	// What a write or edit would change, from the preview the rpc
	// permission_request shows, so the client can show the diff it is
	// asked to approve.
	if p, ok := req.Preview.(*tools.Preview); ok {
		ref.Content = diffContent((*events.FileDiff)(p.Diff))
	}
	durable := a.as.srv.durable.Load() && (req.Context == nil || req.Context.Depth == 0)
	options := permissionOptions(a.as.srv.opts.Lang)
	if durable {
		options = durableOptions(a.as.srv.opts.Lang)
	}
	res, err := a.as.requestPermission(ctx, ref, options)
	if err != nil {
		return events.ApprovalDeny
	}
	return decision(res, durable)
}

// errWithdrawn: the ask ended before the client answered.
var errWithdrawn = localized(errCancelled, i18n.ACPErrWithdrawn)

// requestPermission asks the client about tool and waits for its answer.
// It fails at once when nobody can answer (end of input, session
// closing). When ctx ends first (cancel, close, the approval timeout) or
// the session's asks are withdrawn, it sends $/cancel_request for the
// request and fails with errWithdrawn.
func (as *acpSession) requestPermission(ctx context.Context, tool toolRef, options []permissionOption) (permissionResult, error) {
	s := as.srv
	var res permissionResult
	select {
	case <-s.detached:
		return res, errWithdrawn
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ask := &permAsk{cancel: cancel}
	as.mu.Lock()
	if as.closing {
		as.mu.Unlock()
		return res, errWithdrawn
	}
	as.asks[ask] = struct{}{}
	as.mu.Unlock()
	defer func() {
		as.mu.Lock()
		delete(as.asks, ask)
		as.mu.Unlock()
	}()
	go func() { // the end of input withdraws the ask too
		select {
		case <-s.detached:
			cancel()
		case <-ctx.Done():
		}
	}()

	id := s.newID()
	params := permissionParams{SessionID: as.id, ToolCall: tool, Options: options}
	w, err := s.conn.DispatchCall(ctx, "session/request_permission", params, pickID(id))
	if err != nil {
		as.log.Warn("session/request_permission not sent", zap.Error(err))
		return res, err
	}
	if err := w.Wait(ctx, &res); err != nil {
		if ctx.Err() == nil {
			as.log.Warn("session/request_permission failed", zap.Error(err))
			return res, err
		}
		if err := s.conn.Notify(context.Background(), "$/cancel_request", cancelRequestOut{RequestID: id}); err != nil {
			as.log.Debug("$/cancel_request not sent", zap.Error(err))
		}
		return res, errWithdrawn
	}
	return res, nil
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

// cancelRequestOut is the params of the $/cancel_request we send.
type cancelRequestOut struct {
	RequestID jsonrpc2.ID `json:"requestId"`
}

func pickID(id jsonrpc2.ID) jsonrpc2.CallOption { return jsonrpc2.PickID(id) }

package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// Durable approvals (issue 35). With a client that can answer later
// (SetDurableApprovals), every permission ask of a model's tool call is
// appended to the session file before its permission_request goes out
// (CustomApproval: the request as sent, the call's frozen resolution, the
// deadline and what expiry does), and so is its resolution
// (CustomApprovalResolved). An answer "defer" parks the run: the batch of
// tool calls is not executed, the run settles (agent_settled warning
// waiting_approval) and the assistant message stays the branch's last
// message. What is parked is never held in memory only: parked() reads it
// back from the branch (the last assistant message with tool calls, no tool
// result after it, and the approval entries after it), so a restarted
// process finds exactly what the killed one left.
//
// When every request of the parked batch is resolved, the batch runs once:
// a continuation run (runState.resume) prepares the same calls again (the
// arguments are frozen; the resolution is recomputed and compared with the
// frozen one: a changed path refuses the call with tools.ErrPathChanged),
// takes the recorded answers instead of asking, executes, and the run goes
// on with the model. The resolution entry is written before the run starts,
// so a crash during the continuation can never run the call twice (at
// most once; a second answer is ErrApprovalResolved). Expiry (the
// deadline, on the injected clock, checked when the requests are reopened
// and by a timer while waiting) and a new prompt resolve the open requests
// as deny and close the batch with "not run" results, without a model
// request.

// Custom entry types of durable approvals. ama keeps custom entries of
// unknown types and ignores them, so the files stay readable by ama.
const (
	CustomApproval         = "ama-rpc.approval"
	CustomApprovalResolved = "ama-rpc.approval_resolved"
)

// Reasons of an approval resolution (permission_resolved.reason).
const (
	ResolvedAnswered   = "answered"
	ResolvedExpired    = "expired"
	ResolvedSuperseded = "superseded"
)

// warningWaiting is agent_settled's warning of a run parked on deferred
// approvals.
const warningWaiting = "waiting_approval"

// approvalRecord is the data of a CustomApproval entry.
type approvalRecord struct {
	RequestID  string                    `json:"requestId"`
	Kind       string                    `json:"kind"` // "tool" or "plan"
	ToolCallID string                    `json:"toolCallId,omitempty"`
	Request    *events.PermissionRequest `json:"request,omitempty"`
	Frozen     frozenCall                `json:"resolved"`
	// A plan's request: the plan id and version (its markdown is in the
	// ama.plan entry of that version).
	PlanID      string `json:"planId,omitempty"`
	PlanVersion int    `json:"planVersion,omitempty"`
	// RequestedAt and Deadline are unix milliseconds of Deps.Now.
	RequestedAt int64  `json:"requestedAt"`
	Deadline    int64  `json:"deadline"`
	OnExpiry    string `json:"onExpiry"` // "deny"
}

// frozenCall is the part of tools.Resolved that must be the same when the
// approved call finally runs.
type frozenCall struct {
	Real    string   `json:"real,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	Changes []string `json:"changes,omitempty"`
}

func freeze(r *tools.Resolved) frozenCall {
	if r == nil {
		return frozenCall{}
	}
	return frozenCall{Real: r.Real, Dir: r.Dir, Changes: r.Changes}
}

func (f frozenCall) same(g frozenCall) bool {
	return f.Real == g.Real && f.Dir == g.Dir && slices.Equal(f.Changes, g.Changes)
}

// approvalResolution is the data of a CustomApprovalResolved entry.
type approvalResolution struct {
	RequestID string          `json:"requestId"`
	Decision  events.Approval `json:"decision"`
	Reason    string          `json:"reason"`
	At        int64           `json:"at"`
}

// durableState is the actor's view of durable approvals.
type durableState struct {
	on bool // the client may answer defer
	// known maps every approval request id of the branch to whether it is
	// resolved; nil until the first one (nothing to look for).
	known map[string]bool
	live  map[string]bool        // asks a runner is still waiting on
	stops map[string]func() bool // expiry timers of open requests
	asked map[string]bool        // reopened requests handed to the approver
	cache *parkedBatch           // parked() of the current leaf
	leaf  string                 // the leaf cache was computed for
}

// WaitingApproval is one open durable request in get_state.
type WaitingApproval struct {
	RequestID  string `json:"requestId"`
	Kind       string `json:"kind"`
	ToolName   string `json:"toolName,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	PlanID     string `json:"planId,omitempty"`
	Deadline   int64  `json:"deadline"`
}

// parkedBatch is a batch of tool calls waiting on durable approvals.
type parkedBatch struct {
	msg     *llm.AssistantMessage
	entryID string
	reqs    []approvalRecord
	res     map[string]approvalResolution // by request id
}

// open are the requests without a resolution, in order.
func (b *parkedBatch) open() []approvalRecord {
	var out []approvalRecord
	for _, r := range b.reqs {
		if _, done := b.res[r.RequestID]; !done {
			out = append(out, r)
		}
	}
	return out
}

// maxParkedWalk bounds the walk back from the leaf (entries after the
// parked assistant message: one request and resolution per call, traces).
const maxParkedWalk = 4096

// parked reads the parked batch at the end of the active branch (nil:
// none, or nothing is open).
func (st *state) parked() *parkedBatch {
	if st.durable.known == nil {
		return nil
	}
	leaf := ""
	if l := st.tree.Leaf(); l != nil {
		leaf = *l
	}
	if st.durable.leaf == leaf && leaf != "" {
		return st.durable.cache
	}
	b := st.readParked()
	st.durable.cache, st.durable.leaf = b, leaf
	return b
}

func (st *state) readParked() *parkedBatch {
	branch := st.branch()
	b := &parkedBatch{res: map[string]approvalResolution{}}
	for i, n := len(branch)-1, 0; i >= 0 && n < maxParkedWalk; i, n = i-1, n+1 {
		e := branch[i]
		switch e.Type {
		case store.TypeCustom:
			switch e.CustomType() {
			case CustomApproval:
				if rec, err := store.CustomData[approvalRecord](e); err == nil && rec.Request != nil {
					b.reqs = append(b.reqs, rec)
				}
			case CustomApprovalResolved:
				if res, err := store.CustomData[approvalResolution](e); err == nil {
					b.res[res.RequestID] = res
				}
			}
			continue
		case store.TypeMessage:
			m, err := e.Message()
			if err != nil {
				return nil
			}
			a, ok := m.(*llm.AssistantMessage)
			if !ok || len(a.ToolCalls()) == 0 || len(b.reqs) == 0 {
				return nil
			}
			slices.Reverse(b.reqs)
			b.msg, b.entryID = a, e.ID
			// With every request resolved and no result yet, the batch is
			// running (a continuation) or was cut short by a crash: it
			// is never run again (maybeContinue only follows a
			// resolution made by this process).
			return b
		case store.TypeCustomMessage:
			return nil
		default:
			continue // settings entries (model, thinking level, …)
		}
	}
	return nil
}

func (st *state) anyLive(b *parkedBatch) bool {
	for _, r := range b.reqs {
		if st.durable.live[r.RequestID] {
			return true
		}
	}
	return false
}

// invalidateParked forgets the cached batch (an approval entry was
// appended: the leaf moved anyway, this is for clarity).
func (st *state) invalidateParked() { st.durable.leaf = "" }

// scanApproval learns an approval request of the branch (a custom entry
// of CustomApproval or CustomApprovalResolved; restore's one walk of the
// branch, rebuildPlan, hands them over in branch order).
func (st *state) scanApproval(e *store.Entry) {
	switch e.CustomType() {
	case CustomApproval:
		if rec, err := store.CustomData[approvalRecord](e); err == nil {
			st.knowApproval(rec.RequestID, false)
		}
	case CustomApprovalResolved:
		if res, err := store.CustomData[approvalResolution](e); err == nil {
			st.knowApproval(res.RequestID, true)
		}
	}
}

func (st *state) knowApproval(id string, resolved bool) {
	if st.durable.known == nil {
		st.durable.known = map[string]bool{}
	}
	st.durable.known[id] = st.durable.known[id] || resolved
	st.invalidateParked()
}

// waiting lists the open durable requests for get_state.
func (st *state) waiting() []WaitingApproval {
	var out []WaitingApproval
	if p, rec, ok := st.openPlan(); ok {
		out = append(out, WaitingApproval{RequestID: rec.RequestID, Kind: rec.Kind, PlanID: p.ID, Deadline: rec.Deadline})
	}
	b := st.parked()
	if b == nil {
		return out
	}
	for _, r := range b.open() {
		out = append(out, WaitingApproval{RequestID: r.RequestID, Kind: r.Kind, ToolName: r.Request.ToolName,
			ToolCallID: r.ToolCallID, Deadline: r.Deadline})
	}
	return out
}

// SetDurableApprovals says whether the client may answer defer (its
// capability). Without it nothing of this file happens.
func (s *Session) SetDurableApprovals(on bool) {
	s.durableOn.Store(on)
	s.post(func(st *state) { st.durable.on = on })
}

// recordAsk appends the durable request of req before it is sent (nil
// when the session does not record: no capability, a nested call, a task
// child). The request is live until settleAsk.
func (s *Session) recordAsk(p *preparedCall, req *events.PermissionRequest) *approvalRecord {
	if !s.durableOn.Load() || p.parent != "" || p.depth > 0 || s.parent {
		return nil
	}
	rec, err := call(s, func(st *state) *approvalRecord {
		if !st.durable.on {
			return nil
		}
		now := st.now()
		rec := &approvalRecord{RequestID: req.RequestID, Kind: "tool", ToolCallID: p.call.ID, Request: req,
			Frozen: freeze(p.res), RequestedAt: now.UnixMilli(),
			Deadline: now.Add(st.s.deps.Settings.ApprovalDeferTTL).UnixMilli(), OnExpiry: "deny"}
		st.appendEntry(store.CustomEntry(CustomApproval, rec))
		st.knowApproval(rec.RequestID, false)
		if st.durable.live == nil {
			st.durable.live = map[string]bool{}
		}
		st.durable.live[rec.RequestID] = true
		return rec
	})
	if err != nil {
		return nil
	}
	return rec
}

// settleAsk records how a live durable ask ended: a defer leaves it open
// (armed to expire), any other answer is its resolution.
func (s *Session) settleAsk(rec *approvalRecord, d events.Approval, reason string) {
	_ = s.do(func(st *state) {
		delete(st.durable.live, rec.RequestID)
		if d == events.ApprovalDefer {
			st.armExpiry(*rec)
			return
		}
		if st.durable.known[rec.RequestID] {
			return
		}
		st.resolve(rec.RequestID, d, reason, false)
	})
}

// resolve appends the resolution of request id and reports it.
func (st *state) resolve(id string, d events.Approval, reason string, publish bool) {
	if !d.Allows() {
		d = events.ApprovalDeny
	}
	st.appendEntry(store.CustomEntry(CustomApprovalResolved, approvalResolution{RequestID: id, Decision: d, Reason: reason, At: st.nowMs()}))
	st.knowApproval(id, true)
	if stop := st.durable.stops[id]; stop != nil {
		stop()
		delete(st.durable.stops, id)
	}
	if publish {
		st.s.publish(events.PermissionResolved{RequestID: id, Decision: d, Reason: reason})
	}
}

// AnswerApproval answers a parked durable request. known is false when id
// is not a parked request of this session (a live ask: the caller hands
// the answer to its broker); a defer of a live ask marks it parked first.
// ok is called on the actor before the resolution is reported, so the
// command's response precedes permission_resolved. A request already
// resolved answers ErrApprovalResolved.
func (s *Session) AnswerApproval(id string, d events.Approval, ok func()) (known bool, err error) {
	type out struct {
		known bool
		err   error
	}
	o, err := call(s, func(st *state) out {
		resolved, seen := st.durable.known[id]
		switch {
		case !seen:
			return out{}
		case resolved:
			return out{known: true, err: ErrApprovalResolved}
		case st.durable.live[id]:
			// The runner is waiting: the broker delivers. A defer parks
			// the request now, so the next answer finds it parked even
			// before the runner has taken the defer.
			if d == events.ApprovalDefer {
				delete(st.durable.live, id)
			}
			return out{}
		}
		if _, rec, ok := st.openPlan(); ok && rec.RequestID == id {
			return out{} // a plan is answered by plan_response
		}
		b := st.parked()
		if b == nil || !slices.ContainsFunc(b.open(), func(r approvalRecord) bool { return r.RequestID == id }) {
			return out{known: true, err: ErrApprovalResolved} // not on the branch any more
		}
		ok()
		if d == events.ApprovalDefer {
			return out{known: true}
		}
		st.resolve(id, d, ResolvedAnswered, true)
		st.maybeContinue()
		return out{known: true}
	})
	if err != nil {
		return false, err
	}
	return o.known, o.err
}

// ReopenApprovals is the resume of durable requests: overdue ones expire,
// the open ones are sent again (permission_request) and armed to expire.
// With ask, each open request is also put to the session's approver (ACP:
// session/request_permission) and its answer, unless defer or none,
// resolves it.
func (s *Session) ReopenApprovals(ask bool) {
	s.post(func(st *state) {
		if !st.durable.on || st.run != nil {
			return
		}
		st.expireDue()
		st.reopenPlan()
		b := st.parked()
		if b == nil {
			return
		}
		var reqs []approvalRecord
		for _, r := range b.open() {
			st.s.publish(*r.Request)
			st.armExpiry(r)
			if ask && !st.durable.asked[r.RequestID] {
				if st.durable.asked == nil {
					st.durable.asked = map[string]bool{}
				}
				st.durable.asked[r.RequestID] = true
				reqs = append(reqs, r)
			}
		}
		if len(reqs) > 0 && st.s.approver != nil {
			go s.reask(reqs)
		}
	})
}

// reask puts reopened requests to the approver one at a time.
func (s *Session) reask(reqs []approvalRecord) {
	for _, r := range reqs {
		left := time.UnixMilli(r.Deadline).Sub(s.deps.Now())
		timeout := min(max(left, time.Millisecond), s.deps.Settings.ApprovalTimeout)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		go func() {
			select {
			case <-s.quit: // the session closes: stop asking
				cancel()
			case <-ctx.Done():
			}
		}()
		d := s.approver.Ask(ctx, r.Request)
		answered := ctx.Err() == nil
		cancel()
		_ = s.do(func(st *state) { delete(st.durable.asked, r.RequestID) })
		if answered && d != events.ApprovalDefer {
			_, _ = s.AnswerApproval(r.RequestID, d, func() {})
		}
	}
}

// armExpiry arms the timer that expires r at its deadline.
func (st *state) armExpiry(r approvalRecord) {
	if _, armed := st.durable.stops[r.RequestID]; armed {
		return
	}
	if st.durable.stops == nil {
		st.durable.stops = map[string]func() bool{}
	}
	after := st.s.deps.AfterFunc
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	s := st.s
	wait := max(time.UnixMilli(r.Deadline).Sub(st.now()), 0)
	st.durable.stops[r.RequestID] = after(wait, func() {
		s.post(func(st *state) {
			delete(st.durable.stops, r.RequestID)
			if r.Kind == "plan" {
				st.whenIdle(st.expirePlan)
				return
			}
			if st.run != nil {
				st.whenIdle(st.expireDue)
				return
			}
			st.expireDue()
		})
	})
}

// stopExpiry disarms every expiry timer (the session closes; the next
// process checks the deadlines when it reopens the requests).
func (st *state) stopExpiry() {
	for id, stop := range st.durable.stops {
		stop()
		delete(st.durable.stops, id)
	}
}

// expireDue resolves the parked requests whose deadline passed as deny
// (permission_resolved reason expired) and closes the batch once nothing
// is open.
func (st *state) expireDue() {
	b := st.parked()
	if b == nil {
		return
	}
	now := st.nowMs()
	expired := false
	for _, r := range b.open() {
		if r.Deadline <= now && !st.durable.live[r.RequestID] {
			st.resolve(r.RequestID, events.ApprovalDeny, ResolvedExpired, true)
			expired = true
		}
	}
	if expired {
		st.maybeContinue()
	}
}

// maybeContinue runs the parked batch once its every request is resolved:
// a continuation run, or, when one expired, "not run" results.
func (st *state) maybeContinue() {
	if st.run != nil {
		st.whenIdle(st.maybeContinue)
		return
	}
	b := st.parked()
	if b == nil || len(b.open()) > 0 || st.anyLive(b) || st.closing {
		return
	}
	for _, res := range b.res {
		if res.Reason == ResolvedExpired || res.Reason == ResolvedSuperseded {
			st.closeBatch(b, "Not run: the approval request "+res.Reason)
			return
		}
	}
	answers := map[string]resumeAnswer{}
	for _, r := range b.reqs {
		answers[r.ToolCallID] = resumeAnswer{decision: b.res[r.RequestID].Decision, frozen: r.Frozen,
			tool: r.Request.ToolName, input: r.Request.Input}
	}
	st.ensureFile()
	st.refreshHost()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runState{ctx: ctx, cancel: cancel, kind: runAgent, resume: &resumeBatch{msg: b.msg, entryID: b.entryID, answers: answers}}
	st.run = r
	st.durable.leaf = "" // the branch will move on
	go st.s.runLoop(r, "", nil, nil, nil)
}

// supersede resolves the open requests of a parked batch as deny before a
// new prompt, and closes the batch. A batch whose requests were all
// resolved but which has no results (a crash during its continuation) is
// closed too, so the context the model sees stays whole.
func (st *state) supersede() {
	b := st.parked()
	if b == nil {
		return
	}
	open := b.open()
	if len(open) == 0 {
		st.closeBatch(b, "Unknown: a restart interrupted this approved call; it may or may not have run")
		return
	}
	for _, r := range open {
		st.resolve(r.RequestID, events.ApprovalDeny, ResolvedSuperseded, true)
	}
	st.closeBatch(b, "Not run: the approval request was superseded by a new prompt")
}

// closeBatch gives every call of a parked batch a "not run" result.
func (st *state) closeBatch(b *parkedBatch, text string) {
	for _, tc := range b.msg.ToolCalls() {
		st.appendMessage(toolResultMessage(tc, tools.ErrorResult(text), st.nowMs()), false)
	}
	st.durable.leaf = ""
}

// resumeBatch is the parked batch a continuation run executes first.
type resumeBatch struct {
	msg     *llm.AssistantMessage
	entryID string
	answers map[string]resumeAnswer // by tool call id
}

// resumeAnswer is a recorded answer for one call of the batch.
type resumeAnswer struct {
	decision events.Approval
	frozen   frozenCall
	tool     string          // the request's tool
	input    json.RawMessage // the request's input, as the person saw it
}

// matches reports whether tc is the call the person was asked about
// (after the PreToolUse hooks, as the request was) and still resolves to
// the same paths. The session file is the only link between the request
// and the call, so both are checked.
func (a resumeAnswer) matches(tc *llm.ToolCall, res *tools.Resolved) bool {
	return a.tool == tc.Name && sameJSON(a.input, tc.Arguments) && a.frozen.same(freeze(res))
}

// sameJSON compares two JSON texts ignoring insignificant space.
func sameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// answer is the recorded answer for tc in a continuation run.
func (r *runState) answer(tc *llm.ToolCall) (resumeAnswer, bool) {
	if r.resume == nil {
		return resumeAnswer{}, false
	}
	a, ok := r.resume.answers[tc.ID]
	return a, ok
}

// Plan approvals. A proposed plan waits for plan_response anyway (its
// ama.plan entries make it survive a restart); with durable approvals its
// request is recorded too (kind "plan", id <planId>@v<version>, deadline,
// onExpiry "reject"), sent again as plan_proposed by ReopenApprovals,
// listed in get_state, resolved once (a second plan_response is
// ErrApprovalResolved) and rejected when its deadline passes.

// planRequestID is the durable request id of a plan version.
func planRequestID(p plan.Plan) string { return fmt.Sprintf("%s@v%d", p.ID, p.Version) }

// recordPlan appends the durable request of a proposed plan.
func (st *state) recordPlan(p plan.Plan) {
	if !st.durable.on || st.s.parent || st.s.readOnly {
		return
	}
	now := st.now()
	rec := approvalRecord{RequestID: planRequestID(p), Kind: "plan", PlanID: p.ID, PlanVersion: p.Version,
		RequestedAt: now.UnixMilli(), Deadline: now.Add(st.s.deps.Settings.ApprovalDeferTTL).UnixMilli(), OnExpiry: "reject"}
	st.appendEntry(store.CustomEntry(CustomApproval, rec))
	st.knowApproval(rec.RequestID, false)
	st.armExpiry(rec)
}

// openPlan is the pending plan whose durable request is open.
func (st *state) openPlan() (plan.Plan, approvalRecord, bool) {
	if st.durable.known == nil {
		return plan.Plan{}, approvalRecord{}, false
	}
	p, ok := st.plan.book.Pending()
	if !ok {
		return plan.Plan{}, approvalRecord{}, false
	}
	rid := planRequestID(p)
	if resolved, seen := st.durable.known[rid]; !seen || resolved {
		return plan.Plan{}, approvalRecord{}, false
	}
	branch := st.branch()
	for i := len(branch) - 1; i >= 0; i-- {
		if e := branch[i]; e.Type == store.TypeCustom && e.CustomType() == CustomApproval {
			if rec, err := store.CustomData[approvalRecord](e); err == nil && rec.RequestID == rid {
				return p, rec, true
			}
		}
	}
	return plan.Plan{}, approvalRecord{}, false
}

// reopenPlan expires the open plan request or sends it again.
func (st *state) reopenPlan() {
	p, rec, ok := st.openPlan()
	if !ok {
		return
	}
	if rec.Deadline <= st.nowMs() {
		st.expirePlan()
		return
	}
	st.s.publish(events.PlanProposed{PlanID: p.ID, Version: p.Version, Markdown: p.Markdown, Steps: nonNilSteps(p.Steps), FilePath: p.FilePath})
	st.armExpiry(rec)
}

// expirePlan rejects the pending plan whose request expired.
func (st *state) expirePlan() {
	p, rec, ok := st.openPlan()
	if !ok || rec.Deadline > st.nowMs() {
		return
	}
	rejected := p.With(plan.StatusRejected)
	st.appendEntry(store.CustomEntry(plan.CustomPlan, rejected))
	st.plan.book = st.plan.book.Add(rejected)
	st.resolve(rec.RequestID, events.ApprovalDeny, ResolvedExpired, false)
	st.s.publish(events.PlanResolved{PlanID: p.ID, Decision: string(plan.DecisionReject), Reason: ResolvedExpired})
}

// resolvePlan records the answer to plan p's durable request, if open.
func (st *state) resolvePlan(p plan.Plan, d plan.Decision, reason string) {
	rid := planRequestID(p)
	if resolved, seen := st.durable.known[rid]; !seen || resolved {
		return
	}
	a := events.ApprovalDeny
	if d == plan.DecisionApprove || d == plan.DecisionApproveFresh {
		a = events.ApprovalAllow
	}
	st.resolve(rid, a, reason, false)
}

// planAnswered reports a plan id whose durable request was resolved and
// that is no longer pending (a second plan_response).
func (st *state) planAnswered(id string) bool {
	if st.durable.known == nil || id == "" {
		return false
	}
	prefix := id + "@v"
	for rid, resolved := range st.durable.known {
		if resolved && strings.HasPrefix(rid, prefix) {
			return true
		}
	}
	return false
}

package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/session"
)

// Plan proposals (plan mode) are offered to the client as a permission
// request at the end of the proposing run, inside the same prompt turn:
//
//   - a tool_call of kind switch_mode (id "plan:<planId>:v<version>")
//     carries the plan's markdown, and a plan update lists its steps;
//   - session/request_permission offers approve (allow_once) and reject
//     (reject_once);
//   - approve answers the session's plan_response with approve: the tool
//     call completes, plan mode ends and the execution run starts; the
//     prompt turn goes on and is answered when that run settles;
//   - reject rejects the plan (the tool call fails) and ends the turn;
//   - a cancel, a withdrawn or failed request, or the end of input ends
//     the turn and leaves the plan waiting.

// Plan option ids.
const (
	optApprovePlan = "approve"
	optRejectPlan  = "reject"
)

// planOptions are offered with a proposed plan, named in lang.
func planOptions(lang i18n.Lang) []permissionOption {
	return []permissionOption{
		{OptionID: optApprovePlan, Name: i18n.T(lang, i18n.ACPOptApprovePlan), Kind: "allow_once"},
		{OptionID: optRejectPlan, Name: i18n.T(lang, i18n.ACPOptRejectPlan), Kind: "reject_once"},
	}
}

// maxPlanText caps the markdown shown in the plan's tool call.
const maxPlanText = 64 << 10

func planToolCallID(p *events.PlanProposed) string {
	return fmt.Sprintf("plan:%s:v%d", p.PlanID, p.Version)
}

// planRawInput is the rawInput of a plan's tool call.
type planRawInput struct {
	PlanID   string `json:"planId"`
	Version  int    `json:"version"`
	FilePath string `json:"filePath,omitempty"`
}

// planTitle is "Plan: <first heading or line>".
func planTitle(markdown string) string {
	for _, line := range strings.Split(markdown, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); line != "" {
			return "Plan: " + firstLine(line, 80)
		}
	}
	return "Plan"
}

// planSteps is the plan update of a proposal: its steps, all pending.
func planSteps(steps []plan.Step) planUpdate {
	entries := make([]planEntry, 0, len(steps))
	for _, s := range steps {
		entries = append(entries, planEntry{Content: s.Text, Priority: "medium", Status: "pending"})
	}
	return planUpdate{SessionUpdate: updPlan, Entries: entries}
}

// askPlan offers the proposal p of turn t to the client and carries out
// the answer. It runs on a background goroutine.
func (as *acpSession) askPlan(t *turn, p *events.PlanProposed) {
	id := planToolCallID(p)
	raw, _ := json.Marshal(planRawInput{PlanID: p.PlanID, Version: p.Version, FilePath: p.FilePath})
	title := planTitle(p.Markdown)
	as.srv.notify(as.id, toolCallStart{SessionUpdate: updToolCall, ToolCallID: id, Title: title, Kind: "switch_mode",
		Status: statusPending, RawInput: raw,
		Content: []toolCallContent{{Type: "content", Content: &contentBlock{Type: "text", Text: capHead(p.Markdown, maxPlanText)}}}})
	if len(p.Steps) > 0 {
		as.srv.notify(as.id, planSteps(p.Steps))
	}
	res, err := as.requestPermission(context.Background(), toolRef{ToolCallID: id, Title: title, Kind: "switch_mode",
		Status: statusPending, RawInput: raw}, planOptions(as.srv.opts.Lang))
	choice := ""
	if err == nil && res.Outcome.Outcome == "selected" {
		choice = res.Outcome.OptionID
	}
	switch choice {
	case optApprovePlan:
		as.sess.PlanResponse(session.PlanDecision{PlanID: p.PlanID, Decision: string(plan.DecisionApprove)}, func(_ session.PlanOutcome, err error) {
			if err != nil {
				as.log.Warn("plan approval failed", zap.Error(err))
				as.srv.notify(as.id, toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: id, Status: statusFailed,
					Content: []toolCallContent{textItem(err.Error())}})
				as.srv.background(func() { as.finish(t, nil) })
				return
			}
			// The execution run starts next, on this turn; its
			// agent_settled answers the prompt.
			as.srv.notify(as.id, toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: id, Status: statusCompleted})
		})
	case optRejectPlan:
		as.sess.PlanResponse(session.PlanDecision{PlanID: p.PlanID, Decision: string(plan.DecisionReject)}, func(_ session.PlanOutcome, err error) {
			if err != nil {
				as.log.Warn("plan rejection failed", zap.Error(err))
			}
			as.srv.notify(as.id, toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: id, Status: statusFailed})
			as.srv.background(func() { as.finish(t, nil) })
		})
	default:
		// Not answered: the plan stays waiting (a later prompt may
		// revise it).
		as.srv.notify(as.id, toolCallUpdate{SessionUpdate: updToolUpdate, ToolCallID: id, Status: statusFailed})
		as.finish(t, nil)
	}
}

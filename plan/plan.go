package plan

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Custom entry types written for plan mode (section 5.6).
const (
	CustomPlan         = "ama.plan"           // custom, a Plan snapshot
	CustomPlanState    = "ama.plan_state"     // custom, a State
	CustomPlanMode     = "ama.plan_mode"      // custom_message, the reminder
	CustomPlanModeExit = "ama.plan_mode_exit" // custom_message, ExitNote
	CustomPlanApproved = "ama.plan_approved"  // custom_message, ApprovedHandoff
	CustomTodo         = "ama.todo"           // custom, a TodoList
)

// OriginPlan is the origin of the user messages that start execution turns
// (ApprovedUserText and FreshHandoff).
const OriginPlan = "plan"

// Status is the status of a plan snapshot.
type Status string

// Plan statuses. A plan is proposed first and then becomes exactly one of
// the others; those are final.
const (
	StatusProposed   Status = "proposed"
	StatusSuperseded Status = "superseded"
	StatusApproved   Status = "approved"
	StatusRejected   Status = "rejected"
)

// Valid reports whether s is one of the four plan statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusProposed, StatusSuperseded, StatusApproved, StatusRejected:
		return true
	}
	return false
}

// CanBecome reports whether a plan with status s may be re-recorded with
// status to: only a proposed plan changes, to superseded, approved or
// rejected.
func (s Status) CanBecome(to Status) bool {
	return s == StatusProposed && to.Valid() && to != StatusProposed
}

// Plan is one snapshot of a plan (PlanData, the data of an ama.plan entry
// and the get_plan result). Every status change appends a new snapshot;
// the plan id stays the same across revisions while the version grows.
//
// JSON key order: id, version, status, markdown, steps, sourceEntryId,
// filePath (omitted when empty); steps is always an array.
type Plan struct {
	ID            string `json:"id"`
	Version       int    `json:"version"`
	Status        Status `json:"status"`
	Markdown      string `json:"markdown"`
	Steps         []Step `json:"steps"`
	SourceEntryID string `json:"sourceEntryId"`
	FilePath      string `json:"filePath,omitempty"`
}

// MarshalJSON encodes p with nil Steps as [] and without HTML escaping.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	if p.Steps == nil {
		p.Steps = []Step{}
	}
	return marshal(plain(p))
}

// With returns a copy of p with the given status. It does not check the
// transition; see Status.CanBecome.
func (p Plan) With(status Status) Plan {
	c := p.Clone()
	c.Status = status
	return c
}

// Clone returns a deep copy of p.
func (p Plan) Clone() Plan {
	if p.Steps != nil {
		steps := make([]Step, len(p.Steps))
		for i, s := range p.Steps {
			s.DependsOn = slices.Clone(s.DependsOn)
			steps[i] = s
		}
		p.Steps = steps
	}
	return p
}

// State is the data of an ama.plan_state entry, appended when plan mode is
// entered (Active true) or left (Active false).
type State struct {
	Active            bool   `json:"active"`
	PrePlanMode       string `json:"prePlanMode"`
	PlanID            string `json:"planId,omitempty"`
	ExecutionModel    string `json:"executionModel,omitempty"`
	ExecutionThinking string `json:"executionThinking,omitempty"`
}

// Decision is a plan_response decision.
type Decision string

// The plan_response decisions (section 7.5).
const (
	DecisionApprove      Decision = "approve"
	DecisionApproveFresh Decision = "approve_fresh"
	DecisionRevise       Decision = "revise"
	DecisionReject       Decision = "reject"
)

// Valid reports whether d is a known decision.
func (d Decision) Valid() bool {
	switch d {
	case DecisionApprove, DecisionApproveFresh, DecisionRevise, DecisionReject:
		return true
	}
	return false
}

// ExecutionMode returns the permission mode to switch to on approval: the
// requested mode, else the mode before plan mode, else "default"; "plan"
// itself maps to "default".
func ExecutionMode(requested, prePlan string) string {
	mode := requested
	if mode == "" {
		mode = prePlan
	}
	if mode == "" || mode == "plan" {
		return "default"
	}
	return mode
}

// marshal encodes v like json.Marshal but leaves <, > and & alone, so the
// result is the same whether or not the final encoder escapes HTML.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

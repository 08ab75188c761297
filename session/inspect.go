package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/classifier"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/tools"
)

// Inspect actions (permission_inspect: the RPC command and the tool).
const (
	InspectStatus   = "status"
	InspectConfig   = "config"
	InspectDefaults = "defaults"
	InspectDenials  = "denials"
)

// InspectStatusView is permission_inspect's status: the state and the
// counters.
type InspectStatusView struct {
	Mode    string         `json:"mode"`
	Gate    string         `json:"gate"`
	Logging bool           `json:"logging"`
	Counts  permlog.Counts `json:"counts"`
	// TrackedActions is how many distinct refused actions are counted.
	TrackedActions int `json:"trackedActions"`
}

// RuleView is one effective rule with its record id.
type RuleView struct {
	ID   string `json:"id"`
	Rule string `json:"rule"`
}

// InspectConfigView is the effective configuration, defaults filled in.
type InspectConfigView struct {
	Mode          string     `json:"mode"`
	Gate          string     `json:"gate"`
	LogPath       string     `json:"logPath,omitempty"`
	MaxRejections int        `json:"maxRejections"`
	PlanBash      string     `json:"planBash"`
	Deny          []RuleView `json:"deny"`
	Ask           []RuleView `json:"ask"`
	Allow         []RuleView `json:"allow"`
	AutoSafe      []string   `json:"autoSafeCommands"`
	Unattended    bool       `json:"unattended"`
	Sandbox       bool       `json:"sandbox"`
	// ClassifyReadOnlyTools: auto mode sends reads to the classifier.
	ClassifyReadOnlyTools bool `json:"classifyReadOnlyTools"`
	// Candidate is the candidate policy the gate tries (nil: none).
	Candidate  *CandidateView `json:"candidate,omitempty"`
	Classifier ClassifierView `json:"classifier"`
}

// CandidateView summarises the candidate policy.
type CandidateView struct {
	Mode  string     `json:"mode"`
	Deny  []RuleView `json:"deny"`
	Ask   []RuleView `json:"ask"`
	Allow []RuleView `json:"allow"`
}

// ClassifierView is the auto-mode classifier's effective configuration.
type ClassifierView struct {
	Variant                 string `json:"variant"`
	Model                   string `json:"model"`
	TimeoutMs               int64  `json:"timeoutMs"`
	MaxUserTranscriptTokens int    `json:"maxUserTranscriptTokens"`
	MaxToolTranscriptTokens int    `json:"maxToolTranscriptTokens"`
	ReasoningLevel          string `json:"reasoningLevel"`
	FastMaxTokens           int    `json:"fastMaxTokens"`
	DetailedMaxTokens       int    `json:"detailedMaxTokens"`
	// The two-stage variant's lists.
	Environment []string `json:"environment"`
	Allow       []string `json:"allow"`
	SoftDeny    []string `json:"soft_deny"`
	HardDeny    []string `json:"hard_deny"`
}

// defaultClassifierView is the classifier's configuration with nothing set.
func defaultClassifierView() ClassifierView {
	p := classifier.DefaultPolicy()
	return ClassifierView{Variant: string(classifier.ModeSingle), Model: "the session model", TimeoutMs: classifier.DefaultTimeout.Milliseconds(),
		MaxUserTranscriptTokens: classifier.DefaultMaxUserTranscriptTokens, MaxToolTranscriptTokens: classifier.DefaultMaxToolTranscriptTokens,
		ReasoningLevel: "off", FastMaxTokens: classifier.DefaultFastMaxTokens, DetailedMaxTokens: classifier.DefaultDetailedMaxTokens,
		Environment: nonNil(p.Environment), Allow: p.Allow, SoftDeny: p.SoftDeny, HardDeny: p.HardDeny}
}

// InspectDefaultsView lists the built-in defaults.
type InspectDefaultsView struct {
	BuiltinDeny   []string       `json:"builtinDeny"`
	Gate          string         `json:"gate"`
	MaxRejections int            `json:"maxRejections"`
	Classifier    ClassifierView `json:"classifier"`
}

func rulesView(kind string, rules []approvals.Rule) []RuleView {
	out := make([]RuleView, len(rules))
	for i := range rules {
		out[i] = RuleView{ID: permlog.RuleID(kind, i), Rule: rules[i].String()}
	}
	return out
}

// InspectPermissions answers permission_inspect: read-only views of the
// permission state (status), the effective configuration with its
// defaults (config), the built-in defaults (defaults) and the metadata of
// the recent denials (denials: time, tool, code, layer; no reason text or
// arguments). Nothing is changed.
func (s *Session) InspectPermissions(action string) (any, error) {
	d := s.deps
	pol := d.Policy
	if pol == nil {
		pol = &approvals.Policy{}
	}
	switch action {
	case "", InspectStatus:
		return InspectStatusView{Mode: string(s.PermissionMode()), Gate: s.gateName(), Logging: d.Decisions != nil,
			Counts: s.perm.counts.Snapshot(), TrackedActions: s.perm.rejects.Len()}, nil
	case InspectConfig:
		v := InspectConfigView{Mode: string(s.PermissionMode()), Gate: s.gateName(), LogPath: d.Decisions.PathOrEmpty(),
			MaxRejections: s.maxRejections(), PlanBash: pol.PlanBash, Deny: rulesView("deny", pol.Deny), Ask: rulesView("ask", pol.Ask),
			Allow: rulesView("allow", pol.Allow), AutoSafe: append([]string{}, pol.AutoSafe...), Unattended: pol.Unattended,
			Sandbox: pol.Sandbox.Active, Classifier: s.classifierView(), ClassifyReadOnlyTools: pol.ClassifyReads}
		if v.PlanBash == "" {
			v.PlanBash = approvals.PlanBashReadonly
		}
		if c := d.Settings.Candidate; c != nil {
			v.Candidate = &CandidateView{Mode: string(c.Mode), Deny: rulesView("deny", c.Deny), Ask: rulesView("ask", c.Ask), Allow: rulesView("allow", c.Allow)}
		}
		return v, nil
	case InspectDefaults:
		return InspectDefaultsView{BuiltinDeny: append([]string{}, approvals.BuiltinDeny...), Gate: GateEnforce,
			MaxRejections: defaultMaxRejections, Classifier: defaultClassifierView()}, nil
	case InspectDenials:
		return s.perm.recent.List(), nil
	}
	return nil, fmt.Errorf("%w: action must be status, config, defaults or denials, not %q", ErrInvalidArguments, action)
}

func (s *Session) maxRejections() int {
	if n := s.deps.Settings.MaxRejections; n > 0 {
		return n
	}
	return defaultMaxRejections
}

func (s *Session) classifierView() ClassifierView {
	set := s.deps.Settings
	v := defaultClassifierView()
	if p := set.ClassifierPolicy; p != nil {
		v.Environment, v.Allow, v.SoftDeny, v.HardDeny = nonNil(p.Environment), nonNil(p.Allow), nonNil(p.SoftDeny), nonNil(p.HardDeny)
	}
	if set.ClassifierReasoning != "" {
		v.ReasoningLevel = set.ClassifierReasoning
	}
	if set.ClassifierFastTokens > 0 {
		v.FastMaxTokens = set.ClassifierFastTokens
	}
	if set.ClassifierDetailedTokens > 0 {
		v.DetailedMaxTokens = set.ClassifierDetailedTokens
	}
	if m, err := classifier.ParseMode(set.ClassifierMode); err == nil && m != "" {
		v.Variant = string(m)
	}
	if ref := set.ClassifierModel; ref.Provider != "" {
		v.Model = ref.Provider + "/" + ref.ID
	}
	if set.ClassifierTimeout > 0 {
		v.TimeoutMs = set.ClassifierTimeout.Milliseconds()
	}
	if set.ClassifierUserTokens > 0 {
		v.MaxUserTranscriptTokens = set.ClassifierUserTokens
	}
	if set.ClassifierToolTokens > 0 {
		v.MaxToolTranscriptTokens = set.ClassifierToolTokens
	}
	return v
}

// InspectToolName is the read-only diagnostics tool the model may call
// (Settings.InspectTool).
const InspectToolName = "permission_inspect"

// inspectTool is permission_inspect as a tool: read-only, it goes through
// the permission pipeline like every call (and leaves its record).
type inspectTool struct{ s *Session }

func (inspectTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: InspectToolName,
		Description: "Read-only diagnostics of the permission system: action \"status\" (mode and counters), \"config\" (effective rules and settings), " +
			"\"defaults\" (built-in rules and settings) or \"denials\" (time, tool and code of recent refusals; no reasons). It cannot change anything.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["status","config","defaults","denials"]}},"required":["action"],"additionalProperties":false}`)}
}

func (inspectTool) Permission() string { return tools.PermRead }

func (t inspectTool) Execute(_ context.Context, c *tools.Call) (*tools.Result, error) {
	var in struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal(c.Args, &in); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	v, err := t.s.InspectPermissions(in.Action)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return tools.TextResult(string(b)), nil
}

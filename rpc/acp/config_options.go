package acp

import (
	"encoding/json"
	"slices"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/llm"
)

// Config option ids.
const (
	optMode     = "mode"
	optModel    = "model"
	optThinking = "thinking"
)

// modeInfo names the permission modes (ids are approvals.Modes, strictest
// first).
var modeInfo = map[approvals.Mode]sessionMode{
	approvals.ModePlan:      {Name: "Plan", Description: "Read-only research: only read-only commands run; a plan is proposed for approval before anything changes"},
	approvals.ModeAllowlist: {Name: "Allowlist only", Description: "Only calls matching an allow rule run; everything else is denied without asking"},
	approvals.ModeDefault:   {Name: "Manual", Description: "Ask before writing files or running commands"},
	approvals.ModeAutoEdit:  {Name: "Accept edits", Description: "File edits are accepted; commands still ask"},
	approvals.ModeAuto:      {Name: "Auto", Description: "ama judges each step: safe ones run, risky ones ask"},
	approvals.ModeFullAuto:  {Name: "Bypass permissions", Description: "Everything runs (dangerous commands still ask)"},
}

// availableModes lists the six permission modes as ACP session modes.
func availableModes() []sessionMode {
	out := make([]sessionMode, 0, len(approvals.Modes))
	for _, m := range approvals.Modes {
		info := modeInfo[m]
		info.ID = string(m)
		out = append(out, info)
	}
	return out
}

// validMode reports whether id is a permission mode.
func validMode(id string) bool {
	_, ok := modeInfo[approvals.Mode(id)]
	return ok
}

// settings are the session settings the config options show (from
// session.Shown).
type settings struct {
	mode     string
	model    llm.ModelRef
	thinking string
}

// modeState is the modes object of session/new, load and resume.
func (st settings) modeState() modeState {
	return modeState{CurrentModeID: st.mode, AvailableModes: availableModes()}
}

// configOptions lists every option: permission mode (category mode),
// model (category model, grouped by provider) and thinking level
// (category thought_level, the levels the current model supports).
func configOptions(st settings, models *llm.Registry) []configOption {
	modes := make([]selectValue, 0, len(approvals.Modes))
	for _, m := range availableModes() {
		modes = append(modes, selectValue{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	return []configOption{
		{ID: optMode, Name: "Permission mode", Category: "mode", Type: "select", CurrentValue: st.mode, Options: modes},
		{ID: optModel, Name: "Model", Category: "model", Type: "select", CurrentValue: modelValue(st.model), Options: modelGroups(st.model, models)},
		thinkingOption(st, models),
	}
}

func modelValue(ref llm.ModelRef) string {
	if ref.Provider == "" {
		return ""
	}
	return ref.Provider + "/" + ref.ID
}

// modelGroups lists the models of providers that have a key (and the
// current model's provider), one group per provider.
func modelGroups(cur llm.ModelRef, models *llm.Registry) []selectGroup {
	groups := []selectGroup{}
	if models == nil {
		return groups
	}
	for _, p := range models.Providers() {
		if !p.HasKey && p.ID != cur.Provider {
			continue
		}
		g := selectGroup{Group: p.ID, Name: p.Name, Options: []selectValue{}}
		if g.Name == "" {
			g.Name = p.ID
		}
		seen := false
		for _, m := range p.Models {
			name := m.Name
			if name == "" {
				name = m.Ref()
			}
			g.Options = append(g.Options, selectValue{Value: m.Ref(), Name: name})
			seen = seen || (m.Provider == cur.Provider && m.ID == cur.ID)
		}
		if p.ID == cur.Provider && !seen && cur.ID != "" {
			// An open-model endpoint: the current id is not in the list.
			g.Options = append(g.Options, selectValue{Value: modelValue(cur), Name: modelValue(cur)})
		}
		if len(g.Options) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// thinkingLevels are the levels of the current model.
func thinkingLevels(cur llm.ModelRef, models *llm.Registry) []string {
	var m *llm.Model
	if models != nil && cur.Provider != "" {
		m, _, _ = models.Find(cur.Provider, cur.ID)
	}
	return llm.LevelsFor(m)
}

// thinkingOption shows the effective level: the session's level when the
// model supports it, else "off" (what a model without reasoning gets).
func thinkingOption(st settings, models *llm.Registry) configOption {
	levels := thinkingLevels(st.model, models)
	cur := st.thinking
	if !slices.Contains(levels, cur) {
		cur = levels[0]
	}
	opts := make([]selectValue, 0, len(levels))
	for _, l := range levels {
		opts = append(opts, selectValue{Value: l, Name: thinkingNames[l]})
	}
	return configOption{ID: optThinking, Name: "Thinking level", Category: "thought_level", Type: "select", CurrentValue: cur, Options: opts}
}

var thinkingNames = map[string]string{
	"off": "Off", "minimal": "Minimal", "low": "Low", "medium": "Medium", "high": "High", "xhigh": "Extra high",
}

// handleSetMode: session/set_mode {sessionId, modeId} → {}.
func handleSetMode(s *Server, p *setModeParams) (empty, error) {
	as, err := s.session(p.SessionID)
	if err != nil {
		return empty{}, err
	}
	if !validMode(p.ModeID) {
		return empty{}, errorf(errInvalidParams, "unknown mode %q (one of plan, allowlist, default, auto-edit, auto, full-auto)", p.ModeID)
	}
	_, err = as.sess.SetPermissionMode(p.ModeID)
	return empty{}, err
}

// handleSetConfigOption: session/set_config_option {sessionId, configId,
// value} → {configOptions} (all options, after the change).
func handleSetConfigOption(s *Server, p *setConfigParams) (configOptionsResult, error) {
	as, err := s.session(p.SessionID)
	if err != nil {
		return configOptionsResult{}, err
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil {
		return configOptionsResult{}, errorf(errInvalidParams, "value must be a string (a value id of option %q)", p.ConfigID)
	}
	cur := as.settings()
	switch p.ConfigID {
	case optMode:
		if !validMode(value) {
			return configOptionsResult{}, errorf(errInvalidParams, "unknown mode %q", value)
		}
		_, err = as.sess.SetPermissionMode(value)
	case optModel:
		provider, id, ok := llm.ParseRef(value)
		if !ok {
			return configOptionsResult{}, errorf(errInvalidParams, "model must be provider/id, not %q", value)
		}
		_, err = as.sess.SetModel(provider, id)
	case optThinking:
		if !slices.Contains(thinkingLevels(cur.model, s.deps().Models), value) {
			return configOptionsResult{}, errorf(errInvalidParams, "thinking level %q is not offered for %s", value, modelValue(cur.model))
		}
		_, err = as.sess.SetThinkingLevel(value)
	default:
		return configOptionsResult{}, errorf(errInvalidParams, "unknown config option %q (one of mode, model, thinking)", p.ConfigID)
	}
	if err != nil {
		return configOptionsResult{}, err
	}
	return configOptionsResult{ConfigOptions: as.options()}, nil
}

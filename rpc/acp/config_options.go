package acp

import (
	"encoding/json"
	"slices"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/llm"
)

// Config option ids.
const (
	optMode     = "mode"
	optModel    = "model"
	optThinking = "thinking"
)

// modeNames are the permission modes' display labels (ids are
// approvals.Modes, strictest first). They stay English in every language
// (spec i18n.md §3); the descriptions come from the catalog.
var modeNames = map[approvals.Mode]string{
	approvals.ModePlan:      "Plan",
	approvals.ModeAllowlist: "Allowlist only",
	approvals.ModeDefault:   "Manual",
	approvals.ModeAutoEdit:  "Accept edits",
	approvals.ModeAuto:      "Auto",
	approvals.ModeFullAuto:  "Bypass permissions",
}

// availableModes lists the six permission modes as ACP session modes,
// described in lang.
func availableModes(lang i18n.Lang) []sessionMode {
	out := make([]sessionMode, 0, len(approvals.Modes))
	for _, m := range approvals.Modes {
		out = append(out, sessionMode{ID: string(m), Name: modeNames[m], Description: i18n.T(lang, i18n.ModeDescKey(string(m)))})
	}
	return out
}

// validMode reports whether id is a permission mode.
func validMode(id string) bool {
	_, ok := modeNames[approvals.Mode(id)]
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
func (st settings) modeState(lang i18n.Lang) modeState {
	return modeState{CurrentModeID: st.mode, AvailableModes: availableModes(lang)}
}

// configOptions lists every option: permission mode (category mode),
// model (category model, grouped by provider) and thinking level
// (category thought_level, the levels the current model supports); the
// names and descriptions in lang.
func configOptions(st settings, models *llm.Registry, lang i18n.Lang) []configOption {
	modes := make([]selectValue, 0, len(approvals.Modes))
	for _, m := range availableModes(lang) {
		modes = append(modes, selectValue{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	return []configOption{
		{ID: optMode, Name: i18n.T(lang, i18n.ACPConfigMode), Category: "mode", Type: "select", CurrentValue: st.mode, Options: modes},
		{ID: optModel, Name: i18n.T(lang, i18n.ACPConfigModel), Category: "model", Type: "select", CurrentValue: modelValue(st.model), Options: modelGroups(st.model, models)},
		thinkingOption(st, models, lang),
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
func thinkingOption(st settings, models *llm.Registry, lang i18n.Lang) configOption {
	levels := thinkingLevels(st.model, models)
	cur := st.thinking
	if !slices.Contains(levels, cur) {
		cur = levels[0]
	}
	opts := make([]selectValue, 0, len(levels))
	for _, l := range levels {
		opts = append(opts, selectValue{Value: l, Name: i18n.T(lang, i18n.ThinkingNameKey(l))})
	}
	return configOption{ID: optThinking, Name: i18n.T(lang, i18n.ACPConfigThinking), Category: "thought_level", Type: "select", CurrentValue: cur, Options: opts}
}

// handleSetMode: session/set_mode {sessionId, modeId} → {}.
func handleSetMode(s *Server, p *setModeParams) (empty, error) {
	as, err := s.session(p.SessionID)
	if err != nil {
		return empty{}, err
	}
	if !validMode(p.ModeID) {
		return empty{}, localized(errInvalidParams, i18n.ACPErrUnknownModeOneOf, p.ModeID)
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
		return configOptionsResult{}, localized(errInvalidParams, i18n.ACPErrValueNotString, p.ConfigID)
	}
	cur := as.settings()
	switch p.ConfigID {
	case optMode:
		if !validMode(value) {
			return configOptionsResult{}, localized(errInvalidParams, i18n.ACPErrUnknownMode, value)
		}
		_, err = as.sess.SetPermissionMode(value)
	case optModel:
		provider, id, ok := llm.ParseRef(value)
		if !ok {
			return configOptionsResult{}, localized(errInvalidParams, i18n.ACPErrBadModel, value)
		}
		_, err = as.sess.SetModel(provider, id)
	case optThinking:
		if !slices.Contains(thinkingLevels(cur.model, s.deps().Models), value) {
			return configOptionsResult{}, localized(errInvalidParams, i18n.ACPErrThinkingNotOffered, value, modelValue(cur.model))
		}
		_, err = as.sess.SetThinkingLevel(value)
	default:
		return configOptionsResult{}, localized(errInvalidParams, i18n.ACPErrUnknownConfig, p.ConfigID)
	}
	if err != nil {
		return configOptionsResult{}, err
	}
	return configOptionsResult{ConfigOptions: as.options()}, nil
}

package app

import (
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/codemode"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/tools"
)

// selectCodemode resolves the tool preset and the codemode mode (flags
// over the user config; a project may only turn codemode off) and
// returns the base active list: the preset's tools plus the host tools in
// active, with codemode as the mode says. tools.default and --tools
// apply after it.
func selectCodemode(flags *Flags, user, project *config.Config, active []string, log *zap.Logger) (codemode.Selection, []string, error) {
	preset := flags.ToolsPreset
	if preset == "" {
		preset = user.Tools.Preset
	}
	modeText := flags.Codemode
	if modeText == "" {
		modeText = user.Codemode.Mode
	}
	mode, err := codemode.ParseMode(modeText)
	if err != nil {
		if flags.Codemode != "" {
			return codemode.Selection{}, nil, fmt.Errorf("%w: --codemode: %v", errUsage, err)
		}
		return codemode.Selection{}, nil, fmt.Errorf("%w: codemode.mode: %v", config.ErrInvalid, err)
	}
	switch pm := project.Codemode.Mode; pm {
	case "":
	case string(codemode.ModeOff):
		mode = codemode.ModeOff
	default:
		log.Warn("project config may only set codemode.mode to off; ignored", zap.String("mode", pm))
	}
	sel, err := codemode.Resolve(preset, mode)
	if err != nil {
		if flags.ToolsPreset != "" {
			return sel, nil, fmt.Errorf("%w: --tools-preset: %v", errUsage, err)
		}
		return sel, nil, fmt.Errorf("%w: tools.preset: %v", config.ErrInvalid, err)
	}
	if sel.Mode != codemode.ModeOff && user.Codemode.RequireStrict && !codemode.Strict {
		log.Warn("codemode disabled: scripts are not isolated and codemode.requireStrict is set")
		sel.Mode = codemode.ModeOff
	}
	var hostTools []string
	for _, n := range active {
		if !slices.Contains(DefaultActiveTools, n) {
			hostTools = append(hostTools, n)
		}
	}
	return sel, sel.Active(hostTools), nil
}

// registerCodemode adds the codemode tool to the registry when the mode
// is not off. all is read when a script starts (and once for the
// description): it must return the final tool set, host tools included.
func registerCodemode(deps *session.Deps, sel codemode.Selection, active []string, user *config.Config, all func() []tools.Tool) error {
	if sel.Mode == codemode.ModeOff {
		return nil
	}
	reg, ok := deps.Tools.(*tools.Registry)
	if !ok {
		return fmt.Errorf("codemode: the tool set is not a registry")
	}
	var direct []string
	if sel.Mode == codemode.ModeOn {
		direct = slices.DeleteFunc(slices.Clone(active), func(n string) bool { return n == codemode.Name })
	}
	t := codemode.New(codemode.Config{Mode: sel.Mode, Direct: direct, Restrict: sel.Restrict, List: all,
		InlineBudget: user.Codemode.InlineBudget, MaxHeapMB: user.Codemode.MaxHeapMb, MaxCalls: user.Codemode.MaxToolCalls,
		MaxResultChars: user.Tools.MaxToolResultChars})
	more, err := reg.With(t)
	if err != nil {
		return fmt.Errorf("codemode: %w", err)
	}
	deps.Tools = more
	return nil
}

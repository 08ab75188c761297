package codemode

import (
	"fmt"
	"slices"
)

// Mode says whether and how the codemode tool is offered.
type Mode string

const (
	ModeOff  Mode = "off"  // not registered
	ModeOn   Mode = "on"   // offered beside the preset's tools
	ModeOnly Mode = "only" // the only tool the model sees
)

// ParseMode reads a mode ("" = none given).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "", ModeOff, ModeOn, ModeOnly:
		return m, nil
	}
	return "", fmt.Errorf("codemode mode must be off, on or only, not %q", s)
}

// Tool presets (tools.preset, --tools-preset).
const (
	PresetDefault      = "default"
	PresetMinimal      = "minimal"
	PresetCodemodeOnly = "codemode-only"
	PresetCoordinator  = "coordinator"
)

// Strict reports whether scripts are isolated from the file system,
// network, processes and timers by construction. The engine (goja in a
// child process whose only channel is the tool protocol) makes them so,
// hence the read permission class.
const Strict = true

// DefaultOn says whether the default preset turns codemode on by itself.
// ama does so only on a strict runtime; the transcripts recorded from ama
// (a non-strict Node) offer the six direct tools and no codemode, and hosts
// and prompt caches expect that set. So ama-rpc keeps the default preset's
// tool list as recorded: codemode is on only when asked for
// (--codemode on|only, codemode.mode, or the codemode-only preset).
const DefaultOn = false

// Selection is a resolved preset and mode.
type Selection struct {
	Preset string
	Mode   Mode
	// Direct are the preset's builtin tools offered to the model (before
	// codemode is added and tools.default/--tools apply).
	Direct []string
	// Restrict limits scripts to the active tools (coordinator).
	Restrict bool
}

// Resolve picks the preset and mode: an explicit mode (config or flag)
// wins, else the preset's (README "Codemode"). `codemode` is the old name
// of codemode-only.
func Resolve(preset string, explicit Mode) (Selection, error) {
	if preset == "codemode" {
		preset = PresetCodemodeOnly
	}
	s := Selection{Preset: preset}
	switch preset {
	case "", PresetDefault:
		s.Preset, s.Direct, s.Mode = PresetDefault, []string{"bash", "edit", "glob", "grep", "read", "write"}, ModeOff
		if Strict && DefaultOn {
			s.Mode = ModeOn
		}
	case PresetMinimal:
		s.Direct, s.Mode = []string{"bash", "edit", "read", "write"}, ModeOff
	case PresetCodemodeOnly:
		s.Direct, s.Mode = nil, ModeOnly
	case PresetCoordinator:
		s.Direct, s.Mode, s.Restrict = []string{"read"}, ModeOff, true
	default:
		return s, fmt.Errorf("tools preset must be default, minimal, codemode-only or coordinator, not %q", preset)
	}
	if explicit != "" {
		s.Mode = explicit
	}
	return s, nil
}

// Active is the active tool list of a selection: the direct tools plus
// the host tools, with codemode added in `on` mode; `only` keeps codemode
// alone (host tools are reached from scripts).
func (s Selection) Active(hostTools []string) []string {
	if s.Mode == ModeOnly {
		return []string{Name}
	}
	out := slices.Clone(s.Direct)
	for _, h := range hostTools {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if s.Mode == ModeOn && !slices.Contains(out, Name) {
		out = append(out, Name)
	}
	return out
}

package approvals

import (
	"errors"
	"fmt"
	"strings"
)

// Mode is a permission mode.
type Mode string

// The six permission modes, strictest first.
const (
	ModePlan      Mode = "plan"
	ModeAllowlist Mode = "allowlist"
	ModeDefault   Mode = "default"
	ModeAutoEdit  Mode = "auto-edit"
	ModeAuto      Mode = "auto"
	ModeFullAuto  Mode = "full-auto"
)

// Modes lists every mode in strictness order (strictest first).
var Modes = []Mode{ModePlan, ModeAllowlist, ModeDefault, ModeAutoEdit, ModeAuto, ModeFullAuto}

// ErrInvalidMode is wrapped by ParseMode for names that are not a mode.
var ErrInvalidMode = errors.New("invalid permission mode")

// ParseMode returns the mode with the given name. Surrounding white space is
// ignored; the name is case-sensitive, as on the wire.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.TrimSpace(s))
	if m.Strictness() < 0 {
		return "", fmt.Errorf("%w: %q", ErrInvalidMode, s)
	}
	return m, nil
}

// Strictness orders the modes: plan is 0, full-auto is 5. Unknown modes
// return -1.
func (m Mode) Strictness() int {
	for i, x := range Modes {
		if x == m {
			return i
		}
	}
	return -1
}

// Valid reports whether m is one of the six modes.
func (m Mode) Valid() bool { return m.Strictness() >= 0 }

// Class is the permission class a tool declares.
type Class string

// Permission classes.
const (
	ClassRead    Class = "read"
	ClassWrite   Class = "write"
	ClassExecute Class = "execute"
	ClassMemory  Class = "memory"
)

// Decision is the outcome of a permission check.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Plan-mode handling of bash commands (config plan.bash).
const (
	PlanBashReadonly = "readonly"
	PlanBashAsk      = "ask"
	PlanBashDeny     = "deny"
)

// planBashStrictness orders the plan.bash values, larger is stricter.
func planBashStrictness(s string) int {
	switch s {
	case PlanBashAsk:
		return 0
	case PlanBashReadonly, "":
		return 1
	case PlanBashDeny:
		return 2
	}
	return -1
}

package approvals

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Layer is one configuration source. Empty fields change nothing.
type Layer struct {
	Mode     string
	Allow    []string
	Deny     []string
	Ask      []string
	AutoSafe []string
	// DisableBuiltinDeny drops built-in deny rules by their exact text, or
	// all of them with "*".
	DisableBuiltinDeny []string
	PlanBash           string
	// ClassifyReads: auto mode's read-class calls go to the classifier
	// (any layer may set it; it only tightens).
	ClassifyReads bool
}

// ErrInvalidConfig is wrapped by BuildPolicy for unusable user or
// command-line settings.
var ErrInvalidConfig = errors.New("invalid permission configuration")

// BuildPolicy merges the user, project and command-line layers, in that
// order. The project layer (checked into the repository) may only tighten:
// its deny rules are added, its mode applies only when stricter than the
// mode so far and never when it is auto or full-auto, and its allow rules,
// autoSafe entries and built-in deny removals are ignored with a warning.
// The command-line layer comes last and may relax. Malformed deny rules are
// kept (they fail closed), malformed allow rules are dropped; both warn.
// Invalid user or command-line modes and plan.bash values are errors.
func BuildPolicy(user, project, cli Layer) (*Policy, []string, error) {
	var warns []string
	warn := func(f string, a ...any) { warns = append(warns, fmt.Sprintf(f, a...)) }
	pol := &Policy{Mode: ModeDefault, PlanBash: PlanBashReadonly,
		ClassifyReads: user.ClassifyReads || project.ClassifyReads || cli.ClassifyReads}

	// Mode: user, then the project (tighten only), then the command line.
	if err := applyMode(pol, "user", user.Mode); err != nil {
		return nil, warns, err
	}
	applyProjectMode(pol, project.Mode, warn)
	if err := applyMode(pol, "command-line", cli.Mode); err != nil {
		return nil, warns, err
	}

	// plan.bash.
	for _, l := range []struct {
		name, val string
		project   bool
	}{{"user", user.PlanBash, false}, {"project", project.PlanBash, true}, {"command-line", cli.PlanBash, false}} {
		v := strings.TrimSpace(l.val)
		if v == "" {
			continue
		}
		if planBashStrictness(v) < 0 {
			if l.project {
				warn("project plan.bash %q is not one of readonly, ask, deny; ignored", v)
				continue
			}
			return nil, warns, fmt.Errorf("%w: %s plan.bash %q is not one of readonly, ask, deny", ErrInvalidConfig, l.name, v)
		}
		if l.project && planBashStrictness(v) < planBashStrictness(pol.PlanBash) {
			warn("project plan.bash %q would loosen %q; ignored", v, pol.PlanBash)
			continue
		}
		pol.PlanBash = v
	}

	// Allow rules: user and command line only.
	if len(project.Allow) > 0 {
		warn("project configuration may not add allow rules; ignored %d", len(project.Allow))
	}
	seen := map[string]bool{}
	for _, s := range slices.Concat(user.Allow, cli.Allow) {
		r, err := ParseRule(s)
		if err != nil {
			warn("allow rule dropped: %v", err)
			continue
		}
		if !seen[r.String()] {
			seen[r.String()] = true
			pol.Allow = append(pol.Allow, r)
		}
	}

	// Deny rules: built-ins (unless disabled by user or command line), then
	// every layer.
	if len(project.DisableBuiltinDeny) > 0 {
		warn("project configuration may not disable built-in deny rules; ignored")
	}
	disabled := slices.Concat(user.DisableBuiltinDeny, cli.DisableBuiltinDeny)
	seen = map[string]bool{}
	for _, s := range BuiltinDeny {
		if slices.Contains(disabled, "*") || slices.Contains(disabled, s) {
			continue
		}
		r, _ := ParseRule(s)
		seen[r.String()] = true
		pol.Deny = append(pol.Deny, r)
	}
	for _, s := range slices.Concat(user.Deny, project.Deny, cli.Deny) {
		r, err := ParseRule(s)
		if err != nil {
			warn("deny rule kept although malformed (it matches broadly): %v", err)
		}
		if !seen[r.String()] {
			seen[r.String()] = true
			pol.Deny = append(pol.Deny, r)
		}
	}

	// Ask rules: every layer (a project may make ama ask, never allow).
	// Malformed ones are kept: like a deny rule they match broadly.
	seen = map[string]bool{}
	for _, s := range slices.Concat(user.Ask, project.Ask, cli.Ask) {
		r, err := ParseRule(s)
		if err != nil {
			warn("ask rule kept although malformed (it matches broadly): %v", err)
		}
		if !seen[r.String()] {
			seen[r.String()] = true
			pol.Ask = append(pol.Ask, r)
		}
	}

	// autoSafeCommands: never from the project.
	if len(project.AutoSafe) > 0 {
		warn("project configuration may not extend autoSafeCommands; ignored %d", len(project.AutoSafe))
	}
	for _, s := range slices.Concat(user.AutoSafe, cli.AutoSafe) {
		if s = collapseSpace(s); s != "" && !slices.Contains(pol.AutoSafe, s) {
			pol.AutoSafe = append(pol.AutoSafe, s)
		}
	}
	return pol, warns, nil
}

// applyMode sets the mode of a trusted layer (user, command line).
func applyMode(pol *Policy, layer, mode string) error {
	if strings.TrimSpace(mode) == "" {
		return nil
	}
	m, err := ParseMode(mode)
	if err != nil {
		return fmt.Errorf("%w: %s mode: %w", ErrInvalidConfig, layer, err)
	}
	pol.Mode = m
	return nil
}

// applyProjectMode lets the project mode tighten the mode so far.
func applyProjectMode(pol *Policy, mode string, warn func(string, ...any)) {
	if strings.TrimSpace(mode) == "" {
		return
	}
	m, err := ParseMode(mode)
	switch {
	case err != nil:
		warn("project mode ignored: %v", err)
	case m == ModeAuto || m == ModeFullAuto:
		warn("project configuration may not select mode %q; ignored", m)
	case m.Strictness() >= pol.Mode.Strictness():
		if m != pol.Mode {
			warn("project mode %q is not stricter than %q; ignored", m, pol.Mode)
		}
	default:
		pol.Mode = m
	}
}

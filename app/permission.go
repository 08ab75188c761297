package app

import (
	"fmt"
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/classifier"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/session"
)

// permissionGate wires the decision log, the gate mode and the
// rejection limit. logPath is the user's alone (a project cannot make
// ama-rpc write a file of its choosing); a project may only tighten the
// gate from shadow to enforce. The log is opened here, once per process.
func permissionGate(deps *session.Deps, user, project *config.Config, log *zap.Logger) error {
	if project.Permission.LogPath != "" {
		log.Warn("project configuration may not set permission.logPath; ignored")
	}
	gate, err := gateMode(user.Permission.Gate, project.Permission.Gate, log)
	if err != nil {
		return err
	}
	deps.Settings.PermissionGate = gate
	if n := user.Permission.MaxRejections; n < 0 {
		return fmt.Errorf("%w: permission.maxRejections must be a positive integer, not %d", config.ErrInvalid, n)
	}
	deps.Settings.MaxRejections = user.Permission.MaxRejections
	deps.Settings.InspectTool = user.Permission.InspectTool
	if project.Permission.MaxRejections > 0 && (deps.Settings.MaxRejections == 0 || project.Permission.MaxRejections < deps.Settings.MaxRejections) {
		deps.Settings.MaxRejections = project.Permission.MaxRejections // fewer retries only tightens
	}
	if project.Permission.Candidate != nil {
		log.Warn("project configuration may not set permission.candidate; ignored")
	}
	if c := user.Permission.Candidate; c != nil && deps.Policy != nil {
		cand, err := candidatePolicy(deps.Policy, c, log)
		if err != nil {
			return err
		}
		deps.Settings.Candidate = cand
	}
	if err := classifierSettings(deps, user, project, log); err != nil {
		return err
	}
	if p := user.Permission.LogPath; p != "" {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%w: permission.logPath must be an absolute path, not %q", config.ErrInvalid, p)
		}
		l, err := permlog.OpenLog(filepath.Clean(p))
		if err != nil {
			return fmt.Errorf("%w: permission.logPath: %w", config.ErrInvalid, err)
		}
		deps.Decisions = l
	}
	return nil
}

// gateMode merges the user's gate mode with the project's, which may only
// move shadow to enforce.
func gateMode(user, project string, log *zap.Logger) (string, error) {
	g := session.GateEnforce
	switch user {
	case "":
	case session.GateOff, session.GateShadow, session.GateEnforce:
		g = user
	default:
		return "", fmt.Errorf("%w: permission.gate must be off, shadow or enforce, not %q", config.ErrInvalid, user)
	}
	switch {
	case project == "" || project == g:
	case project == session.GateEnforce && g == session.GateShadow:
		g = project
	default:
		log.Warn("project permission.gate may only tighten shadow to enforce; ignored", zap.String("gate", project))
	}
	return g, nil
}

// candidatePolicy is base with the candidate's changes: deny and ask rules
// added, allow rules replaced when the candidate lists any, its mode
// (applied per call only when stricter than the session's).
func candidatePolicy(base *approvals.Policy, c *config.Candidate, log *zap.Logger) (*approvals.Policy, error) {
	cand := *base
	cand.Mode = ""
	if c.Mode != "" {
		m, err := approvals.ParseMode(c.Mode)
		if err != nil {
			return nil, fmt.Errorf("%w: permission.candidate.mode: %w", config.ErrInvalid, err)
		}
		cand.Mode = m
	}
	cand.Deny = tightenRules(base.Deny, c.Deny, "deny", log)
	cand.Ask = tightenRules(base.Ask, c.Ask, "ask", log)
	if c.Allow != nil {
		cand.Allow = nil
		for _, s := range c.Allow {
			r, err := approvals.ParseRule(s)
			if err != nil {
				log.Warn("candidate allow rule dropped", zap.Error(err))
				continue
			}
			cand.Allow = append(cand.Allow, r)
		}
	}
	return &cand, nil
}

// classifierSettings takes the classifier's lists, stage limits and
// reasoning level from the user config (a project cannot weaken the
// classifier: its values are ignored with a warning).
func classifierSettings(deps *session.Deps, user, project *config.Config, log *zap.Logger) error {
	pp := project.Permission
	if pp.ClassifierLists != nil || pp.ClassifierReasoningLevel != "" || pp.FastClassifierMaxTokens != 0 || pp.DetailedClassifierMaxTokens != 0 {
		log.Warn("project configuration may not change the classifier's lists, limits or reasoning level; ignored")
	}
	up := user.Permission
	if l := up.ClassifierLists; l != nil {
		pol, err := classifier.ExpandPolicy(l.Environment, l.Allow, l.SoftDeny, l.HardDeny)
		if err != nil {
			return fmt.Errorf("%w: permission.classifierLists: %w", config.ErrInvalid, err)
		}
		if l.HardDeny != nil && !slices.Contains(l.HardDeny, classifier.DefaultsMarker) {
			log.Warn("permission.classifierLists.hard_deny has no \"$defaults\": the built-in hard-deny rules are off")
		}
		deps.Settings.ClassifierPolicy = &pol
	}
	if lv := up.ClassifierReasoningLevel; lv != "" && !slices.Contains(classifier.ReasoningLevels, lv) {
		return fmt.Errorf("%w: permission.classifierReasoningLevel must be one of %v, not %q", config.ErrInvalid, classifier.ReasoningLevels, lv)
	}
	deps.Settings.ClassifierReasoning = up.ClassifierReasoningLevel
	for _, l := range []struct {
		name     string
		v, least int
		dst      *int
	}{
		{"fastClassifierMaxTokens", up.FastClassifierMaxTokens, classifier.MinFastMaxTokens, &deps.Settings.ClassifierFastTokens},
		{"detailedClassifierMaxTokens", up.DetailedClassifierMaxTokens, classifier.MinDetailedMaxTokens, &deps.Settings.ClassifierDetailedTokens},
	} {
		if l.v != 0 && l.v < l.least {
			return fmt.Errorf("%w: permission.%s must be an integer of at least %d, not %d", config.ErrInvalid, l.name, l.least, l.v)
		}
		*l.dst = l.v
	}
	return nil
}

// tightenRules is base's rules and then the candidate's (kind names them
// in the log): a malformed one is kept, since it matches broadly and a
// candidate may only tighten.
func tightenRules(base []approvals.Rule, add []string, kind string, log *zap.Logger) []approvals.Rule {
	out := slices.Clone(base)
	for _, s := range add {
		r, err := approvals.ParseRule(s)
		if err != nil {
			log.Warn("candidate "+kind+" rule kept although malformed (it matches broadly)", zap.Error(err))
		}
		out = append(out, r)
	}
	return out
}

package app

import (
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

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
	if project.Permission.MaxRejections > 0 && (deps.Settings.MaxRejections == 0 || project.Permission.MaxRejections < deps.Settings.MaxRejections) {
		deps.Settings.MaxRejections = project.Permission.MaxRejections // fewer retries only tightens
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

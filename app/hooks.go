package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/internal/childenv"
)

// ExitHook is the exit code of a SessionStart hook that blocked startup.
const ExitHook = 6

// loadHooks reads the hooks layers: <configDir>/hooks.json, the profile's
// hooksFile (must exist), and <cwd>/.ama/hooks.json when the project is
// trusted. It returns the trust decision too (--trust/--no-trust, then
// the profile's trustProject, then trust.json; hooks spec §1.2), which
// also gates the project's agent definitions. A file error is a config
// error (exit 3).
func loadHooks(paths config.Paths, cwd string, flags *Flags, profile *Profile, user *config.Config, log *zap.Logger) (*hooks.Dispatcher, bool, error) {
	if flags.Trust && flags.NoTrust {
		return nil, false, fmt.Errorf("%w: --trust and --no-trust are exclusive", errUsage)
	}
	var flag *bool
	switch {
	case flags.Trust:
		flag = &flags.Trust
	case flags.NoTrust:
		no := false
		flag = &no
	}
	var profileHooks string
	var profileTrust *bool
	if profile != nil {
		profileHooks, profileTrust = profile.HooksFile, profile.TrustProject
	}
	trusted, err := hooks.Trusted(hooks.TrustOptions{Flag: flag, Profile: profileTrust, TrustFile: filepath.Join(paths.Config, "trust.json"), Dir: cwd})
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	set, warnings, err := hooks.Load(hooks.Layers{
		User:    filepath.Join(paths.Config, "hooks.json"),
		Profile: profileHooks,
		Project: filepath.Join(cwd, ".ama", "hooks.json"), Trusted: trusted,
	})
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	return hooks.NewDispatcher(set, hooks.Options{Timeout: time.Duration(user.Hooks.TimeoutMs) * time.Millisecond,
		Env: childenv.Environ(toolEnvPolicy(user))}), trusted, nil
}

// startup runs the startup order (session.Manager.Startup): the host
// adapter's session_start, then the startup session's SessionStart hooks.
// Both run before the server serves, so the hooks' hook_executed events
// wait in the early outbox until it opens (after hello and
// session_start).
func startup(w *wiring) error {
	unsub := w.first.Subscribe(func(e events.Event) {
		if h, ok := e.(events.HookExecuted); ok {
			w.early.put(h)
		}
	})
	defer unsub()
	return w.mgr.Startup(w.first, w.reason, func() error { return hostStartup(w) })
}

// explainHook is the PreToolUse part of an explain verdict.
type explainHook struct {
	Decision     string          `json:"decision,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Commands     []string        `json:"commands"`
	Warnings     []string        `json:"warnings,omitempty"`
}

// decideWithHooks is approvals.Decide preceded by the PreToolUse hooks of
// d, folded in as a session does: deny first and absolute, allow lifts
// only a mode ask, ask turns an allow into an ask; unattended after that.
func decideWithHooks(d *hooks.Dispatcher, call approvals.Call, pol *approvals.Policy) (approvals.Verdict, *explainHook) {
	if !d.MayMatch(hooks.PreToolUse, call.Tool) {
		return approvals.Decide(call, pol, nil), nil
	}
	res := d.Run(context.Background(), hooks.Call{Event: hooks.PreToolUse,
		Common:  hooks.Common{SessionID: "explain", Cwd: call.Cwd, PermissionMode: string(pol.Mode)},
		Payload: hooks.ToolInput{ToolCallID: "explain_0", ToolName: call.Tool, ToolInput: call.Input}, Tool: call.Tool, Input: call.Input})
	if res == nil {
		return approvals.Decide(call, pol, nil), nil
	}
	h := &explainHook{Decision: string(res.Decision), Reason: res.Reason, Warnings: res.Warnings, Commands: []string{}}
	for _, o := range res.Outcomes {
		h.Commands = append(h.Commands, o.Command.Command)
	}
	if res.Blocked() {
		reason := res.Reason
		if reason == "" {
			reason = "Blocked by a PreToolUse hook."
		}
		return approvals.Verdict{Decision: approvals.Deny, Layer: hooks.LayerHook, Reason: reason}, h
	}
	if res.HasUpdatedInput {
		h.UpdatedInput = res.UpdatedInput
		call.Input = res.UpdatedInput
	}
	if res.Decision == "" {
		return approvals.Decide(call, pol, nil), h
	}
	open := *pol
	open.Unattended = false
	v := hooks.ApplyToVerdict(approvals.Decide(call, &open, nil), res.Decision, res.Reason)
	if !v.Classify {
		v = approvals.Finalize(v, pol)
	}
	return v, h
}

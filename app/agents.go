package app

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/tools"
)

// wireAgents enables sub-agents when the active tools name task (or
// task_ctl): both tools are registered and active together, and every
// root session gets a task registry. Without them nothing changes (no
// registry: get_tasks and get_agents answer empty lists).
func wireAgents(deps *session.Deps, active []string, cfg config.Subagents, ext config.Agents, dirs []agents.DefinitionDir, trusted bool, runners agents.HostRunners, probe *agents.Prober, log *zap.Logger) ([]string, error) {
	switch cfg.Background {
	case "", "auto", "always", "never":
	default:
		return nil, fmt.Errorf("%w: subagents.background must be auto, always or never, not %q", config.ErrInvalid, cfg.Background)
	}
	if !slices.Contains(active, agents.ToolTask) && !slices.Contains(active, agents.ToolTaskCtl) {
		return active, nil
	}
	out := slices.Clone(active)
	for _, n := range []string{agents.ToolTask, agents.ToolTaskCtl} {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	reg, ok := deps.Tools.(*tools.Registry)
	if !ok {
		return active, nil
	}
	defs, warnings := agents.Discover(dirs)
	for _, w := range warnings {
		log.Warn(w)
	}
	// Definition files first: a runner of the same name does not replace one.
	types := append(defs, agents.HostTypes(runners)...)
	if probe != nil {
		types = append(types, probe.ListedExternals()...)
	}
	catalog := agents.NewCatalog(types)
	unattended := deps.Policy != nil && deps.Policy.Unattended // -p: auto means foreground
	bg := cfg.Background == "always" || (cfg.Background != "never" && !unattended)
	more, err := reg.With(agents.NewTools(catalog, bg)...)
	if err != nil {
		return nil, fmt.Errorf("task tools: %w", err)
	}
	deps.Tools = more
	deps.Tasks = agents.Factory(agents.Config{Deps: deps, Catalog: catalog, Log: log, Now: deps.Now,
		MaxConcurrent: cfg.MaxConcurrent, MaxPending: cfg.MaxPending,
		AutoBackgroundAfter: time.Duration(cfg.AutoBackgroundAfterMs) * time.Millisecond, Background: cfg.Background, Unattended: unattended, Trusted: trusted,
		HostRunners: runners, Probe: probe, ForkRatio: forkRatio(cfg.ForkMaxContextRatio),
		External: externalSettings(ext), ExternalBudgetUSD: ext.SessionBudgetUsd, ExternalMaxConcurrent: ext.MaxConcurrent, DefaultModel: cfg.DefaultModel})
	return out, nil
}

// forkRatio is subagents.forkMaxContextRatio within 0.05-0.95 (else 0:
// the default).
func forkRatio(v float64) float64 {
	if v < 0.05 || v > 0.95 {
		return 0
	}
	return v
}

// externalSettings are the agents.<id> settings of the config.
func externalSettings(a config.Agents) map[string]agents.ExternalSettings {
	out := map[string]agents.ExternalSettings{}
	for id, s := range a.ByID {
		out[id] = agents.ExternalSettings{Model: s.Model, MaxMode: s.MaxMode, Passthrough: s.Env.Passthrough, MaxConcurrent: s.MaxConcurrent}
	}
	return out
}

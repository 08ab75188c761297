package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/host"
	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/skills"
	"github.com/armadra/ama-rpc/tools"
)

func newUUID(deps *session.Deps) string {
	if deps.NewUUID != nil {
		return deps.NewUUID()
	}
	return uuid.NewString()
}

// withProfileSkills adds the skills of the profile's skillDirs after the
// user and project ones (a later directory wins on a name clash).
func withProfileSkills(list []skills.Skill, dirs []string) []skills.Skill {
	for _, d := range dirs {
		for _, sk := range skills.Discover(map[string]string{"user": d}) {
			sk.Source = "profile"
			replaced := false
			for i := range list {
				if list[i].Name == sk.Name {
					list[i], replaced = sk, true
				}
			}
			if !replaced {
				list = append(list, sk)
			}
		}
	}
	return list
}

// withProfileAgentDirs puts the profile's agentDirs right after the
// --agent-dir values (the first nCLI dirs), before the config and user
// ones: discovery keeps the first definition of a name.
func withProfileAgentDirs(dirs []agents.DefinitionDir, nCLI int, profileDirs []string) []agents.DefinitionDir {
	if len(profileDirs) == 0 {
		return dirs
	}
	out := append([]agents.DefinitionDir(nil), dirs[:nCLI]...)
	for _, d := range profileDirs {
		out = append(out, agents.DefinitionDir{Path: d, Source: "profile"})
	}
	return append(out, dirs[nCLI:]...)
}

// createTimeoutEnv shortens create()'s 10 s bound (and the startup
// session_start's, which is the same unless startupTimeoutEnv sets it);
// startupTimeoutEnv shortens the startup session_start's alone, so that a
// test of it does not race the adapter's start on a loaded machine.
// Test-only: the conformance tests of the timeouts set them; production
// leaves them unset.
const (
	createTimeoutEnv  = "AMA_HOST_CREATE_TIMEOUT_MS"
	startupTimeoutEnv = "AMA_HOST_STARTUP_TIMEOUT_MS"
)

// startHost loads the host adapter (spec step 13): its tools join the
// registry and the active set, its disables apply, its broker and
// instructions reach every session through deps.Host. It returns the
// active tool names; a nil host means create() returned undefined.
func startHost(ctx context.Context, env Env, flags *Flags, module, node string, deps *session.Deps, ref llm.ModelRef, cwd string, early *outbox, log *zap.Logger) (*host.Host, []string, error) {
	active := append([]string(nil), DefaultActiveTools...)
	// The sidecar (and the adapter's api.env) gets what every child gets:
	// no model credentials (internal/childenv).
	environ := childenv.Environ(deps.Settings.ToolEnv)
	if env.Environ != nil {
		environ = childenv.Scrub(env.Environ(), deps.Settings.ToolEnv, nil)
	}
	var builtin []string
	for _, t := range deps.Tools.Tools() {
		builtin = append(builtin, t.Decl().Name)
	}
	// The sub-agent tools are built-ins too, though registered later and
	// only when enabled: a host tool may not take their names.
	var reserved []string
	for _, n := range []string{agents.ToolTask, agents.ToolTaskCtl} {
		if !slices.Contains(builtin, n) {
			reserved = append(reserved, n)
		}
	}
	opts := host.Options{
		Module: module, Command: flags.HostCmd, Node: firstNonEmpty(env.Getenv("AMA_NODE"), node), Environ: environ, Cwd: env.Cwd, Mode: "rpc", Version: Version,
		Session:      createSession(flags, cwd, ref),
		BuiltinTools: builtin, ReservedTools: reserved, Stderr: env.Stderr, Log: log.Named("host"),
		Notify: early.notify, // queued until the server serves
	}
	for _, b := range []struct {
		env string
		d   *time.Duration
	}{{createTimeoutEnv, &opts.CreateTimeout}, {startupTimeoutEnv, &opts.StartupTimeout}} {
		if ms, err := strconv.Atoi(env.Getenv(b.env)); err == nil && ms > 0 {
			*b.d = time.Duration(ms) * time.Millisecond
		}
	}
	h, err := host.Start(ctx, opts)
	if err != nil && errors.Is(context.Cause(ctx), errStdinEnded) {
		err = fmt.Errorf("%w: stdin ended while the host adapter was starting", host.ErrLoad)
	}
	if err != nil || h == nil {
		return nil, active, err
	}
	disabled := h.Disabled()
	var all []tools.Tool
	for _, t := range deps.Tools.Tools() {
		if !disabled[t.Decl().Name] {
			all = append(all, t)
		}
	}
	for _, t := range h.Tools() {
		all = append(all, t)
		active = append(active, t.Decl().Name)
	}
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		h.Dispose(context.Background())
		return nil, nil, fmt.Errorf("%w: host tools: %v", host.ErrLoad, err)
	}
	deps.Tools = reg
	kept := active[:0]
	for _, n := range active {
		if !disabled[n] {
			kept = append(kept, n)
		}
	}
	deps.Host = h
	deps.WarmingDecider = h // cache.onWarmingDecision, once the adapter registers a handler
	return h, kept, nil
}

// createSession is what the adapter's session.id/file/cwd/model() give
// in create(): the startup session, known before it opens (wire): the
// file startSession found and its id, else the id chosen in advance (a
// user's --session-id, or one made for a new session or a fork's copy;
// the copy's file is written when the fork is made, after create()).
func createSession(flags *Flags, cwd string, ref llm.ModelRef) host.SessionInfo {
	info := host.SessionInfo{ID: flags.SessionID, Cwd: cwd, Model: &llm.ModelRef{Provider: ref.Provider, ID: ref.ID}}
	if st := flags.start; st != nil && st.path != "" && flags.Fork == "" {
		info.ID, info.File = st.id, st.path
	}
	return info
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// hostStartup delivers the startup session_start to the host (awaited,
// before the protocol's hello, bounded like create()) and ends the
// create() phase. The wait also ends when stdin ends (stdinWatch). An
// error wraps host.ErrLoad: the startup failed (exit 6).
func hostStartup(w *wiring) error {
	if w.host == nil {
		return nil
	}
	defer w.watch.stop()
	info := host.SessionInfo{ID: w.first.ID(), Cwd: w.first.Cwd()}
	if st, err := w.first.State(); err == nil {
		info.File, info.Model = st.SessionFile, st.Model
	}
	if err := w.host.StartupSession(w.watch.ctx, info, w.reason); err != nil {
		return err
	}
	w.host.Ready()
	return nil
}

// startupFailed ends a process whose host startup failed after the
// session was built: the adapter is disposed without session_shutdown
// (its event queue is stuck behind session_start), the session closed.
// A signal decides the code, else exit 6.
func startupFailed(ctx context.Context, env Env, w *wiring, err error) int {
	fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	w.host.Dispose(dctx)
	cancel()
	bounded(ctx, func() { w.mgr.Close(w.first, "exit") }, w.log) // never started: no SessionEnd
	if code, ok := SignalExit(ctx); ok {
		return code
	}
	return ExitHost
}

// hostShutdown runs the host's part of the exit order: session_shutdown
// (awaited), then dispose, bounded.
func hostShutdown(w *wiring) {
	if w.host == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.host.Shutdown(ctx)
}

// hostSettle waits (at most settleWait) until the host has handled every
// event of the finished runs, so that the notifications its handlers send
// (ui.notify on agent_settled) are written before stdout closes.
func hostSettle(w *wiring) {
	if w.host == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	w.host.Flush(ctx)
}

// settleWait bounds hostSettle: a handler that never returns cannot keep
// the process alive.
const settleWait = 5 * time.Second

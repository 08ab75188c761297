package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/memlimit"
	"github.com/armadra/ama-rpc/rpc/acp"
	"github.com/armadra/ama-rpc/session"
)

// runACP serves the Agent Client Protocol on stdio.
func runACP(ctx context.Context, env Env, w *wiring) int {
	ready, err := acpReady(ctx, w)
	if hs := (*hostStartupError)(nil); errors.As(err, &hs) {
		return startupFailed(ctx, env, w, hs.err)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		return ExitRuntime
	}
	defer hostShutdown(w)
	opts := acpOptions(env, w.log)
	opts.Lang = w.lang // with the profile's language and the project's ui.language
	opts.Sessions, opts.Base, opts.StartupID = ready.Sessions, ready.Base, ready.StartupID
	opts.Settle = func() { hostSettle(w) }
	srv := acp.NewServer(opts)
	w.early.open(acpNotice(srv))
	w.host.SetOwed(srv.Owed())
	memlimit.ReleaseStartup()
	err = srv.Run(ctx)
	return runExit(ctx, err, env, w.log)
}

// runACPGate serves ACP although start-up found no usable model, as ama
// does: initialize is answered, and every session method retries the
// whole start-up (at most once a second) and answers -32000 while there
// is still no model, so the client can tell the user to sign in (set a
// key or a model) and try again without restarting the process.
func runACPGate(ctx context.Context, env Env, flags *Flags, log *zap.Logger, cause error) int {
	log.Warn("no usable model: serving ACP; session methods answer -32000 until one is configured", zap.Error(cause))
	cwd := env.Cwd
	if flags.Cwd != "" {
		cwd = flags.Cwd
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	var started atomic.Pointer[wiring] // set by Boot on the read loop
	opts := acpOptions(env, log)
	opts.Lang = startupLang(env, flags, cwd)
	opts.Base = session.Options{Cwd: cwd}
	var srv *acp.Server
	opts.Settle = func() {
		if w := started.Load(); w != nil {
			hostSettle(w)
		}
	}
	opts.Boot = func() (acp.Ready, error) {
		nw, err := wire(ctx, env, flags, log)
		if err != nil {
			if exitCodeFor(err) == ExitNoModel {
				return acp.Ready{}, fmt.Errorf("%w: %v", acp.ErrNoModel, err)
			}
			return acp.Ready{}, err
		}
		ready, err := acpReady(ctx, nw)
		if err != nil {
			hostShutdown(nw)
			return acp.Ready{}, err
		}
		started.Store(nw)
		nw.early.open(acpNotice(srv))
		nw.host.SetOwed(srv.Owed())
		return ready, nil
	}
	srv = acp.NewServer(opts)
	err := srv.Run(ctx)
	if w := started.Load(); w != nil {
		hostShutdown(w)
	}
	return runExit(ctx, err, env, log)
}

// hostStartupError is a host adapter's failed startup session_start (a
// deadline, stdin ending): the process ends with exit 6.
type hostStartupError struct{ err error }

func (e *hostStartupError) Error() string { return e.err.Error() }
func (e *hostStartupError) Unwrap() error { return e.err }

// acpReady finishes the start-up for ACP.
//
// The startup session was built by wire() before the ACP server existed,
// with the process-wide approver, so it is closed here and only its
// identity and settings are handed on. A fresh one has written nothing yet
// (session files are created at the first model request): the first
// session/new re-creates it with the same id (--session-id) and settings.
// One named by --resume, --session or --continue releases its file and is
// reopened by session/load or session/resume of its id. Either way the
// session then routes its permission asks to the ACP client.
func acpReady(ctx context.Context, w *wiring) (acp.Ready, error) {
	base, err := w.first.Settings()
	if err != nil {
		return acp.Ready{}, err
	}
	if err := hostStartup(w); err != nil {
		return acp.Ready{}, &hostStartupError{err}
	}
	startupID := ""
	if w.reason == "startup" {
		startupID = w.first.ID()
	}
	bounded(ctx, func() { w.mgr.Close(w.first, "exit") }, w.log) // never started: no SessionEnd
	base.Approver = nil
	// --model is the model of new sessions; a loaded or resumed session
	// keeps the model it was using (a pick made over ACP survives a
	// respawn).
	base.ForceModel = false
	return acp.Ready{Sessions: w.mgr, Base: base, StartupID: startupID}, nil
}

// acpOptions are the server options every ACP start shares.
func acpOptions(env Env, log *zap.Logger) acp.Options {
	opts := acp.Options{In: env.Stdin, Out: env.Stdout, Log: log, Version: Version, Lang: earlyLang(env)}
	if h := env.Hooks; h != nil {
		opts.Writer = h.Writer
		opts.ShutdownGrace = h.ShutdownGrace
		opts.BootRetry = h.BootRetry
		if h.Now != nil {
			opts.Now = h.Now
		}
	}
	return opts
}

// acpNotice is how the early outbox reaches an ACP client: notifications
// become notices (the server queues them until the first session is
// announced); hook_executed has no ACP form.
func acpNotice(srv *acp.Server) func(events.Event) bool {
	return func(e events.Event) bool {
		if n, ok := e.(events.Notification); ok {
			return srv.Notice(n.Level, n.Message)
		}
		return true
	}
}

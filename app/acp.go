package app

import (
	"context"
	"fmt"

	"github.com/armadra/ama-rpc/rpc/acp"
)

// runACP serves the Agent Client Protocol on stdio.
//
// The startup session was built by wire() before the ACP server existed,
// with the process-wide approver, so it is closed here and only its
// identity and settings are handed on. A fresh one has written nothing yet
// (session files are created at the first model request): the first
// session/new re-creates it with the same id (--session-id) and settings.
// One named by --resume, --session or --continue releases its file and is
// reopened by session/load or session/resume of its id. Either way the
// session then routes its permission asks to the ACP client.
func runACP(ctx context.Context, env Env, w *wiring) int {
	base, err := w.first.Settings()
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		return ExitRuntime
	}
	hostStartup(ctx, w)
	defer hostShutdown(w)
	startupID := ""
	if w.reason == "startup" {
		startupID = w.first.ID()
	}
	closeBounded(ctx, w.first, w.log)
	base.Approver = nil
	// --model is the model of new sessions; a loaded or resumed session
	// keeps the model it was using (a pick made over ACP survives a
	// respawn).
	base.ForceModel = false
	opts := acp.Options{
		In: env.Stdin, Out: env.Stdout, Log: w.log, Version: Version,
		Deps: w.deps, Base: base, StartupID: startupID,
	}
	if h := env.Hooks; h != nil {
		opts.Writer = h.Writer
		opts.ShutdownGrace = h.ShutdownGrace
		if h.Now != nil {
			opts.Now = h.Now
		}
	}
	releaseStartup()
	err = acp.NewServer(opts).Run(ctx)
	return runExit(ctx, err, env, w.log)
}

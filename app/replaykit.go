package app

import (
	"context"
	"errors"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/rpc"

	"github.com/armadra/ama-rpc/replaykit"
)

// runReplayKit is `ama-rpc replay` (package replaykit): Main itself, with
// the kit's deterministic hooks, on the kit's pipes.
func runReplayKit(ctx context.Context, env Env, args []string) int {
	return replaykit.Command(ctx, args, env.Stdin, env.Stdout, env.Stderr, ReplayServer)
}

// ReplayServer adapts Main to the replay kit: its hooks, and its @signal
// as the SignalError Main knows.
func ReplayServer(ctx context.Context, s replaykit.Start) int {
	inner, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		var sig replaykit.Signal
		if errors.As(context.Cause(ctx), &sig) {
			cancel(SignalError{Signal: sig.Signal})
			return
		}
		cancel(context.Cause(ctx))
	})
	defer stop()
	h := s.Hooks
	hooks := &Hooks{Now: h.Now, NewUUID: h.NewUUID, NewEntryID: h.NewEntryID, Clock: h.Clock,
		Writer: stdio.WriterOptions{MaxItems: s.MaxQueuedItems, MaxBytes: s.MaxQueuedBytes}}
	if s.Merged != nil {
		hooks.OnServer = func(srv *rpc.Server) {
			s.Merged(func() (int64, bool) {
				if w := srv.Writer(); w != nil {
					return w.Stats().MergedDeltas, true
				}
				return 0, false
			})
		}
	}
	return Main(inner, Env{Args: s.Args, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, Getenv: s.Getenv, Cwd: s.Cwd,
		Environ: s.Environ, Hooks: hooks})
}

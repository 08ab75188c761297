package app

import (
	"context"
	"fmt"
)

// runACP serves the Agent Client Protocol on stdio.
func runACP(ctx context.Context, env Env, w *wiring) int {
	fmt.Fprintln(env.Stderr, "ama-rpc: --mode acp is not implemented yet")
	return ExitUsage
}

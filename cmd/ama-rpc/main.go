// Command ama-rpc is the ama coding-agent server for editors and canvas
// hosts: it reads commands from stdin and writes responses and events to
// stdout (see README.md).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/sandbox"
)

func main() {
	// The hidden sandbox launcher (`ama-rpc __sandbox-exec …`) applies the
	// Landlock policy and execs the command; it never returns.
	sandbox.MaybeLaunch()
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			cancel(app.SignalError{Signal: s.(syscall.Signal)})
		}
	}()
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	os.Exit(app.Main(ctx, app.Env{
		Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Cwd: cwd,
	}))
}

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
	// The hidden sandbox launcher (`ama-rpc __sandbox-exec …`) takes over
	// the process in its init, before the heavy packages initialise.
	_ "github.com/armadra/ama-rpc/sandbox/launcher"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			cancel(app.SignalError{Signal: s.(syscall.Signal)})
		}
	}()
	// A host that closes its end of stdout must not kill us with SIGPIPE
	// (exit 141): with a handler installed, a write to the broken pipe
	// fails with EPIPE instead, which the output writer treats as a
	// disconnect. Notify (not signal.Ignore) keeps the default disposition
	// for the commands the bash tool starts: SIG_IGN would be inherited.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	code := app.Main(ctx, app.Env{
		Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Cwd: cwd,
	})
	// A signal handled while Main was returning still decides the code.
	if sc, ok := app.SignalExit(ctx); ok {
		code = sc
	}
	os.Exit(code)
}

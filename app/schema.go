package app

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/armadra/ama-rpc/rpc/schema"
)

// runSchema is `ama-rpc schema [--out DIR]`: the JSON Schema of the rpc
// protocol's output lines on stdout, or as DIR/rpc.schema.json.
func runSchema(env Env, args []string) int {
	fs := flag.NewFlagSet("ama-rpc schema", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	out := fs.String("out", "", "directory to write "+schema.FileName+" to (default: stdout)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: ama-rpc schema [--out DIR]
Prints the JSON Schema (draft 2020-12) of the rpc protocol's output lines.`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "ama-rpc schema: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if *out == "" {
		b, err := schema.JSON()
		if err == nil {
			_, err = env.Stdout.Write(b)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "ama-rpc schema: %v\n", err)
			return ExitRuntime
		}
		return ExitOK
	}
	dir := *out
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.Cwd, dir)
	}
	path, err := schema.Write(dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc schema: %v\n", err)
		return ExitRuntime
	}
	fmt.Fprintln(env.Stderr, "ama-rpc schema: wrote", path)
	return ExitOK
}

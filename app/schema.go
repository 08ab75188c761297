package app

import (
	"fmt"
	"github.com/armadra/ama-rpc/internal/i18n"
	"path/filepath"

	"github.com/armadra/ama-rpc/rpc/schema"
)

// runSchema is `ama-rpc schema [--out DIR]`: the JSON Schema of the rpc
// protocol's output lines on stdout, or as DIR/rpc.schema.json.
func runSchema(env Env, args []string, lang i18n.Lang) int {
	fs := newSubFlags(env, lang, "schema", "ama-rpc schema", func() string { return i18n.T(lang, i18n.CLISchemaUsage) })
	out := fs.String("out", "", fs.help("out", schema.FileName))
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(env.Stderr, i18n.T(lang, i18n.CLISubError, "ama-rpc schema", i18n.T(lang, i18n.CLIUnexpectedArg, fs.Arg(0))))
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
	fmt.Fprintln(env.Stderr, i18n.T(lang, i18n.CLISubError, "ama-rpc schema", i18n.T(lang, i18n.CLISchemaWrote, path)))
	return ExitOK
}

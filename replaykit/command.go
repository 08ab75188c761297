package replaykit

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// maxFile bounds the script and the expected transcript read.
const maxFile = 256 << 20

// The exit codes of `ama-rpc replay`.
const (
	ExitOK      = 0 // replayed; with --check: the same shape
	ExitDiffers = 1 // --check found a difference, or the replay failed
	ExitUsage   = 2 // bad flags or unreadable files
)

const usage = `usage: ama-rpc replay [--case CASE.json] [--script FILE] [--mode rpc|acp] [--check EXPECTED.jsonl] [--exit N] [-- SERVER FLAGS] < COMMANDS.jsonl

Runs the server with the scripted fake model on a fresh temporary home and
work directory, sends the command lines of stdin (lines {"@wait":{...}} and
the other @-directives order them), and writes the normalised transcript on
stdout. With --check it compares the transcript with EXPECTED by shape and
exits 1 with the differences on stderr. --case reads a golden's case.json
(flags, script, files, links, session file, writer bounds, expected exit and
side effects); --fixtures is the directory its "copy" names are under.`

// Command is `ama-rpc replay`: args are the subcommand's arguments.
func Command(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, srv Server) int {
	fs := flag.NewFlagSet("ama-rpc replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	script := fs.String("script", "", "the fake model's script (JSON)")
	mode := fs.String("mode", "rpc", "the protocol: rpc or acp")
	check := fs.String("check", "", "the expected transcript: compare by shape")
	exit := fs.Int("exit", 0, "the expected exit code of the server")
	caseFile := fs.String("case", "", "a case file (a golden's case.json)")
	fixtures := fs.String("fixtures", "", "the directory a case's copy names are under (default: two above the case file)")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "ama-rpc replay: %v\n%s\n", err, usage)
		return ExitUsage
	}
	if *mode != "rpc" && *mode != "acp" {
		fmt.Fprintf(stderr, "ama-rpc replay: --mode must be rpc or acp, not %q\n", *mode)
		return ExitUsage
	}
	opts := Options{Mode: *mode}
	if *caseFile != "" {
		b, err := ownfs.ReadUser(*caseFile, maxFile)
		if err != nil {
			fmt.Fprintf(stderr, "ama-rpc replay: %v\n", err)
			return ExitUsage
		}
		c, err := DecodeCase(b)
		if err == nil {
			if *fixtures == "" {
				*fixtures = filepath.Join(filepath.Dir(*caseFile), "..", "..")
			}
			opts, err = c.Options(*fixtures)
		}
		if err != nil {
			fmt.Fprintf(stderr, "ama-rpc replay: %s: %v\n", *caseFile, err)
			return ExitUsage
		}
		if !flagSet(fs, "exit") {
			*exit = c.Exit
		}
	}
	if rest := fs.Args(); len(rest) > 0 {
		// Server flags after "--": the mode and the fake model first, the
		// host's flags may override them (the last flag wins).
		opts.Args = append([]string{"--mode", *mode, "--model", "fake/echo"}, rest...)
	}
	if *script != "" {
		b, err := ownfs.ReadUser(*script, maxFile)
		if err != nil {
			fmt.Fprintf(stderr, "ama-rpc replay: %v\n", err)
			return ExitUsage
		}
		opts.Script = b
	}
	var want []byte
	if *check != "" {
		b, err := ownfs.ReadUser(*check, maxFile)
		if err != nil {
			fmt.Fprintf(stderr, "ama-rpc replay: %v\n", err)
			return ExitUsage
		}
		want = b
	}
	steps, err := ParseSteps(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ama-rpc replay: %v\n", err)
		return ExitUsage
	}
	res, err := Replay(ctx, srv, opts, steps)
	if err != nil {
		fmt.Fprintf(stderr, "ama-rpc replay: %v\nserver log:\n%s", err, res.Stderr)
		return ExitDiffers
	}
	if _, err := stdout.Write(res.Transcript); err != nil {
		fmt.Fprintf(stderr, "ama-rpc replay: %v\n", err)
		return ExitDiffers
	}
	code := ExitOK
	for _, e := range res.Effects {
		fmt.Fprintf(stderr, "ama-rpc replay: %s\n", e)
		code = ExitDiffers
	}
	if res.Exit != *exit {
		fmt.Fprintf(stderr, "ama-rpc replay: the server exited %d, want %d; its log:\n%s", res.Exit, *exit, res.Stderr)
		code = ExitDiffers
	}
	if want != nil {
		if diffs := Check(want, res.Transcript); len(diffs) > 0 {
			fmt.Fprintf(stderr, "ama-rpc replay: the transcript differs from %s by shape (%d differences):\n", *check, len(diffs))
			for i, d := range diffs {
				if i == 20 {
					fmt.Fprintf(stderr, "  … %d more\n", len(diffs)-i)
					break
				}
				fmt.Fprintf(stderr, "  %s\n", d)
			}
			code = ExitDiffers
		}
	}
	return code
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

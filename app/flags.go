package app

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Flags are the command-line options of the server.
type Flags struct {
	Mode           string
	Model          string
	Provider       string
	APIKey         string
	Thinking       string
	PermissionMode string
	Allow, Deny    multiFlag
	Tools          string
	NoSession      bool
	Session        string
	Resume         string
	Continue       bool
	SessionID      string
	SessionDir     string
	Cwd            string
	LogLevel       string
	Version        bool
	Trust, NoTrust bool
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// errHelp is returned when -h/--help was asked for.
var errHelp = flag.ErrHelp

// parseFlags parses the server flags. Both -flag and --flag work.
func parseFlags(args []string, stderr io.Writer) (*Flags, error) {
	f := &Flags{}
	fs := flag.NewFlagSet("ama-rpc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.Mode, "mode", "rpc", "protocol: rpc (stdio JSONL) or acp (Agent Client Protocol)")
	fs.StringVar(&f.Model, "model", "", "model as provider/id (e.g. fake/echo, openai/gpt-4.1-mini)")
	fs.StringVar(&f.Provider, "provider", "", "provider of --model when --model has no provider/ prefix")
	fs.StringVar(&f.APIKey, "api-key", "", "API key for the provider of --model (prefer environment variables)")
	fs.StringVar(&f.Thinking, "thinking", "", "thinking level: off, minimal, low, medium, high, xhigh")
	fs.StringVar(&f.PermissionMode, "permission-mode", "", "plan, allowlist, default, auto-edit, auto or full-auto")
	fs.Var(&f.Allow, "allow", "allow rule such as 'bash(npm test*)' (repeatable)")
	fs.Var(&f.Deny, "deny", "deny rule such as 'bash(terraform *)' (repeatable)")
	fs.StringVar(&f.Tools, "tools", "", "comma-separated active tools (default: all)")
	fs.BoolVar(&f.NoSession, "no-session", false, "keep the session in memory (no session file)")
	fs.StringVar(&f.Session, "session", "", "open this session file")
	fs.StringVar(&f.Resume, "resume", "", "resume the session with this id")
	fs.BoolVar(&f.Continue, "continue", false, "continue the most recent session of this directory")
	fs.BoolVar(&f.Continue, "c", false, "short for --continue")
	fs.StringVar(&f.SessionID, "session-id", "", "id of the new session (a UUID)")
	fs.StringVar(&f.SessionDir, "session-dir", "", "directory of session files (default <data>/sessions)")
	fs.StringVar(&f.Cwd, "cwd", "", "working directory of the session (default: the process cwd)")
	fs.StringVar(&f.LogLevel, "log-level", "warn", "stderr log level: debug, info, warn, error")
	fs.BoolVar(&f.Version, "version", false, "print the version and exit")
	fs.BoolVar(&f.Trust, "trust", false, "trust the project: load its .ama/hooks.json")
	fs.BoolVar(&f.NoTrust, "no-trust", false, "do not trust the project (its .ama/hooks.json is skipped)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.Mode != "rpc" && f.Mode != "acp" {
		return nil, fmt.Errorf("--mode must be rpc or acp, not %q", f.Mode)
	}
	n := 0
	for _, set := range []bool{f.Session != "", f.Resume != "", f.Continue} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, fmt.Errorf("--session, --resume and --continue are exclusive")
	}
	return f, nil
}

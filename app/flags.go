package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/llm"
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
	ToolsPreset    string
	Codemode       string
	NoSession      bool
	Session        string
	Resume         string
	Continue       bool
	SessionID      string
	// sessionIDMade: SessionID is not the user's but made at start-up
	// (a host must know the id in advance), so no session can have it.
	sessionIDMade bool
	// start: the existing session --session, --resume, --continue or
	// --session-id names (or --fork's source), once startSession found it.
	start      *startFile
	SessionDir string
	Cwd        string
	LogLevel   string
	Version    bool
	// Host is a host adapter module (--host); HostCmd a program speaking
	// the host protocol (--host-cmd); Profile a --profile file.
	Host    string
	HostCmd string
	Profile string
	// AgentDirs hold agent definitions (repeatable); Trust lets the
	// project's own definitions (.ama/agents) load.
	AgentDirs multiFlag
	Trust     bool
	NoTrust   bool
	// Print mode (-p, see package printmode): the prompt words, the
	// output format, the run's budgets (MaxCost also applies to rpc and
	// acp), stdin and image intake.
	Print        bool
	Prompt       []string
	OutputFormat string
	MaxTurns     int
	MaxCost      float64
	NoStdin      bool
	Images       multiFlag
	// From is --from id[#n] (-p only, from.go): a user message of an
	// old session as the prompt. Fork is --fork id: the startup session
	// is a copy of that session (sessions.go).
	From string
	Fork string
	// Lang is --lang (zh or en; empty: unset), see lang.go.
	Lang string
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// errHelp is returned when -h/--help was asked for.
var errHelp = flag.ErrHelp

// parseFlags parses the server flags. Both -flag and --flag work. The
// flag package itself prints nothing: -h/--help writes the usage to
// usage (stdout, like `ama-rpc help`) and returns errHelp; any other
// error is returned for the caller to print once.
//
// lang is the language of the --help headings (earlyLang).
func parseFlags(args []string, usage io.Writer, lang i18n.Lang) (*Flags, error) {
	f := &Flags{}
	fs := flag.NewFlagSet("ama-rpc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	help := func(name string, args ...any) string { return i18n.T(lang, i18n.FlagKey("main", name), args...) }
	fs.StringVar(&f.Mode, "mode", "rpc", help("mode"))
	fs.StringVar(&f.Model, "model", "", help("model"))
	fs.StringVar(&f.Provider, "provider", "", help("provider"))
	fs.StringVar(&f.APIKey, "api-key", "", help("api-key"))
	fs.StringVar(&f.Thinking, "thinking", "", help("thinking"))
	fs.StringVar(&f.PermissionMode, "permission-mode", "", help("permission-mode"))
	fs.Var(&f.Allow, "allow", help("allow"))
	fs.Var(&f.Deny, "deny", help("deny"))
	fs.StringVar(&f.Tools, "tools", "", help("tools", strings.Join(DefaultActiveTools, ",")))
	fs.StringVar(&f.ToolsPreset, "tools-preset", "", help("tools-preset"))
	fs.StringVar(&f.Codemode, "codemode", "", help("codemode"))
	fs.BoolVar(&f.NoSession, "no-session", false, help("no-session"))
	fs.StringVar(&f.Session, "session", "", help("session"))
	fs.StringVar(&f.Resume, "resume", "", help("resume"))
	fs.StringVar(&f.Fork, "fork", "", help("fork"))
	fs.BoolVar(&f.Continue, "continue", false, help("continue"))
	fs.BoolVar(&f.Continue, "c", false, help("c"))
	fs.StringVar(&f.SessionID, "session-id", "", help("session-id"))
	fs.StringVar(&f.SessionDir, "session-dir", "", help("session-dir"))
	fs.StringVar(&f.Cwd, "cwd", "", help("cwd"))
	fs.StringVar(&f.LogLevel, "log-level", "warn", help("log-level"))
	fs.BoolVar(&f.Version, "version", false, help("version"))
	fs.StringVar(&f.Host, "host", "", help("host"))
	fs.StringVar(&f.HostCmd, "host-cmd", "", help("host-cmd"))
	fs.StringVar(&f.Profile, "profile", "", help("profile"))
	fs.Var(&f.AgentDirs, "agent-dir", help("agent-dir"))
	fs.BoolVar(&f.Trust, "trust", false, help("trust"))
	fs.BoolVar(&f.NoTrust, "no-trust", false, help("no-trust"))
	fs.BoolVar(&f.Print, "p", false, help("p"))
	fs.BoolVar(&f.Print, "print", false, help("print"))
	fs.StringVar(&f.OutputFormat, "output-format", "text", help("output-format"))
	fs.IntVar(&f.MaxTurns, "max-turns", 0, help("max-turns"))
	fs.Float64Var(&f.MaxCost, "max-cost", 0, help("max-cost"))
	fs.BoolVar(&f.NoStdin, "no-stdin", false, help("no-stdin"))
	fs.Var(&f.Images, "image", help("image"))
	fs.StringVar(&f.From, "from", "", help("from"))
	fs.StringVar(&f.Lang, "lang", "", i18n.T(lang, i18n.CLIHelpLang))
	fs.Usage = func() {}
	// Flags and prompt words may interleave (`-p hi --model fake/echo`);
	// `--` ends the flags.
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if err == flag.ErrHelp {
				fs.SetOutput(usage)
				printUsage(usage, fs, lang)
				return nil, err
			}
			return nil, flagError(err, lang)
		}
		left := fs.Args()
		if used := len(rest) - len(left); used > 0 && rest[used-1] == "--" {
			f.Prompt = append(f.Prompt, left...)
			break
		}
		if len(left) == 0 {
			break
		}
		f.Prompt = append(f.Prompt, left[0])
		rest = left[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := checkPrintFlags(f, set, lang); err != nil {
		return nil, err
	}
	if f.Mode != "rpc" && f.Mode != "acp" {
		return nil, errors.New(i18n.T(lang, i18n.CLIBadMode, f.Mode))
	}
	if _, ok := i18n.ParseExact(f.Lang); f.Lang != "" && !ok {
		return nil, errors.New(i18n.T(lang, i18n.CLIBadLang, f.Lang))
	}
	if f.PermissionMode != "" && !approvals.Mode(f.PermissionMode).Valid() {
		return nil, errors.New(i18n.T(lang, i18n.CLIBadPermissionMode, modeNames(), f.PermissionMode))
	}
	if f.Thinking != "" && !llm.ValidThinkingLevel(f.Thinking) {
		return nil, errors.New(i18n.T(lang, i18n.CLIBadThinking, f.Thinking))
	}
	if f.SessionID != "" && !uuidShape.MatchString(f.SessionID) {
		return nil, errors.New(i18n.T(lang, i18n.CLIBadSessionID, f.SessionID))
	}
	n := 0
	for _, set := range []bool{f.Session != "", f.Resume != "", f.Continue, f.SessionID != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New(i18n.T(lang, i18n.CLISessionExclusive))
	}
	if err := checkFork(f, set, lang); err != nil {
		return nil, err
	}
	if f.Host != "" && f.HostCmd != "" {
		return nil, errors.New(i18n.T(lang, i18n.CLIHostExclusive))
	}
	return f, nil
}

// checkPrintFlags refuses the print-mode flags outside -p and -p with a
// protocol mode (usage errors, exit 2).
func checkPrintFlags(f *Flags, set map[string]bool, lang i18n.Lang) error {
	if !f.Print {
		if len(f.Prompt) > 0 {
			return errors.New(i18n.T(lang, i18n.CLIPromptNeedsP, f.Prompt[0]))
		}
		for _, n := range []string{"output-format", "max-turns", "no-stdin", "image", "from"} {
			if set[n] {
				return errors.New(i18n.T(lang, i18n.CLIFlagNeedsP, n))
			}
		}
	}
	if f.Print && set["mode"] {
		return errors.New(i18n.T(lang, i18n.CLIPWithMode, f.Mode))
	}
	switch f.OutputFormat {
	case "text", "json", "stream-json":
	default:
		return errors.New(i18n.T(lang, i18n.CLIBadOutputFormat, f.OutputFormat))
	}
	if set["max-turns"] && f.MaxTurns < 1 {
		return errors.New(i18n.T(lang, i18n.CLIBadMaxTurns, f.MaxTurns))
	}
	if set["max-cost"] && (math.IsNaN(f.MaxCost) || math.IsInf(f.MaxCost, 0) || f.MaxCost <= 0) {
		return errors.New(i18n.T(lang, i18n.CLIBadMaxCost, f.MaxCost))
	}
	if f.NoStdin && slices.Contains(f.Prompt, "-") {
		return errors.New(i18n.T(lang, i18n.CLIDashNoStdin))
	}
	if _, _, ok := parseFrom(f.From); set["from"] && !ok {
		return errors.New(i18n.T(lang, i18n.CLIBadFrom, f.From))
	}
	return nil
}

// checkFork refuses --fork without an id, with another flag that names
// the startup session (--session, --resume, --continue, --session-id),
// with --no-session (ama's rule: the copy is a new file) and in ACP mode
// (the client opens sessions there).
func checkFork(f *Flags, set map[string]bool, lang i18n.Lang) error {
	if !set["fork"] {
		return nil
	}
	if f.Fork == "" {
		return errors.New(i18n.T(lang, i18n.CLIFlagNeedsValue, "fork"))
	}
	for _, c := range []struct {
		name string
		on   bool
	}{{"session", f.Session != ""}, {"resume", f.Resume != ""}, {"continue", f.Continue}, {"session-id", f.SessionID != ""}, {"no-session", f.NoSession}} {
		if c.on {
			return errors.New(i18n.T(lang, i18n.CLIForkExclusive, c.name))
		}
	}
	if f.Mode == "acp" {
		return errors.New(i18n.T(lang, i18n.CLIForkACP))
	}
	return nil
}

// uuidShape is the form of session ids (ACP session ids are UUIDs, and the
// id is part of the session file name).
var uuidShape = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func modeNames() string {
	names := make([]string, len(approvals.Modes))
	for i, m := range approvals.Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// printUsage writes the --help text: synopsis, subcommands, flags,
// environment and exit codes (the README's Flags, Environment and Exit
// codes sections in short), all of it in lang (one block per section and
// one sentence per flag in the catalog).
func printUsage(w io.Writer, fs *flag.FlagSet, lang i18n.Lang) {
	fmt.Fprintf(w, "%s\n\n%s\n", i18n.T(lang, i18n.CLIHelpTitle), i18n.T(lang, i18n.CLIHelpUsage))
	fmt.Fprintf(w, "%s\n\n", i18n.T(lang, i18n.CLIHelpSynopsis))
	fmt.Fprintln(w, i18n.T(lang, i18n.CLIHelpFlags))
	printDefaults(w, fs, lang)
	fmt.Fprintf(w, "\n%s\n", i18n.T(lang, i18n.CLIHelpEnv))
	fmt.Fprintf(w, "%s\n\n", i18n.T(lang, i18n.CLIHelpEnvBlock))
	fmt.Fprintln(w, i18n.T(lang, i18n.CLIHelpExit))
	fmt.Fprintf(w, "%s\n", i18n.T(lang, i18n.CLIHelpExitBlock))
}

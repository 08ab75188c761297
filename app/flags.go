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
	SessionDir     string
	Cwd            string
	LogLevel       string
	Version        bool
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
	fs.StringVar(&f.Mode, "mode", "rpc", "protocol: rpc (stdio JSONL) or acp (Agent Client Protocol)")
	fs.StringVar(&f.Model, "model", "", "model as provider/id (e.g. fake/echo, openai/gpt-4.1-mini)")
	fs.StringVar(&f.Provider, "provider", "", "provider of --model when --model has no provider/ prefix")
	fs.StringVar(&f.APIKey, "api-key", "", "API key for the provider of --model (prefer environment variables)")
	fs.StringVar(&f.Thinking, "thinking", "", "thinking level: off, minimal, low, medium, high, xhigh")
	fs.StringVar(&f.PermissionMode, "permission-mode", "", "plan, allowlist, default, auto-edit, auto or full-auto")
	fs.Var(&f.Allow, "allow", "allow rule such as 'bash(npm test*)' (repeatable)")
	fs.Var(&f.Deny, "deny", "deny rule such as 'bash(terraform *)' (repeatable)")
	fs.StringVar(&f.Tools, "tools", "", "comma-separated active tools (default "+strings.Join(DefaultActiveTools, ",")+" plus host tools; ls and todo are opt-in): names replace the list, +name adds, -name removes")
	fs.StringVar(&f.ToolsPreset, "tools-preset", "", "tool preset: default, minimal, codemode-only (or codemode) or coordinator")
	fs.StringVar(&f.Codemode, "codemode", "", "codemode tool: off, on or only (default: the preset's)")
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
	fs.StringVar(&f.Host, "host", "", "host adapter module (.mjs, .cjs or .js) run in a Node sidecar (see README \"Host adapters\")")
	fs.StringVar(&f.HostCmd, "host-cmd", "", "command of an out-of-process host speaking docs/host-protocol.md")
	fs.StringVar(&f.Profile, "profile", "", "profile file (host, instructions, skillDirs, config, sessionDir, ...)")
	fs.Var(&f.AgentDirs, "agent-dir", "directory of sub-agent definitions (*.md; repeatable)")
	fs.BoolVar(&f.Trust, "trust", false, "trust the project: load its .ama/hooks.json and .ama/agents definitions")
	fs.BoolVar(&f.NoTrust, "no-trust", false, "do not trust the project (its .ama/hooks.json and .ama/agents are skipped)")
	fs.BoolVar(&f.Print, "p", false, "print mode: run the prompt (arguments and/or piped stdin) unattended, print the result, exit")
	fs.BoolVar(&f.Print, "print", false, "same as -p")
	fs.StringVar(&f.OutputFormat, "output-format", "text", "with -p: text (the final answer), json (one result object) or stream-json (the events, one per line)")
	fs.IntVar(&f.MaxTurns, "max-turns", 0, "with -p: end the run after this many model replies (exit 8)")
	fs.Float64Var(&f.MaxCost, "max-cost", 0, "end a run once its replies cost this many USD (from the model's prices; -p exits 8)")
	fs.BoolVar(&f.NoStdin, "no-stdin", false, "with -p: never read stdin")
	fs.Var(&f.Images, "image", "with -p: attach this image file to the prompt (repeatable)")
	fs.StringVar(&f.Lang, "lang", "", i18n.T(lang, i18n.CLIHelpLang))
	fs.Usage = func() {}
	// Flags and prompt words may interleave (`-p hi --model fake/echo`);
	// `--` ends the flags.
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if err == flag.ErrHelp {
				fs.SetOutput(usage)
				printUsage(usage, fs, lang)
			}
			return nil, err
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
	if err := checkPrintFlags(f, set); err != nil {
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
	for _, set := range []bool{f.Session != "", f.Resume != "", f.Continue} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New(i18n.T(lang, i18n.CLISessionExclusive))
	}
	if f.Host != "" && f.HostCmd != "" {
		return nil, errors.New(i18n.T(lang, i18n.CLIHostExclusive))
	}
	return f, nil
}

// checkPrintFlags refuses the print-mode flags outside -p and -p with a
// protocol mode (usage errors, exit 2).
func checkPrintFlags(f *Flags, set map[string]bool) error {
	if !f.Print {
		if len(f.Prompt) > 0 {
			return fmt.Errorf("unexpected argument %q (a prompt needs -p)", f.Prompt[0])
		}
		for _, n := range []string{"output-format", "max-turns", "no-stdin", "image"} {
			if set[n] {
				return fmt.Errorf("--%s needs -p", n)
			}
		}
	}
	if f.Print && set["mode"] {
		return fmt.Errorf("-p cannot be combined with --mode %s", f.Mode)
	}
	switch f.OutputFormat {
	case "text", "json", "stream-json":
	default:
		return fmt.Errorf("--output-format must be text, json or stream-json, not %q", f.OutputFormat)
	}
	if set["max-turns"] && f.MaxTurns < 1 {
		return fmt.Errorf("--max-turns must be an integer of at least 1, not %d", f.MaxTurns)
	}
	if set["max-cost"] && (math.IsNaN(f.MaxCost) || math.IsInf(f.MaxCost, 0) || f.MaxCost <= 0) {
		return fmt.Errorf("--max-cost must be a finite number of USD above 0, not %v", f.MaxCost)
	}
	if f.NoStdin && slices.Contains(f.Prompt, "-") {
		return fmt.Errorf("a prompt word - (read stdin) cannot be combined with --no-stdin")
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
// codes sections in short).
// The title, headings and the --lang line follow lang; the synopsis,
// the other flag descriptions, the environment and exit-code lines are
// English in both languages (not translated yet, README "Interface
// language").
func printUsage(w io.Writer, fs *flag.FlagSet, lang i18n.Lang) {
	fmt.Fprintf(w, "%s\n\n%s\n", i18n.T(lang, i18n.CLIHelpTitle), i18n.T(lang, i18n.CLIHelpUsage))
	fmt.Fprint(w, `  ama-rpc [flags]                    serve --mode rpc (default) or --mode acp on stdin/stdout
  ama-rpc -p [flags] [prompt…] [-]   print mode: run one prompt unattended, print the result, exit
  ama-rpc sessions list [--cwd dir] [--all] [--session-dir dir]
                                     print the stored sessions, one JSON object per line
  ama-rpc explain [--cwd dir] [--permission-mode m] [--allow r] [--deny r] [--unattended]
                                     run the permission pipeline over tool calls read from stdin
  ama-rpc schema [--out dir]         print (or write dir/rpc.schema.json) the JSON Schema of the protocol
  ama-rpc replay --script fake.json [--mode rpc|acp] [--check expected.jsonl] < commands.jsonl
                                     the replay kit: the server with a scripted fake model, a normalised transcript
  ama-rpc help                       print this text

`)
	fmt.Fprintln(w, i18n.T(lang, i18n.CLIHelpFlags))
	fs.PrintDefaults()
	fmt.Fprintf(w, "\n%s\n", i18n.T(lang, i18n.CLIHelpEnv))
	fmt.Fprint(w, `  HOME, XDG_CONFIG_HOME, XDG_DATA_HOME   locate config (~/.config/ama) and data (~/.local/share/ama)
  AMA_CONFIG_DIR, AMA_DATA_DIR           override those two directories
  AMA_FAKE_SCRIPT                        JSON script of the fake model (see README "Fake provider scripts")
  AMA_FAKE_RECORD                        file receiving one JSON line per fake model request
  AMA_APPROVAL_TIMEOUT_MS                how long a permission ask waits for the host (default 600000)
  AMA_STDIN_WAIT_MS                      -p with prompt words: wait this long for piped stdin (default 2000, 0: never)
  AMA_NODE                               JavaScript runtime of host adapters (node, or Electron with ELECTRON_RUN_AS_NODE)
  OPENAI_API_KEY, OPENAI_BASE_URL        key and endpoint of the openai provider
  OPENROUTER_API_KEY, DEEPSEEK_API_KEY, GROQ_API_KEY, TOGETHER_API_KEY
                                         keys of the other presets
  AMA_API_KEY_<ID>                       key of any provider by id (e.g. AMA_API_KEY_WORK)
  AMA_LANG                               interface language (zh or en; beats --lang, ui.language, LC_ALL/LC_MESSAGES/LANG)

`)
	fmt.Fprintln(w, i18n.T(lang, i18n.CLIHelpExit))
	fmt.Fprint(w, `  0        stdin ended and every started run finished (also --help, --version, help)
  1        -p: the run failed (model error, blocked prompt) or was aborted
  2        bad flags or arguments (unknown flag, bad --mode/--permission-mode/--thinking value, --session-id not a UUID,
           print-mode flags without -p, -p without a prompt, an unusable image)
  3        configuration error (unreadable or invalid config file, missing cwd)
  4        no usable model (none given, unknown provider or model, missing key); --mode acp answers -32000 instead
  5        session file missing, corrupt, locked or of another directory
  6        host adapter failed to load or start (missing file, load error, create() failed or timed out, no Node)
  7        -p: a tool call was denied (and nothing worse happened)
  8        -p: a budget (--max-turns, --max-cost, limits.*) ended the run
  9        -p: a plan awaits approval (plan.unattended: stop)
  78       host adapter wants another host API version
  130/143  SIGINT / SIGTERM
`)
}

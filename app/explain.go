package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/secrets"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/sandbox"
	"github.com/armadra/ama-rpc/tools"
)

// explainInput is one line of `ama-rpc explain` input.
type explainInput struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// explainOutput is one verdict line.
type explainOutput struct {
	Decision     string                  `json:"decision,omitempty"`
	Layer        string                  `json:"layer,omitempty"`
	Reason       string                  `json:"reason,omitempty"`
	Dangerous    []string                `json:"dangerous,omitempty"`
	Classify     bool                    `json:"classify,omitempty"`
	AutoDecision *approvals.AutoDecision `json:"autoDecision,omitempty"`
	// Sandboxed: the sandbox free pass allowed the call.
	Sandboxed bool `json:"sandboxed,omitempty"`
	// RunsSandboxed tells, for bash calls when sandbox.bash is "auto",
	// whether the call would run in the OS sandbox (false: sandbox:false,
	// or the kernel has no usable sandbox).
	RunsSandboxed *bool `json:"runsSandboxed,omitempty"`
	// SandboxStops lists what of the command the OS sandbox would refuse
	// (predicted from its text; see sandbox.Command.Predict).
	SandboxStops []string `json:"sandboxStops,omitempty"`
	// StoppedBy says which layer would stop the call: "rule" (the
	// permission pipeline denies it), "sandbox", or "both"; absent when
	// neither would.
	StoppedBy string       `json:"stoppedBy,omitempty"`
	Hook      *explainHook `json:"hook,omitempty"`
	Error     string       `json:"error,omitempty"`
}

// runExplain runs the permission pipeline over tool calls read as JSONL
// from stdin, without executing anything, and prints one verdict per line.
func runExplain(env Env, args []string, lang i18n.Lang) int {
	fs := newSubFlags(env, lang, "explain", "ama-rpc explain", func() string { return i18n.T(lang, i18n.CLIExplainUsage) })
	cwd := fs.String("cwd", env.Cwd, fs.help("cwd"))
	mode := fs.String("permission-mode", "", fs.help("permission-mode"))
	unattended := fs.Bool("unattended", false, fs.help("unattended"))
	var allow, deny, ask multiFlag
	fs.Var(&allow, "allow", fs.help("allow"))
	fs.Var(&deny, "deny", fs.help("deny"))
	fs.Var(&ask, "ask", fs.help("ask"))
	hooksFile := fs.String("hooks", "", fs.help("hooks"))
	replayFile := fs.String("replay", "", fs.help("replay"))
	sessionsFlag := fs.String("sessions", "", fs.help("sessions"))
	candidate := fs.Bool("candidate", false, fs.help("candidate"))
	all := fs.Bool("all", false, fs.help("all"))
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if *replayFile != "" && (*hooksFile != "" || fs.NArg() > 0) {
		fmt.Fprintln(env.Stderr, "ama-rpc explain: --replay runs no hooks and takes no arguments")
		return ExitUsage
	}
	if *replayFile == "" && (*candidate || *all || *sessionsFlag != "") {
		fmt.Fprintln(env.Stderr, "ama-rpc explain: --candidate, --all and --sessions go with --replay")
		return ExitUsage
	}
	if *mode != "" {
		if _, err := approvals.ParseMode(*mode); err != nil {
			fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
			return ExitUsage
		}
	}
	abs, err := filepath.Abs(*cwd)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitUsage
	}
	paths, err := config.ResolvePaths(env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitConfig
	}
	user, err := config.Load(paths.UserFile())
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitConfig
	}
	sessions := sessionsDir(paths, user, nil, "")
	if *replayFile != "" {
		return runReplay(env, paths, user, sessions, replayOptions{file: absIn(env.Cwd, *replayFile), sessions: sessionsRootOf(*sessionsFlag, env.Cwd, sessions),
			mode: *mode, unattended: *unattended, candidate: *candidate, all: *all,
			layer: approvals.Layer{Mode: *mode, Allow: allow, Deny: deny, Ask: ask}})
	}
	project, err := config.Load(config.ProjectFile(abs))
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitConfig
	}
	pol, warnings, err := approvals.BuildPolicy(permissionLayer(user), permissionLayer(project),
		approvals.Layer{Mode: *mode, Allow: allow, Deny: deny, Ask: ask})
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitUsage
	}
	for _, w := range warnings {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: warning: %s\n", w)
	}
	pol.Unattended = *unattended
	pol.Private = secrets.PrivateDirs(paths.Data, sessions) // as the server judges (session/deps.go)
	var hookSet *hooks.Dispatcher
	if *hooksFile != "" {
		set, _, err := hooks.Load(hooks.Layers{Profile: *hooksFile})
		if err != nil {
			fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
			return ExitConfig
		}
		hookSet = hooks.NewDispatcher(set, hooks.Options{Env: childenv.Environ(toolEnvPolicy(user))})
	}
	sb, err := buildSandbox(env.Getenv, paths, user, project, sessions, env.Cwd, newLogger(env.Stderr, "warn"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitConfig
	}
	if sb.Active() {
		pol.Sandbox = approvals.Sandbox{Active: true, NetworkDenied: sb.NetworkDenied()}
	}
	registry := tools.Default()
	readOnly := pol.Mode == approvals.ModePlan
	explain(env.Stdin, env.Stdout, pol, registry, abs, paths.Home, sb.Settings().Wanted(), hookSet, sb.For(abs, "", readOnly))
	return ExitOK
}

// explain decides each input line.
// sandboxWanted adds runsSandboxed to bash verdicts; hk adds the
// PreToolUse hooks' verdict (nil: none).
func explain(in io.Reader, out io.Writer, pol *approvals.Policy, registry *tools.Registry, cwd, home string, sandboxWanted bool, hk *hooks.Dispatcher, sb *sandbox.Command) {
	lr := stdio.NewLineReader(in, 0)
	w := stdio.NewWriter(out, stdio.WriterOptions{})
	defer w.Close()
	for {
		line, err := lr.Next()
		if errors.Is(err, stdio.ErrLineTooLong) {
			w.Send(explainOutput{Error: "line too long"})
			continue
		}
		if err != nil {
			return
		}
		var call explainInput
		if err := json.Unmarshal(line, &call); err != nil || call.Tool == "" {
			w.Send(explainOutput{Error: `each line must be {"tool":"<name>","input":{...}}`})
			continue
		}
		if len(call.Input) == 0 {
			call.Input = json.RawMessage(`{}`)
		}
		class := approvals.ClassExecute // tools not built in are host tools
		if t, ok := registry.Get(call.Tool); ok {
			class = approvals.Class(tools.PermissionOf(t, call.Input))
		}
		// The same resolution as the server: the bash cwd argument, and
		// symlinks of the paths that exist, are followed.
		facts := tools.Resolve(call.Tool, call.Input, &tools.Env{Cwd: cwd, Home: home}).Facts()
		ac := approvals.Call{Tool: call.Tool, Class: class, Input: call.Input, Cwd: cwd, Home: home, Facts: facts}
		v, h := decideWithHooks(hk, ac, pol)
		o := explainOutput{Decision: string(v.Decision), Layer: v.Layer, Reason: v.Reason, Dangerous: v.Dangerous,
			AutoDecision: v.Auto, Sandboxed: v.Sandboxed, Hook: h}
		if sandboxWanted && call.Tool == tools.NameBash && class != approvals.ClassRead {
			runs := approvals.RunsSandboxed(ac, pol)
			o.RunsSandboxed = &runs
		}
		if o.RunsSandboxed != nil && *o.RunsSandboxed && facts.Shell != nil {
			o.SandboxStops = sb.Predict(shellEffects(facts.Shell))
		}
		switch rule := v.Decision == approvals.Deny; {
		case rule && len(o.SandboxStops) > 0:
			o.StoppedBy = "both"
		case rule:
			o.StoppedBy = "rule"
		case len(o.SandboxStops) > 0:
			o.StoppedBy = "sandbox"
		}
		if v.Classify {
			o.Classify = true
			o.Layer = "classifier"
			o.Reason += " (undecided by rules: the auto-mode classifier model would be asked; explain does not call it)"
			if pol.Unattended {
				o.Reason += "; unattended, anything but its allow is deny"
			}
		}
		w.Send(o)
	}
}

// networkCommands use the network by their nature; networkSubcommands only
// with one of the listed first arguments.
var (
	networkCommands    = []string{"curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "telnet", "ftp", "ping", "dig", "nslookup", "host"}
	networkSubcommands = map[string][]string{
		"git": {"fetch", "pull", "push", "clone", "ls-remote"}, "npm": {"install", "i", "ci", "publish", "update"},
		"pnpm": {"install", "add", "update"}, "yarn": {"install", "add"}, "pip": {"install", "download"},
		"pip3": {"install", "download"}, "go": {"get", "install"}, "cargo": {"install", "fetch", "update"},
	}
)

// shellEffects are a bash command's statically known writes (and
// deletions), reads (input redirects and absolute path arguments) and
// whether it uses the network, for sandbox.Command.Predict.
func shellEffects(a *approvals.Analysis) (writes, reads []string, network bool) {
	for _, t := range append(slices.Clone(a.Writes), a.Deletes...) {
		if !t.Dynamic && t.Path != "" {
			writes = append(writes, t.Path)
		}
	}
	for _, t := range a.Inputs {
		if !t.Dynamic && t.Path != "" {
			reads = append(reads, t.Path)
		}
	}
	for _, s := range a.Segments {
		for _, arg := range s.Args {
			if filepath.IsAbs(arg) {
				reads = append(reads, filepath.Clean(arg))
			}
		}
		if slices.Contains(networkCommands, s.Name) {
			network = true
		}
		if subs, ok := networkSubcommands[s.Name]; ok && len(s.Args) > 0 && slices.Contains(subs, s.Args[0]) {
			network = true
		}
	}
	return writes, reads, network
}

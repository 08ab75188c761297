package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/llm/openai"
	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/skills"
	"github.com/armadra/ama-rpc/tools"
)

// Version is the ama-rpc version (set with -ldflags at release time).
var Version = "0.1.0"

// Exit codes (the CLI contract shared with the reference).
const (
	ExitOK      = 0
	ExitRuntime = 1
	ExitUsage   = 2
	ExitConfig  = 3
	ExitNoModel = 4
	ExitSession = 5
)

// Env is everything the process takes from its surroundings, so tests can
// run the whole server in-process.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Cwd is the process working directory.
	Cwd string
	// Hooks make runs deterministic in tests; nil in production.
	Hooks *Hooks
}

// Hooks inject clocks, id generators and writer bounds.
type Hooks struct {
	Now        func() time.Time
	NewUUID    func() string
	NewEntryID func() string
	Writer     rpc.WriterOptions
	// ShutdownGrace overrides rpc.DefaultShutdownGrace (tests).
	ShutdownGrace time.Duration
	// WriteFault injects session-file write errors (session.Settings).
	WriteFault func() error
	// OnServer receives the server before it runs.
	OnServer func(*rpc.Server)
}

// SignalError is the cancellation cause of a signal: Main exits 128+n.
type SignalError struct{ Signal syscall.Signal }

func (e SignalError) Error() string { return "received " + e.Signal.String() }

// Main runs ama-rpc and returns the process exit code.
func Main(ctx context.Context, env Env) int {
	if len(env.Args) > 0 {
		switch env.Args[0] {
		case "explain":
			return runExplain(env, env.Args[1:])
		case "sessions":
			return runSessions(env, env.Args[1:])
		}
	}
	flags, err := parseFlags(env.Args, env.Stderr)
	if errors.Is(err, errHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		return ExitUsage
	}
	if flags.Version {
		fmt.Fprintln(env.Stdout, Version)
		return ExitOK
	}
	log := newLogger(env.Stderr, flags.LogLevel)
	defer func() { _ = log.Sync() }()

	w, err := wire(env, flags, log)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		return exitCodeFor(err)
	}
	if flags.Mode == "acp" {
		return runACP(ctx, env, w)
	}
	return runRPC(ctx, env, w)
}

// exitCodeFor maps startup errors to exit codes.
func exitCodeFor(err error) int {
	switch {
	case errors.Is(err, errUsage):
		return ExitUsage
	case errors.Is(err, config.ErrInvalid):
		return ExitConfig
	case errors.Is(err, errNoModel), errors.Is(err, llm.ErrModelNotFound), errors.Is(err, llm.ErrProviderNotFound):
		return ExitNoModel
	case errors.Is(err, errSession):
		return ExitSession
	case errors.Is(err, errHookFailed):
		return ExitHook
	}
	return ExitRuntime
}

var (
	errUsage   = errors.New("usage")
	errNoModel = errors.New("no usable model")
	errSession = errors.New("session")
)

// wiring is the composed process: shared session dependencies and the
// startup session.
type wiring struct {
	log    *zap.Logger
	deps   *session.Deps
	broker *rpc.Broker
	first  *session.Session
	reason string
	flags  *Flags
}

func wire(env Env, flags *Flags, log *zap.Logger) (*wiring, error) {
	getenv := env.Getenv
	paths, err := config.ResolvePaths(getenv)
	if err != nil {
		return nil, err
	}
	cwd := env.Cwd
	if flags.Cwd != "" {
		cwd = flags.Cwd
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return nil, fmt.Errorf("%w: cwd: %v", config.ErrInvalid, err)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: working directory %s does not exist", config.ErrInvalid, cwd)
	}
	user, err := config.Load(paths.UserFile())
	if err != nil {
		return nil, err
	}
	project, err := config.Load(config.ProjectFile(cwd))
	if err != nil {
		return nil, err
	}

	ref, err := chooseModel(flags, user)
	if err != nil {
		return nil, err
	}
	registry, err := buildRegistry(getenv, user, flags, ref)
	if err != nil {
		return nil, err
	}
	_, entry, err := registry.Find(ref.Provider, ref.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (see get_available_models; pass --model provider/id)", errNoModel, err)
	}
	if !entry.HasKey {
		return nil, fmt.Errorf("%w: provider %s needs an API key: set %s, add apiKey/apiKeyEnv to its entry in %s, or pass --api-key",
			errNoModel, entry.ID, keyHint(entry.ID), paths.UserFile())
	}

	var skillList []skills.Skill
	if b, err := skills.Builtin(paths.Data); err == nil {
		skillList = append(skillList, b)
	} else {
		log.Warn("builtin skill", zap.Error(err))
	}
	skillList = append(skillList, skills.Discover(map[string]string{
		"user": filepath.Join(paths.Config, "skills"), "project": filepath.Join(cwd, ".ama", "skills"),
	})...)

	timeout := 10 * time.Minute
	if user.Approvals.TimeoutMs > 0 {
		timeout = time.Duration(user.Approvals.TimeoutMs) * time.Millisecond
	}
	if v := getenv("AMA_APPROVAL_TIMEOUT_MS"); v != "" {
		var ms int64
		if _, err := fmt.Sscan(v, &ms); err != nil || ms <= 0 {
			return nil, fmt.Errorf("%w: AMA_APPROVAL_TIMEOUT_MS must be a positive integer", config.ErrInvalid)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	sessionsDir := filepath.Join(paths.Data, "sessions")
	if user.SessionDir != "" {
		sessionsDir = user.SessionDir
	}
	if flags.SessionDir != "" {
		sessionsDir = flags.SessionDir
	}

	policy, warnings, err := approvals.BuildPolicy(permissionLayer(user), permissionLayer(project), approvals.Layer{
		Mode: flags.PermissionMode, Allow: flags.Allow, Deny: flags.Deny,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}
	for _, w := range warnings {
		log.Warn("permission config: " + w)
	}

	broker := rpc.NewBroker()
	deps := &session.Deps{
		Log:      log,
		Models:   registry,
		Tools:    tools.Default(tools.WithShellInspector(shellInspector(paths.Home))),
		Approver: broker,
		Policy:   policy,
		Dirs:     session.Dirs{Data: paths.Data, Sessions: sessionsDir, Config: paths.Config, Home: paths.Home},
		Settings: session.Settings{Persist: !flags.NoSession, ApprovalTimeout: timeout,
			ClassifierMode: user.Permission.Classifier, ClassifierTimeout: time.Duration(user.Permission.ClassifierTimeoutMs) * time.Millisecond},
		Skills:  skillList,
		Version: Version,
	}
	if deps.Hooks, err = loadHooks(paths, cwd, flags, user, log); err != nil {
		return nil, err
	}
	if h := env.Hooks; h != nil {
		deps.Now, deps.NewUUID, deps.NewEntryID = h.Now, h.NewUUID, h.NewEntryID
		deps.Settings.WriteFault = h.WriteFault
	}
	switch u := user.Plan.Unattended; u {
	case "", "stop", "approve":
		deps.Settings.PlanUnattended = u
	default:
		return nil, fmt.Errorf("%w: plan.unattended must be stop or approve, not %q", config.ErrInvalid, u)
	}
	deps.Settings.PlanDirectory = user.Plan.Directory
	deps.Settings.MaxTurns, deps.Settings.MaxCost = user.Limits.Turns, user.Limits.Cost
	deps.Settings.CompactionPercent = user.Compaction.ThresholdPercent
	deps.Settings.KeepRecentTokens = user.Compaction.KeepRecentTokens
	if !flags.NoSession && (user.Checkpoints.Enabled == nil || *user.Checkpoints.Enabled) {
		deps.Checkpoints = checkpoint.NewStore(filepath.Join(paths.Data, "file-history"), user.Checkpoints.MaxFileBytes)
	}
	deps.Settings.NoAutoRetry = user.Retry.Enabled != nil && !*user.Retry.Enabled
	deps.Settings.NoAutoCompaction = user.Compaction.Enabled != nil && !*user.Compaction.Enabled
	if r := user.Retry; r.MaxAttempts > 0 || r.BaseDelayMs > 0 {
		deps.Settings.MaxRetries = r.MaxAttempts
		deps.Settings.RetryBaseDelay = time.Duration(r.BaseDelayMs) * time.Millisecond
	}
	if fm := user.FallbackModel; fm != "" {
		p, id, ok := llm.ParseRef(fm)
		if !ok {
			return nil, fmt.Errorf("%w: fallbackModel must be provider/id, not %q", config.ErrInvalid, fm)
		}
		deps.Settings.FallbackModel = llm.ModelRef{Provider: p, ID: id}
	}
	if am := user.Permission.AutoModel; am != "" {
		p, id, ok := llm.ParseRef(am)
		if !ok {
			return nil, fmt.Errorf("%w: permission.autoModel must be provider/id, not %q", config.ErrInvalid, am)
		}
		deps.Settings.ClassifierModel = llm.ModelRef{Provider: p, ID: id}
	}

	thinking := flags.Thinking
	if thinking == "" {
		thinking = user.ThinkingLevel
	}
	active := DefaultActiveTools
	if flags.Tools != "" {
		active = splitList(flags.Tools)
	}
	opts := session.Options{
		Cwd: cwd, Model: ref, ThinkingLevel: thinking, SessionID: flags.SessionID,
		ActiveTools: active, ForceModel: flags.Model != "",
	}
	first, reason, err := firstSession(deps, flags, opts)
	if err != nil {
		return nil, err
	}
	if err := sessionStart(deps.Hooks, first, reason, log); err != nil {
		first.Close()
		return nil, err
	}
	return &wiring{log: log, deps: deps, broker: broker, first: first, reason: reason, flags: flags}, nil
}

// permissionLayer is the permission part of a config file.
func permissionLayer(c *config.Config) approvals.Layer {
	return approvals.Layer{Mode: c.Permission.Mode, Allow: c.Permission.Allow, Deny: c.Permission.Deny,
		AutoSafe: c.Permission.AutoSafeCommands, DisableBuiltinDeny: c.Permission.DisableBuiltinDeny, PlanBash: c.Plan.Bash}
}

// shellInspector describes a bash command for approval previews: the
// danger it carries, in words, and the paths it writes or deletes.
func shellInspector(home string) tools.ShellInspector {
	return func(command, cwd string) ([]string, []string) {
		a := approvals.AnalyzeShell(command, cwd, home)
		var danger []string
		for _, d := range a.Danger() {
			danger = append(danger, d.Reason)
		}
		return danger, append(a.WriteTargets(), a.DeleteTargets()...)
	}
}

// DefaultActiveTools are offered to the model unless --tools says
// otherwise; ls and todo are registered but opt-in (glob covers listing,
// plans cover task lists).
var DefaultActiveTools = []string{"bash", "edit", "glob", "grep", "read", "write"}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// chooseModel picks the startup model: --model, else the config's model.
func chooseModel(flags *Flags, user *config.Config) (llm.ModelRef, error) {
	spec := flags.Model
	if spec == "" {
		spec = user.Model
	}
	if spec == "" {
		return llm.ModelRef{}, fmt.Errorf("%w: pass --model provider/id (for example --model fake/echo, or --model openai/<id> with OPENAI_BASE_URL and OPENAI_API_KEY) or set \"model\" in the user config", errNoModel)
	}
	if p, id, ok := llm.ParseRef(spec); ok {
		return llm.ModelRef{Provider: p, ID: id}, nil
	}
	if flags.Provider != "" {
		return llm.ModelRef{Provider: flags.Provider, ID: spec}, nil
	}
	return llm.ModelRef{}, fmt.Errorf("%w: --model must be provider/id, not %q", errUsage, spec)
}

// buildRegistry assembles the model catalogue: the scripted fake
// provider, the OpenAI-compatible presets and the user's providers.
func buildRegistry(getenv func(string) string, user *config.Config, flags *Flags, ref llm.ModelRef) (*llm.Registry, error) {
	fp := fake.New(fake.Options{ScriptPath: getenv("AMA_FAKE_SCRIPT"), RecordPath: getenv("AMA_FAKE_RECORD")})
	cfg := map[string]openai.ProviderConfig{}
	for id, raw := range user.Providers {
		var pc openai.ProviderConfig
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pc); err != nil {
			return nil, fmt.Errorf("%w: providers.%s: %v", config.ErrInvalid, id, err)
		}
		cfg[id] = pc
	}
	cliKeys := map[string]string{}
	if flags.APIKey != "" {
		cliKeys[ref.Provider] = flags.APIKey
	}
	entries, err := openai.BuildEntries(cfg, cliKeys, getenv, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}
	return llm.NewRegistry(append([]*llm.ProviderEntry{fp.Entry()}, entries...)...), nil
}

// keyHint names the environment variable that gives a provider its key.
func keyHint(provider string) string {
	for _, p := range openai.Presets() {
		if p.ID == provider && p.KeyEnv != "" {
			return p.KeyEnv + " (or " + openai.EnvKeyVar(provider) + ")"
		}
	}
	return openai.EnvKeyVar(provider)
}

func runRPC(ctx context.Context, env Env, w *wiring) int {
	opts := rpc.Options{
		In: env.Stdin, Out: env.Stdout, Log: w.log, Version: Version, Session: w.first, StartReason: w.reason,
		Models: w.deps.Models, Broker: w.broker, Deps: w.deps,
	}
	if env.Hooks != nil {
		opts.Writer = env.Hooks.Writer
		opts.ShutdownGrace = env.Hooks.ShutdownGrace
	}
	srv := rpc.NewServer(opts)
	if env.Hooks != nil && env.Hooks.OnServer != nil {
		env.Hooks.OnServer(srv)
	}
	err := srv.Run(ctx)
	sessionEnd(w.deps.Hooks, w.first, "exit", w.log)
	w.first.Close()
	return runExit(ctx, err, env, w.log)
}

// runExit maps the end of a serving run to the exit code.
func runExit(ctx context.Context, err error, env Env, log *zap.Logger) int {
	if errors.Is(err, rpc.ErrInterrupted) {
		var se SignalError
		if errors.As(context.Cause(ctx), &se) {
			return 128 + int(se.Signal)
		}
		return 128 + int(syscall.SIGINT)
	}
	if err != nil {
		log.Error("server stopped", zap.Error(err))
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		return ExitRuntime
	}
	return ExitOK
}

func newLogger(w io.Writer, level string) *zap.Logger {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		lvl = zapcore.WarnLevel
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), lvl)
	return zap.New(core).Named("ama")
}

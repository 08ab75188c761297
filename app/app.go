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
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/host"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/memlimit"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/llm/openai"
	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/telemetry"
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
	ExitHost    = 6  // host adapter failed to load or start
	ExitHostAPI = 78 // host adapter wants another host API version
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
	// Environ is the process environment handed to a host adapter (nil:
	// os.Environ()).
	Environ func() []string
}

// Hooks inject clocks, id generators and writer bounds.
type Hooks struct {
	Now        func() time.Time
	NewUUID    func() string
	NewEntryID func() string
	Writer     stdio.WriterOptions
	// ShutdownGrace overrides stdio.DefaultShutdownGrace (tests).
	ShutdownGrace time.Duration
	// WriteFault injects session-file write errors (session.Settings).
	WriteFault func() error
	// OnServer receives the server before it runs.
	OnServer func(*rpc.Server)
	// Clock is the wall clock of throughput telemetry (session.Deps.Clock).
	Clock func() time.Time
	// AfterFunc arms cache-warming timers (session.Deps.AfterFunc).
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// BootRetry shortens the least time between two ACP start-up
	// attempts without a model (acp.Options.BootRetry).
	BootRetry time.Duration
}

// SignalError is the cancellation cause of a signal: Main exits 128+n.
type SignalError struct{ Signal syscall.Signal }

func (e SignalError) Error() string { return "received " + e.Signal.String() }

// SignalExit reports the exit code 128+n when ctx was cancelled by a
// signal (its cause is a SignalError).
func SignalExit(ctx context.Context) (int, bool) {
	var se SignalError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &se) {
		return 128 + int(se.Signal), true
	}
	return 0, false
}

// Main runs ama-rpc and returns the process exit code.
func Main(ctx context.Context, env Env) int {
	lang := earlyLang(env)
	// A subcommand's name may follow the global --lang (`ama-rpc --lang zh
	// explain`); its own flags accept --lang too.
	if sub, err := leadingLang(env.Args, lang); len(sub) > 0 && subcommands[sub[0]] {
		if err != nil {
			fmt.Fprintln(env.Stderr, i18n.T(lang, i18n.CLIUsageError, err))
			return ExitUsage
		}
		switch sub[0] {
		case "explain":
			return runExplain(env, sub[1:], lang)
		case "sessions":
			return runSessions(env, sub[1:], lang)
		case "schema":
			return runSchema(env, sub[1:], lang)
		case "replay":
			return runReplayKit(ctx, env, sub[1:])
		case "help":
			_, _ = parseFlags([]string{"--help"}, env.Stdout, lang)
			return ExitOK
		}
	}
	flags, err := parseFlags(env.Args, env.Stdout, lang)
	if errors.Is(err, errHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, i18n.T(lang, i18n.CLIUsageError, err))
		return ExitUsage
	}
	if flags.Version {
		fmt.Fprintln(env.Stdout, Version)
		return ExitOK
	}
	log := newLogger(env.Stderr, flags.LogLevel)
	defer func() { _ = log.Sync() }()
	if flags.Print {
		return runPrint(ctx, env, flags, log, lang)
	}

	w, err := wire(ctx, env, flags, log)
	if err != nil && flags.Mode == "acp" && exitCodeFor(err) == ExitNoModel {
		return runACPGate(ctx, env, flags, log, err) // ama's auth gate: -32000 until a model is configured
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		return exitCodeFor(err)
	}
	defer func() { _ = w.deps.Decisions.Close() }()
	defer w.deps.Sandbox.CloseLaunchers() // the sandbox's pre-started launchers end with the server
	if flags.Mode == "acp" {
		return runACP(ctx, env, w)
	}
	return runRPC(ctx, env, w)
}

// subcommands are the names Main dispatches before the server's flags.
var subcommands = map[string]bool{"explain": true, "sessions": true, "schema": true, "replay": true, "help": true}

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
	case errors.Is(err, host.ErrVersion):
		return ExitHostAPI
	case errors.Is(err, host.ErrLoad):
		return ExitHost
	case errors.Is(err, session.ErrStartBlocked):
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
	// mgr owns which sessions exist; first is the startup session it
	// opened (announced by the protocol).
	mgr    *session.Manager
	first  *session.Session
	reason string
	flags  *Flags
	// profile is the --profile file (nil: none); its HooksFile is the
	// profile hooks layer.
	profile *Profile
	// host is the active host adapter (nil: none).
	host *host.Host
	// watch ends the host's startup waits when stdin ends (set with host).
	watch *stdinWatch
	// early holds what was announced before the server serves.
	early *outbox
	// lang is the interface language of human-readable wire texts.
	lang i18n.Lang
	// replay bounds the numbered streams' rings (config replay).
	replay stdio.RingOptions
	// preset is the resolved tool preset (default, minimal, ...); from
	// is the message --from picked (nil: none).
	preset string
	from   *fromMessage
}

func wire(ctx context.Context, env Env, flags *Flags, log *zap.Logger) (w *wiring, err error) {
	getenv := env.Getenv
	paths, err := config.ResolvePaths(getenv)
	if err != nil {
		return nil, err
	}
	var profile *Profile
	if flags.Profile != "" {
		if profile, err = loadProfile(flags.Profile, env.Cwd); err != nil {
			return nil, err
		}
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
	user, err := loadUserConfig(paths.UserFile(), profile)
	if err != nil {
		return nil, err
	}
	project, err := config.LoadIn(cwd, config.ProjectFile(cwd))
	if err != nil {
		return nil, err
	}

	ref, err := chooseModel(flags, user)
	if err != nil {
		return nil, err
	}
	registry, err := buildRegistry(getenv, user, flags, ref, profile, log)
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

	timeout, err := millisSetting(10*time.Minute, user.Approvals.TimeoutMs, getenv, "AMA_APPROVAL_TIMEOUT_MS")
	if err != nil {
		return nil, err
	}
	deferTTL, err := millisSetting(0, user.Approvals.DeferTtlMs, getenv, "AMA_APPROVAL_DEFER_TTL_MS") // 0: session's default
	if err != nil {
		return nil, err
	}
	sessionsDir := sessionsDir(paths, user, profile, flags.SessionDir)

	policy, warnings, err := approvals.BuildPolicy(permissionLayer(user), permissionLayer(project), approvals.Layer{
		Mode: flags.PermissionMode, Allow: flags.Allow, Deny: flags.Deny,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}
	for _, w := range warnings {
		log.Warn("permission config: " + w)
	}
	policy.Safety = safetyFiles(paths, sessionsDir, flags.Profile, env.Cwd, profile)
	policy.Unattended = flags.Print // -p: nobody can answer, every final ask is a deny

	sb, err := buildSandbox(getenv, paths, user, project, sessionsDir, env.Cwd, log)
	if err != nil {
		return nil, err
	}
	verifySandbox(getenv, sb, log)
	var toolOpts []tools.Option // the bash previews use the resolved call's analysis
	if sb.Active() {
		toolOpts = append(toolOpts, tools.WithBashSandbox(sb.NetworkDenied()))
		policy.Sandbox = approvals.Sandbox{Active: true, NetworkDenied: sb.NetworkDenied()}
	}

	broker := rpc.NewBroker()
	deps := &session.Deps{
		Log:      log,
		Models:   registry,
		Tools:    tools.Default(toolOpts...),
		Approver: broker,
		Policy:   policy,
		Dirs:     session.Dirs{Data: paths.Data, Sessions: sessionsDir, Config: paths.Config, Home: paths.Home},
		Settings: session.Settings{Persist: !flags.NoSession, ApprovalTimeout: timeout, ApprovalDeferTTL: deferTTL,
			ClassifierMode: user.Permission.Classifier, ClassifierTimeout: time.Duration(user.Permission.ClassifierTimeoutMs) * time.Millisecond,
			ClassifierUserTokens: user.Permission.MaxUserTranscriptTokens, ClassifierToolTokens: user.Permission.MaxToolTranscriptTokens},
		Version: Version,
		Sandbox: sb,
	}
	if err := permissionGate(deps, user, project, log); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = deps.Decisions.Close()
		}
	}()
	var trusted bool
	if deps.Hooks, trusted, err = loadHooks(paths, cwd, flags, profile, user, log); err != nil {
		return nil, err
	}
	deps.Templates = discoverTemplates(paths.Config, cwd, profile, trusted, log)
	deps.Skills = discoverSkills(paths, cwd, profile, trusted, log)
	if h := env.Hooks; h != nil {
		deps.Now, deps.NewUUID, deps.NewEntryID = h.Now, h.NewUUID, h.NewEntryID
		deps.Settings.WriteFault = h.WriteFault
		deps.Clock, deps.AfterFunc = h.Clock, h.AfterFunc
	}
	switch u := user.Plan.Unattended; u {
	case "", "stop", "approve":
		deps.Settings.PlanUnattended = u
	default:
		return nil, fmt.Errorf("%w: plan.unattended must be stop or approve, not %q", config.ErrInvalid, u)
	}
	deps.Settings.PlanDirectory = user.Plan.Directory
	deps.Settings.ReplyLanguage = user.UI.ReplyLanguage
	if project.UI.ReplyLanguage != "" {
		deps.Settings.ReplyLanguage = project.UI.ReplyLanguage // project over user, as ama's merged config
	}
	deps.Settings.ToolEnv = toolEnvPolicy(user)
	deps.Reporting = telemetry.NewReporting() // one table per process (per run, in-process tests)
	if err := cacheSettings(&deps.Settings, user, getenv, deps.Log); err != nil {
		return nil, err
	}
	deps.Settings.MaxTurns, deps.Settings.MaxCost = user.Limits.TurnLimit(), user.Limits.CostLimit()
	if flags.MaxTurns > 0 { // --max-turns (-p only), --max-cost (any mode) win over the config
		deps.Settings.MaxTurns = flags.MaxTurns
	}
	if flags.MaxCost > 0 {
		deps.Settings.MaxCost = flags.MaxCost
	}
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
	if profile != nil {
		deps.Settings.Instructions = profile.Instructions
	}
	active := DefaultActiveTools
	hostSpec := flags.Host
	if hostSpec == "" && flags.HostCmd == "" && profile != nil {
		hostSpec = profile.Host
	}
	var h *host.Host
	var watch *stdinWatch
	early := &outbox{}
	if hostSpec != "" || flags.HostCmd != "" {
		// ama opens the startup session before the adapter, whose create()
		// sees its id and file: the file is found now, once (firstSession
		// opens it); a new session's id, and a fork's copy's (the copy is
		// made later, by the session manager, which takes the id), is
		// chosen now.
		var start startFile
		if start, err = startSession(flags, sessionsDir, cwd, deps.Settings.Persist); err != nil {
			return nil, err
		}
		if flags.SessionID == "" && (start.path == "" || flags.Fork != "") {
			flags.SessionID, flags.sessionIDMade = newUUID(deps), true
		}
		// The startup waits (create(), then session_start in hostStartup)
		// end when stdin ends: nobody reads it before the server starts.
		watch = watchStdin(ctx, env.Stdin)
		h, active, err = startHost(watch.ctx, env, flags, hostSpec, user.Host.Node, deps, ref, cwd, early, log)
		if err != nil || h == nil {
			watch.stop()
			watch = nil
		}
		if err != nil {
			return nil, err
		}
		if h != nil {
			defer func() {
				if err != nil {
					watch.stop()
					h.Dispose(context.Background())
				}
			}()
		}
		if h != nil {
			deps.Hooks.SetObserver(func(e hooks.Event, outs []hooks.Outcome) {
				for _, o := range outs {
					h.HookExecuted(string(e), o.Command.Command, o.ExitCode, o.Duration.Milliseconds())
				}
			})
		}
	}
	// ama's order: the preset's list (built-ins plus host tools, codemode
	// as its mode says), then the config's tools.default, then --tools,
	// both as +name/-name/names.
	sel, active, err := selectCodemode(flags, user, project, active, log)
	if err != nil {
		return nil, err
	}
	if active, err = applyToolSpec(active, user.Tools.Default); err != nil {
		return nil, fmt.Errorf("%w: tools.default: %v", config.ErrInvalid, err)
	}
	if flags.Tools != "" {
		if active, err = applyToolSpec(active, splitList(flags.Tools)); err != nil {
			return nil, fmt.Errorf("%w: --tools: %v", errUsage, err)
		}
	}
	if h != nil { // a tool the adapter disabled stays off (Armadra's older adapter disables task)
		off := h.Disabled()
		active = slices.DeleteFunc(active, func(n string) bool {
			if off[n] {
				log.Warn("the host adapter disabled this tool; tools.default and --tools cannot enable it", zap.String("tool", n))
			}
			return off[n]
		})
	}
	defDirs, skipped := agents.Dirs(flags.AgentDirs, user.Agents.Dirs, paths.Config, cwd, trusted)
	if skipped != "" {
		log.Warn(skipped)
	}
	if profile != nil {
		defDirs = withProfileAgentDirs(defDirs, len(flags.AgentDirs), profile.AgentDirs)
	}
	var runners agents.HostRunners
	if h != nil {
		runners = h // runners.provide: task(agent=<id>) runs on the host
	}
	var probe *agents.Prober
	if getenv("AMA_NO_AGENT_PROBE") != "1" && runners == nil {
		// External agents on PATH: listed in the task tool, probed for get_agents.
		probe = &agents.Prober{LookPath: agents.LookPathIn(getenv("PATH"), cwd), CacheFile: filepath.Join(paths.Data, "drivers.json")}
	}
	if active, err = wireAgents(deps, active, user.Subagents, user.Agents, defDirs, trusted, runners, probe, log); err != nil {
		return nil, err
	}
	var all session.ToolSet
	if err := registerCodemode(deps, sel, active, user, func() []tools.Tool {
		if all == nil { // the registry reads Decl while it is built
			return nil
		}
		return all.Tools()
	}); err != nil {
		return nil, err
	}
	if h != nil {
		deps.Tools = h.ToolSet(deps.Tools) // tools the adapter registers after create()
	}
	if err := wireMCP(deps, cwd, user, project, trusted, log); err != nil {
		return nil, err
	}
	all = deps.Tools
	opts := session.Options{
		Cwd: cwd, Model: ref, ThinkingLevel: thinking, SessionID: flags.SessionID,
		ActiveTools: active, ForceModel: flags.Model != "",
		// Only an explicit flag overrides the mode a resumed session
		// recorded; otherwise the policy's mode (config) applies to new
		// sessions and the recorded one to resumed sessions.
		PermissionMode: flags.PermissionMode,
	}
	lang := wiredLang(env, flags, profile, user, project)
	var from *fromMessage
	if flags.From != "" { // before the startup session: a bad --from leaves no fork behind
		if from, err = resolveFrom(sessionsDir, cwd, flags.From, lang); err != nil {
			return nil, err
		}
	}
	mgr := session.NewManager(deps)
	first, reason, err := firstSession(mgr, flags, opts)
	if err != nil {
		return nil, err
	}
	return &wiring{log: log, deps: deps, broker: broker, mgr: mgr, first: first, reason: reason, flags: flags, profile: profile, host: h, watch: watch, early: early,
		lang: lang, replay: stdio.RingOptions{MaxLines: user.Replay.RingLines, MaxBytes: user.Replay.RingBytes},
		preset: sel.Preset, from: from}, nil
}

// permissionLayer is the permission part of a config file.
func permissionLayer(c *config.Config) approvals.Layer {
	return approvals.Layer{Mode: c.Permission.Mode, Allow: c.Permission.Allow, Deny: c.Permission.Deny, Ask: c.Permission.Ask,
		AutoSafe: c.Permission.AutoSafeCommands, DisableBuiltinDeny: c.Permission.DisableBuiltinDeny, PlanBash: c.Plan.Bash,
		ClassifyReads: c.Permission.ClassifyReadOnlyTools}
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
func buildRegistry(getenv func(string) string, user *config.Config, flags *Flags, ref llm.ModelRef, profile *Profile, log *zap.Logger) (*llm.Registry, error) {
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
	keyEnv := getenv
	if profile != nil {
		useEnv := profile.AuthEnv == nil || *profile.AuthEnv
		if profile.AuthFile != "" {
			keys, warnings, err := authKeys(profile.AuthFile, getenv, useEnv)
			if err != nil {
				return nil, err
			}
			for _, w := range warnings {
				log.Warn(w)
			}
			applyAuthKeys(cfg, keys)
		}
		if !useEnv {
			keyEnv = withoutKeyEnv(getenv, cfg)
		}
	}
	ms := user.ModelStream
	if ms.IdleTimeoutMs < 0 || ms.MaxLineBytes < 0 || ms.MaxReplyBytes < 0 {
		return nil, fmt.Errorf("%w: modelStream: the bounds must not be negative", config.ErrInvalid)
	}
	entries, err := openai.BuildEntriesWith(cfg, cliKeys, keyEnv, nil, openai.Limits{
		IdleTimeout: time.Duration(ms.IdleTimeoutMs) * time.Millisecond, MaxLineBytes: ms.MaxLineBytes, MaxReplyBytes: ms.MaxReplyBytes})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}
	reg := llm.NewRegistry(append([]*llm.ProviderEntry{fp.Entry()}, entries...)...)
	for i, o := range user.ModelOverrides {
		m, _, err := reg.Find(o.Provider, o.ID)
		if err != nil {
			return nil, fmt.Errorf("%w: modelOverrides[%d]: %v", config.ErrInvalid, i, err)
		}
		if pc := o.PromptCache; pc != nil {
			m.PromptCache = &llm.PromptCache{Short: pc.Short, Long: pc.Long, MinTokens: pc.MinTokens}
		}
	}
	return reg, nil
}

// cacheSettings applies the cache and ui config and the AMA_CACHE_WARMING
// / AMA_CACHE_RETENTION overrides (an invalid value is an error in config,
// a warning in the environment).
func cacheSettings(set *session.Settings, user *config.Config, getenv func(string) string, log *zap.Logger) error {
	set.NoAnimation = user.UI.Animation != nil && !*user.UI.Animation
	set.CacheMinSavingsUsd = user.Cache.MinSavingsUsd
	pick := func(key, val, env string, valid ...string) (string, error) {
		ok := func(v string) bool { return v == "" || slices.Contains(valid, v) }
		if !ok(val) {
			return "", fmt.Errorf("%w: cache.%s must be one of %v, not %q", config.ErrInvalid, key, valid, val)
		}
		if e := strings.TrimSpace(getenv(env)); e != "" {
			if ok(e) {
				return e, nil
			}
			log.Warn("ignoring invalid environment value", zap.String("variable", env), zap.String("value", e))
		}
		return val, nil
	}
	var err error
	if set.CacheWarming, err = pick("warming", user.Cache.Warming, "AMA_CACHE_WARMING", "off", "streaming", "idle"); err != nil {
		return err
	}
	set.CacheRetention, err = pick("retention", user.Cache.Retention, "AMA_CACHE_RETENTION", "none", "short", "long")
	return err
}

// toolEnvPolicy keeps the model's credentials out of the commands tools
// run: every provider's key variable (presets and apiKeyEnv of the user's
// providers) is hidden unless tools.env.passthrough names it.
func toolEnvPolicy(user *config.Config) tools.EnvPolicy {
	var hide []string
	for _, p := range openai.Presets() {
		if p.KeyEnv != "" {
			hide = append(hide, p.KeyEnv)
		}
	}
	for _, raw := range user.Providers {
		var pc struct {
			APIKeyEnv string `json:"apiKeyEnv"`
		}
		if json.Unmarshal(raw, &pc) == nil && pc.APIKeyEnv != "" {
			hide = append(hide, pc.APIKeyEnv)
		}
	}
	return tools.EnvPolicy{Hide: hide, Pass: user.Tools.Env.Passthrough}
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
		In: env.Stdin, Out: env.Stdout, Log: w.log, Version: Version, Sessions: w.mgr, StartReason: w.reason,
		Models: w.deps.Models, Broker: w.broker, Lang: w.lang, Replay: w.replay,
	}
	if env.Hooks != nil {
		opts.Writer = env.Hooks.Writer
		opts.ShutdownGrace = env.Hooks.ShutdownGrace
	}
	if err := startup(w); errors.Is(err, session.ErrStartBlocked) {
		fmt.Fprintf(env.Stderr, "ama-rpc: %v\n", err)
		bounded(ctx, w.mgr.Exit, w.log) // the normal exit order, then exit 6
		return ExitHook
	} else if err != nil {
		return startupFailed(ctx, env, w, err)
	}
	var srv *rpc.Server
	// The host's deferred replies are the server's owed replies from now on.
	opts.Serving = func() { w.early.open(srv.Send); w.host.SetOwed(srv.Owed()) }
	opts.Settle = func() { hostSettle(w) }
	srv = rpc.NewServer(opts)
	if env.Hooks != nil && env.Hooks.OnServer != nil {
		env.Hooks.OnServer(srv)
	}
	memlimit.ReleaseStartup()
	err := srv.Run(ctx)
	bounded(ctx, w.mgr.Exit, w.log) // the server's shutdown ran it already, unless a signal cut it short
	return runExit(ctx, err, env, w.log)
}

// bounded runs end (session.Manager.Exit or Close: what is still open
// ends); after a signal it waits at most a second, so that nothing stuck
// (a host that stopped reading) outlives the shutdown grace the README
// promises.
func bounded(ctx context.Context, end func(), log *zap.Logger) {
	if ctx.Err() == nil {
		end()
		return
	}
	done := make(chan struct{})
	go func() {
		end()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		log.Warn("the session did not close in time after the signal")
	}
}

// runExit maps the end of a serving run to the exit code.
func runExit(ctx context.Context, err error, env Env, log *zap.Logger) int {
	// A signal wins over whatever shutdown path it raced with (stdin EOF,
	// a closed stdout, a runtime error): the host asked for 128+n.
	if code, ok := SignalExit(ctx); ok {
		return code
	}
	if errors.Is(err, stdio.ErrInterrupted) {
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

// safetyFiles are this process's safety files (approvals.Safety): no tool
// may write them, in any mode. The project's .ama and ama's default
// directories under HOME are in approvals itself.
func safetyFiles(paths config.Paths, sessionsDir, profilePath, cwd string, profile *Profile) approvals.Safety {
	var s approvals.Safety
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	for _, d := range []string{paths.Config, paths.Data, sessionsDir} {
		if d = abs(d); d != "" {
			s.Dirs = append(s.Dirs, d)
		}
	}
	if d := abs(paths.Config); d != "" {
		s.Keys = append(s.Keys, d)
	}
	if d := abs(paths.Data); d != "" {
		s.Keys = append(s.Keys, filepath.Join(d, "auth.json"))
	}
	if profile != nil {
		for _, f := range []string{profilePath, profile.HooksFile, profile.Config} {
			if f = abs(f); f != "" {
				s.Files = append(s.Files, f)
				s.Keys = append(s.Keys, f)
			}
		}
	}
	return s
}

// millisSetting is a duration in milliseconds: def, else the config's
// value when positive, else the environment variable env (a positive
// integer; anything else is a config error).
func millisSetting(def time.Duration, cfg int64, getenv func(string) string, env string) (time.Duration, error) {
	d := def
	if cfg > 0 {
		d = time.Duration(cfg) * time.Millisecond
	}
	if v := getenv(env); v != "" {
		var ms int64
		if _, err := fmt.Sscan(v, &ms); err != nil || ms <= 0 {
			return 0, fmt.Errorf("%w: %s must be a positive integer", config.ErrInvalid, env)
		}
		d = time.Duration(ms) * time.Millisecond
	}
	return d, nil
}

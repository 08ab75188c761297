package sandbox

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/sandbox/launcher"
)

// LauncherArg is the hidden subcommand that applies a policy and execs the
// command: `<self> __sandbox-exec <path> -- <argv…>` (package launcher).
const LauncherArg = launcher.Arg

// minABI is the oldest Landlock ABI used: ABI 3 is the first that restricts
// truncate(2); older kernels would let a sandboxed command empty any file.
const minABI = 3

// Status is what the machine offers.
type Status struct {
	// Available is true when bash can run in a write-restricting sandbox.
	Available bool `json:"available"`
	// Mechanism is "landlock" or "none".
	Mechanism string `json:"mechanism"`
	// ABI is the kernel's Landlock ABI version (0: none).
	ABI int `json:"abi"`
	// Namespaces is true when commands run in a jail: private user, mount,
	// PID (and, with the network denied, network) namespaces, a read-only
	// view of the system with the granted trees writable (see jailPlan).
	Namespaces bool `json:"namespaces"`
	// NetworkIsolation is true when the network can be denied (Landlock
	// ABI 4 TCP rules or an empty network namespace).
	NetworkIsolation bool `json:"networkIsolation"`
	// Seccomp is true when the seccomp filter (no TIOCSTI/TIOCLINUX) is
	// installed.
	Seccomp bool `json:"seccomp"`
	// Detail explains a missing or reduced sandbox.
	Detail string `json:"detail,omitempty"`
}

// Runtime is the process-wide sandbox: settings plus what the kernel
// offers. It is immutable.
type Runtime struct {
	settings Settings
	status   Status
	self     string
	small    string // the small launcher next to self, if any
	base     Dirs   // Home, Temp, Cache, Config, Data

	zmu     sync.Mutex // guards zygotes and zclock
	zygotes []*zygote  // pre-started launchers (linux; see Command.Start)
	zclock  uint64

	verifyOnce   sync.Once
	mu           sync.Mutex   // guards verification
	verification Verification // the canary self-test (Verify)
}

// New detects the sandbox for the given settings. self is the executable
// that handles LauncherArg (os.Executable() in production). The probe (a
// sandboxed start of `true`) only runs when the settings want bash
// sandboxed. base holds the process-wide directories (Home, Temp, Config,
// Data); For adds the project and output directories of a session.
func New(s Settings, self string, base Dirs) *Runtime {
	r := &Runtime{settings: s, self: self, small: findLauncher(self), base: base}
	r.status = detect(r, s.Wanted(), true)
	return r
}

// Settings returns the resolved settings.
func (r *Runtime) Settings() Settings { return r.settings }

// Status returns what the machine offers.
func (r *Runtime) Status() Status { return r.status }

// Active reports whether bash runs sandboxed: the settings want it, the
// kernel can do it, and the canary self-test (once finished) did not see a
// file probe get through; then bash runs as without a sandbox (asking).
func (r *Runtime) Active() bool {
	return r != nil && r.settings.Wanted() && r.status.Available && !r.Verification().failed(fileProbes)
}

// NetworkDenied reports whether sandboxed commands have no network: asked
// for, enforceable, and not contradicted by the self-test.
func (r *Runtime) NetworkDenied() bool {
	return r.Active() && r.settings.NetworkDenied && r.status.NetworkIsolation && !r.Verification().failed(networkProbes)
}

// Describe is a one-line English summary for logs, explain and the
// classifier's sandbox note.
func (r *Runtime) Describe() string {
	if !r.Active() {
		return ""
	}
	s := "writes limited to the project and temp directories, credential files unreadable; "
	if r.NetworkDenied() {
		return s + "network blocked"
	}
	return s + "network allowed"
}

// Command is the sandbox of one bash call: a Runtime with a bound policy.
type Command struct {
	rt     *Runtime
	policy Policy
}

// For returns the sandbox of bash calls in a session's project and output
// directories; readOnly is plan mode. It returns nil when the sandbox is
// not active.
func (r *Runtime) For(project, output string, readOnly bool) *Command {
	if !r.Active() {
		return nil
	}
	d := r.base
	d.Project, d.Output = project, output
	if d.Temp != "" {
		d.Tmp = sessionTmp(d.Temp, project, output)
	}
	p := ForBash(r.settings, d, readOnly)
	p.DenyNetwork = r.NetworkDenied()
	p.Namespaces = r.status.Namespaces
	return &Command{rt: r, policy: p}
}

// sessionTmp is the private temp dir of a session in temp.
func sessionTmp(temp, project, output string) string {
	return filepath.Join(temp, "ama-sandbox-"+strconv.Itoa(os.Getuid()), sessionKey(project, output))
}

// sessionKey names a session's private temp dir: its output directory's
// name (the session id), else a hash of the project directory.
func sessionKey(project, output string) string {
	if b := filepath.Base(output); output != "" && b != "/" && b != "." {
		return b
	}
	h := fnv.New64a()
	h.Write([]byte(project))
	return "p" + strconv.FormatUint(h.Sum64(), 36)
}

// Policy returns the bound policy.
func (c *Command) Policy() Policy { return c.policy }

// DenialHint returns the sandbox hint when output (of a failed command)
// looks like a sandbox denial, else "".
func (c *Command) DenialHint(output string) string {
	if c == nil || !LooksLikeDenial(output, c.policy.DenyNetwork) {
		return ""
	}
	return Hint(c.policy.DenyNetwork)
}

// Wrap rewrites cmd (not started yet) to start through the launcher: the
// Landlock ruleset is built here and inherited as a descriptor, and the
// launcher execs the command in place, so its pid and process group are
// the command's. release must be called once cmd.Start returned (it closes
// this process's copy of the ruleset). An error means the command must not
// run.
func (c *Command) Wrap(cmd *exec.Cmd) (release func(), err error) {
	if c == nil || c.rt == nil {
		return nil, errors.New("sandbox: not active")
	}
	return c.rt.wrap(cmd, c.policy, false)
}

// wrap rewrites cmd to start through the launcher with policy p. With
// socketsFound, p.Sockets are final (the pre-started launcher's, found by
// zygoteFor from its own and the command's environment and part of its
// reuse key); else they are found here from cmd's environment.
func (r *Runtime) wrap(cmd *exec.Cmd, p Policy, socketsFound bool) (func(), error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if r.self == "" {
		return nil, errors.New("sandbox: the launcher executable is unknown")
	}
	p.Namespaces = r.status.Namespaces
	if err := prepareDirs(p); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	ruleset, flags, err := newRuleset(p)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	env := cmd.Env
	if env == nil {
		env = childenv.Environ(childenv.Policy{})
	}
	set := map[string]string{
		launcher.EnvFD:    strconv.Itoa(3 + len(cmd.ExtraFiles)),
		launcher.EnvFlags: strconv.FormatUint(uint64(flags), 10),
	}
	if p.Tmp != "" {
		set["TMPDIR"] = p.Tmp
		if p.Namespaces {
			set["TMPDIR"] = "/tmp"
		}
	}
	if p.Cache != "" {
		for k, sub := range cacheEnv {
			set[k] = filepath.Join(p.Cache, sub)
		}
	}
	if p.Namespaces {
		if !socketsFound {
			p.Sockets = jailSockets(p, env)
		}
		set[launcher.EnvNamespaces] = "pid"
		set[launcher.EnvMounts] = jailPlan(p, true)
		set[launcher.EnvRules] = jailRules(p)
		if !p.ReadOnly && len(p.Sweep) > 0 {
			set[launcher.EnvSweep] = strings.Join(p.Sweep, "\n")
		}
	}
	if r.status.Seccomp {
		f, err := seccompFilter(p.DenyNetwork && !p.Namespaces)
		if err != nil {
			ruleset.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		set[launcher.EnvSeccomp] = f
	}
	cmd.Env = overlayEnv(env, set)
	cmd.ExtraFiles = append(cmd.ExtraFiles, ruleset)
	cmd.Args = append(r.launcherArgs(cmd.Path), cmd.Args...)
	cmd.Path = r.launcher()
	if err := setupProc(cmd, p); err != nil {
		ruleset.Close()
		return nil, err
	}
	return func() { ruleset.Close() }, nil
}

// cacheEnv points the build and package caches of toolchains into the
// sandbox's cache directory (Policy.Cache): they work without HOME's
// caches being writable, and a poisoned entry only ever reaches other
// sandboxed commands.
var cacheEnv = map[string]string{
	"XDG_CACHE_HOME":    "xdg",
	"GOCACHE":           "go-build",
	"npm_config_cache":  "npm",
	"PIP_CACHE_DIR":     "pip",
	"CCACHE_DIR":        "ccache",
	"YARN_CACHE_FOLDER": "yarn",
}

// LauncherName is the small launcher binary (cmd/ama-rpc-sandbox) looked
// for next to the executable.
const LauncherName = "ama-rpc-sandbox"

// findLauncher returns the small launcher next to self, or "" (then self
// is re-executed as `self __sandbox-exec`).
func findLauncher(self string) string {
	if self == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(self), LauncherName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// launcher is the executable that applies the sandbox, launcherArgs its
// arguments before the command's argv.
func (r *Runtime) launcher() string {
	if r.small != "" {
		return r.small
	}
	return r.self
}

func (r *Runtime) launcherArgs(path string) []string {
	if r.small != "" {
		return []string{r.small, path, "--"}
	}
	return []string{r.self, LauncherArg, path, "--"}
}

// prepareDirs creates the session's temp dir and the cache dir (mode 0700;
// the temp dir's parent must be ours and not a link, since it lies in a
// shared directory).
func prepareDirs(p Policy) error {
	if p.Tmp != "" {
		parent := filepath.Dir(p.Tmp)
		if err := os.Mkdir(parent, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := ownDir(parent); err != nil {
			return err
		}
		if err := os.Mkdir(p.Tmp, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := ownDir(p.Tmp); err != nil {
			return err
		}
	}
	if p.Cache != "" {
		if err := os.MkdirAll(p.Cache, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// Report is the sandbox as hosts see it (get_state, ACP initialize).
type Report struct {
	// Active: bash runs sandboxed.
	Active    bool   `json:"active"`
	Mechanism string `json:"mechanism"`
	ABI       int    `json:"abi,omitempty"`
	// Namespaces: read-only bind mounts and a private network namespace
	// back the Landlock rules.
	Namespaces bool `json:"namespaces"`
	// Network is "deny" or "allow" as enforced (a deny the kernel cannot
	// enforce is reported as allow).
	Network string `json:"network"`
	// Seccomp: TIOCSTI and TIOCLINUX are refused.
	Seccomp bool `json:"seccomp"`
	// Verified is the canary self-test's verdict (absent while it runs);
	// Failed names the probes that got through.
	Verified *bool    `json:"verified,omitempty"`
	Failed   []string `json:"failed,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

// Report returns the host-facing report, or nil when bash sandboxing is
// not configured (sandbox.bash is not "auto" or the sandbox is off).
func (r *Runtime) Report() *Report {
	if r == nil || !r.settings.Wanted() {
		return nil
	}
	rep := &Report{Active: r.Active(), Mechanism: r.status.Mechanism, ABI: r.status.ABI,
		Namespaces: r.status.Namespaces, Network: "allow", Seccomp: r.status.Seccomp, Detail: r.status.Detail}
	if v := r.Verification(); v.Done {
		ok := v.Verified
		rep.Verified, rep.Failed = &ok, v.Failed
		if v.Detail != "" {
			rep.Detail = strings.TrimSpace(rep.Detail + " self-test: " + v.Detail)
		}
	}
	if r.NetworkDenied() {
		rep.Network = "deny"
	}
	if !rep.Active {
		rep.Detail = "sandbox unavailable, bash commands ask as without it: " + rep.Detail
	}
	return rep
}

// overlayEnv is env without the launcher's variables and those set
// names, then set's (the one way a sandboxed command's environment is
// built, by the per-call and the pre-started launcher).
func overlayEnv(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; !ours && !slices.Contains(launcher.Envs, k) {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

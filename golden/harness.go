package golden

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/internal/transcript"
	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/rpc/schema/schemacheck"
)

// WaitTimeout bounds every wait of a run.
var WaitTimeout = 20 * time.Second

// Config describes one in-process server run.
type Config struct {
	// Args are the server flags (e.g. --model fake/echo).
	Args []string
	// Env adds environment variables (HOME, XDG_* and AMA_FAKE_SCRIPT are
	// set by the harness).
	Env map[string]string
	// Script is the fake provider script (JSON), written to <root>/script.json.
	Script []byte
	// Files are created under the work directory before the start.
	Files map[string]string
	// Dirs are created under the root (beside home/ and work/: "outside").
	Dirs []string
	// Links are symlinks created under the work directory: name -> target;
	// "<root>" in a target stands for the run's root.
	Links map[string]string
	// Fifos are named pipes created under the work directory.
	Fifos []string
	// UserConfig is written to the user config file (~/.config/ama/config.json).
	UserConfig []byte
	// Writer bounds the output queue (zero: defaults).
	Writer stdio.WriterOptions
	// ShutdownGrace bounds the shutdown after Interrupt (zero: default).
	ShutdownGrace time.Duration
	// WriteFault injects session-file write errors.
	WriteFault func() error
	// SessionFile is written to <root>/session.jsonl before the start, with
	// "<work>" replaced by the work directory; "<session>" in Args names it.
	SessionFile []byte
	// TelemetryStep is how far the throughput clock moves per reading
	// (zero: frozen, so no telemetry_tick).
	TelemetryStep time.Duration
	// AfterFunc arms cache-warming timers (nil: real timers).
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// BootRetry is the least time between two ACP start-up attempts
	// without a model (zero: the real second).
	BootRetry time.Duration
	// NoSchemaCheck turns off the validation of the run's output lines
	// against the protocol's schema (checkLines) and of its session files
	// (checkSessions), for a run whose output is broken on purpose.
	NoSchemaCheck bool
}

// Run is a server running in-process with piped stdio, as a host sees it:
// a temporary root holds home/ (HOME, config and data) and work/ (cwd).
type Run struct {
	t    testing.TB
	Root string
	Home string
	Work string

	stdin  *io.PipeWriter
	stdout *io.PipeReader
	cancel context.CancelCauseFunc
	exit   chan int
	server atomic.Pointer[rpc.Server]
	out    *transcript.Output

	mu     sync.Mutex // guards stderr
	stderr bytes.Buffer
}

// fixedRoot is a fresh directory whose path has the same length in every
// run (transcript.TempRoot), removed with the test.
func fixedRoot(t testing.TB) string {
	dir, err := transcript.TempRoot("ama-golden")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { transcript.RemoveAll(dir) })
	return dir
}

// Start launches the server. The run is cleaned up with the test.
func Start(t testing.TB, cfg Config) *Run {
	t.Helper()
	root := fixedRoot(t)
	r := &Run{t: t, Root: root, Home: filepath.Join(root, "home"), Work: filepath.Join(root, "work"), exit: make(chan int, 1), out: transcript.NewOutput()}
	for _, d := range []string{r.Home, r.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range cfg.Files {
		p := filepath.Join(r.Work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range cfg.Dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range cfg.Links {
		if err := os.Symlink(strings.ReplaceAll(target, "<root>", root), filepath.Join(r.Work, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range cfg.Fifos {
		if err := mkfifo(filepath.Join(r.Work, name)); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	if cfg.SessionFile != nil {
		p := filepath.Join(root, "session.jsonl")
		if err := os.WriteFile(p, bytes.ReplaceAll(cfg.SessionFile, []byte("<work>"), []byte(r.Work)), 0o644); err != nil {
			t.Fatal(err)
		}
		args := make([]string, len(cfg.Args))
		for i, a := range cfg.Args {
			args[i] = strings.ReplaceAll(a, "<session>", p)
		}
		cfg.Args = args
	}
	if slices.ContainsFunc(cfg.Args, func(a string) bool { return strings.Contains(a, "<work>") }) {
		args := make([]string, len(cfg.Args)) // "<work>" in Args: the work directory
		for i, a := range cfg.Args {
			args[i] = strings.ReplaceAll(a, "<work>", r.Work)
		}
		cfg.Args = args
	}
	if cfg.UserConfig != nil {
		p := filepath.Join(r.Home, ".config", "ama", "config.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, cfg.UserConfig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"HOME":            r.Home,
		"XDG_CONFIG_HOME": filepath.Join(r.Home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(r.Home, ".local", "share"),
		"PATH":            os.Getenv("PATH"),
		// As in ama's reference runs: no external agent probe, so
		// get_agents and the task description do not depend on the
		// machine's PATH (a case may set it to "0").
		"AMA_NO_AGENT_PROBE": "1",
		// Nor the sandbox's background self-test, whose verdict would
		// appear in get_state at a time that depends on the machine.
		"AMA_NO_SANDBOX_SELFTEST": "1",
		// The goldens record English: the interface language is pinned so
		// the machine's locale (LANG=zh_CN.UTF-8) cannot change them; a
		// case that means another language sets AMA_LANG in its Env.
		"AMA_LANG": "en",
	}
	if cfg.Script != nil {
		p := filepath.Join(root, "script.json")
		if err := os.WriteFile(p, cfg.Script, 0o644); err != nil {
			t.Fatal(err)
		}
		env["AMA_FAKE_SCRIPT"] = p
		// One line per model request: @waitCalls counts them.
		env["AMA_FAKE_RECORD"] = filepath.Join(root, "fake-record.jsonl")
	}
	for k, v := range cfg.Env {
		env[k] = v
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.stdin, r.stdout = inW, outR
	ctx, cancel := context.WithCancelCause(context.Background())
	r.cancel = cancel
	hooks := &app.Hooks{Now: clock(), NewUUID: seqUUID(), NewEntryID: seqID(), Writer: cfg.Writer, ShutdownGrace: cfg.ShutdownGrace,
		WriteFault: cfg.WriteFault, Clock: stepClock(cfg.TelemetryStep), AfterFunc: cfg.AfterFunc, BootRetry: cfg.BootRetry,
		OnServer: func(s *rpc.Server) { r.server.Store(s) }}
	if !cfg.NoSchemaCheck {
		// Registered before the cleanup that waits for the exit: it runs
		// after it, on every line the run wrote.
		t.Cleanup(func() { r.checkLines(cfg.Args); r.checkSessions() })
	}
	go r.out.Collect(outR)
	go func() {
		code := app.Main(ctx, app.Env{
			Args: cfg.Args, Stdin: inR, Stdout: outW, Stderr: &lockedWriter{mu: &r.mu, w: &r.stderr},
			Getenv: func(k string) string { return env[k] }, Cwd: r.Work, Hooks: hooks, Environ: environ(env),
		})
		_ = outW.Close()
		r.exit <- code
	}()
	t.Cleanup(func() {
		_ = r.stdin.Close()
		r.Resume()
		select {
		case <-r.exit:
		case <-time.After(WaitTimeout):
			cancel(fmt.Errorf("test cleanup"))
		}
	})
	return r
}

// ScrubLocale removes the locale variables (LANG, LANGUAGE, LC_*) from
// the test process's environment; the golden package's TestMain calls it
// before any test. A run's own language comes from its environment
// (AMA_LANG=en above), but the commands its bash tool runs inherit the
// process's: on a machine with LANG=zh_CN.UTF-8 (or a locale that is not
// installed, whose setlocale warning bash prints) their output would
// change the goldens.
func ScrubLocale() {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LANG" || k == "LANGUAGE" || strings.HasPrefix(k, "LC_") {
			_ = os.Unsetenv(k)
		}
	}
}

// environ is the process environment a host adapter sees: the run's.
func environ(env map[string]string) func() []string {
	return func() []string {
		out := make([]string, 0, len(env))
		for k, v := range env {
			out = append(out, k+"="+v)
		}
		sort.Strings(out)
		return out
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// clock returns a deterministic clock advancing 1 ms per reading.
func clock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

// stepClock is the throughput clock: it starts at the fixed base time and
// moves by step per reading.
func stepClock(step time.Duration) func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)-1) * step) }
}

func seqUUID() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", n.Add(1)) }
}

func seqID() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("%08x", n.Add(1)) }
}

// Send writes one command line (a newline is appended).
func (r *Run) Send(line string) { r.SendRaw([]byte(line + "\n")) }

// SendRaw writes bytes to stdin as they are.
func (r *Run) SendRaw(b []byte) {
	r.t.Helper()
	if _, err := r.stdin.Write(b); err != nil {
		r.t.Fatalf("write stdin: %v", err)
	}
}

// CloseStdin ends the input.
func (r *Run) CloseStdin() { _ = r.stdin.Close() }

// Interrupt cancels the server as a signal would.
func (r *Run) Interrupt(sig app.SignalError) { r.cancel(sig) }

// Wait waits for the exit code.
func (r *Run) Wait() int {
	r.t.Helper()
	select {
	case code := <-r.exit:
		r.exit <- code
		// stdout is closed once the server has returned: let the collector
		// take in the last lines (unless the test stalled it) so Lines
		// after Wait holds everything the server wrote.
		r.out.Drained()
		return code
	case <-time.After(WaitTimeout):
		r.t.Fatalf("server did not exit; stderr:\n%s", r.Stderr())
		return -1
	}
}

// Stderr returns what the server logged.
func (r *Run) Stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// Lines returns a copy of the output lines so far.
func (r *Run) Lines() [][]byte { return r.out.Lines() }

// WaitFor blocks until pred has matched n lines in total and returns the
// index of the n-th match.
func (r *Run) WaitFor(desc string, n int, pred func(*Object) bool) int {
	r.t.Helper()
	i, err := r.out.WaitFor(desc, n, WaitTimeout, pred)
	if err != nil {
		r.t.Fatalf("%v; output so far:\n%s\nstderr:\n%s", err, bytes.Join(r.Lines(), []byte("\n")), r.Stderr())
	}
	return i
}

// Stall stops reading stdout (the host is busy); Resume continues.
func (r *Run) Stall() { r.out.Stall() }

// Resume continues reading stdout after Stall.
func (r *Run) Resume() { r.out.Resume() }

// Server returns the running server once it has started (nil before).
func (r *Run) Server() *rpc.Server { return r.server.Load() }

// Poll waits until cond holds, checking every millisecond (for
// conditions that produce no output line, such as writer statistics).
func (r *Run) Poll(desc string, cond func() bool) {
	r.t.Helper()
	if err := transcript.Poll(desc, WaitTimeout, cond); err != nil {
		r.t.Fatal(err)
	}
}

// Line waits for output line i (0-based) and returns it; false when the
// output ended before it or WaitTimeout passed.
func (r *Run) Line(i int) ([]byte, bool) { return r.out.Line(i, WaitTimeout) }

// lineKind names the protocol of a run's stdout from its arguments:
// "acp", "print" (-p with --output-format json or stream-json), "" (-p
// text: not JSON) or "rpc".
func lineKind(args []string) string {
	kind := "rpc"
	for i, a := range args {
		switch {
		case a == "--mode=acp", a == "--mode" && i+1 < len(args) && args[i+1] == "acp":
			return "acp"
		case a == "-p", a == "--print":
			kind = "print-text"
		}
	}
	if kind == "print-text" {
		for i, a := range args {
			if (a == "--output-format" && i+1 < len(args) && args[i+1] != "text") || a == "--output-format=json" || a == "--output-format=stream-json" {
				return "print"
			}
		}
		return ""
	}
	return kind
}

// checkLines validates every line the run wrote against the protocol's
// schema (package schemacheck): the native protocol's lines, ama-rpc's
// ACP extensions, print mode's JSON lines. One error per distinct
// failure, with the count of lines.
func (r *Run) checkLines(args []string) {
	check := map[string]func([]byte) error{"rpc": schemacheck.RPCLine, "acp": schemacheck.ACPLine, "print": schemacheck.PrintLine}[lineKind(args)]
	if check == nil {
		return
	}
	type failure struct {
		first string
		n     int
	}
	var order []string
	seen := map[string]*failure{}
	for i, l := range r.Lines() {
		err := check(l) // a line that passed already passes at once (schemacheck's valid)
		if err == nil {
			continue
		}
		why := err.Error()
		if f := seen[why]; f != nil {
			f.n++
			continue
		}
		order = append(order, why)
		seen[why] = &failure{fmt.Sprintf("stdout line %d: %s\n%s", i+1, trim(string(l)), why), 1}
	}
	for _, why := range order {
		r.t.Errorf("schema check (%d lines), first %s", seen[why].n, seen[why].first)
	}
}

// checkSessions validates every session file the run left under its root
// (the home's sessions, a prepared --session file, sub-agents' files)
// against the schema's session-file definitions (schemacheck.SessionFile).
func (r *Run) checkSessions() {
	_ = filepath.WalkDir(r.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || !schemacheck.IsSessionFile(b) {
			return nil
		}
		for _, err := range schemacheck.SessionFile(b, 3) {
			r.t.Errorf("session file %s: %v", strings.TrimPrefix(p, r.Root), err)
		}
		return nil
	})
}

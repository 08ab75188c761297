package replaykit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/internal/transcript"
)

// Hooks make a run deterministic: the clock advances 1 ms per reading
// from a fixed time, ids count up (the golden tests' hooks).
type Hooks struct {
	Now        func() time.Time
	NewUUID    func() string
	NewEntryID func() string
	// Clock is the throughput clock: from the fixed time, TelemetryStep
	// per reading (zero: frozen, no telemetry_tick).
	Clock func() time.Time
}

// Start is what the server is started with.
type Start struct {
	Args    []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Getenv  func(string) string
	Environ func() []string
	Cwd     string
	Hooks   Hooks
	// MaxQueuedItems and MaxQueuedBytes bound the server's output queue
	// (zero: its defaults).
	MaxQueuedItems, MaxQueuedBytes int
	// Merged is called once the server has its writer, with a reader of
	// the writer's count of merged deltas (@waitMerged); false while the
	// writer is not there yet.
	Merged func(count func() (int64, bool))
}

// Server runs the server to its end and returns its exit code (app.Main
// adapted by app's `replay` subcommand).
type Server func(ctx context.Context, s Start) int

// Options describe one replay.
type Options struct {
	// Args are the server flags (default: --mode <Mode> --model fake/echo).
	Args []string
	// Mode is rpc (default) or acp; used when Args is empty.
	Mode string
	// Script is the fake model's script (JSON; see README "Fake provider
	// scripts"); nil: every reply echoes the prompt.
	Script []byte
	// Env adds environment variables.
	Env map[string]string
	// Files are created first: names relative to the work directory,
	// which may reach the home ("../home/.config/ama/…") but not leave the
	// run's temporary root.
	Files map[string]string
	// Dirs are created under the run's root (beside home/ and work/),
	// Links are symbolic links in the work directory (name -> target;
	// "<root>" in a target stands for the run's root), Fifos named pipes
	// in the work directory: the file system a case needs.
	Dirs  []string
	Links map[string]string
	Fifos []string
	// SessionFile is written to <root>/session.jsonl first, "<work>" in it
	// replaced by the work directory; "<session>" in Args names it.
	SessionFile []byte
	// UserConfig is the user config file's content (nil: none).
	UserConfig []byte
	// MaxQueuedItems and MaxQueuedBytes bound the output queue (a host
	// that reads slowly: @stall).
	MaxQueuedItems, MaxQueuedBytes int
	// TelemetryStep moves the throughput clock per reading (zero: frozen,
	// so no telemetry_tick).
	TelemetryStep time.Duration
	// Absent are paths relative to the run's root that must not exist
	// after the run; Expect maps such paths to the content they must have:
	// the side effects, checked besides the transcript (Result.Effects).
	Absent []string
	Expect map[string]string
	// Keep selects the transcript's lines (zero: all).
	Keep transcript.Keep
	// Style and Zero configure the normaliser (default style A).
	Style string
	Zero  []string
	// Timeout bounds each wait and the exit (default 20 s).
	Timeout time.Duration
	// Sessions, when set, is called with every session file the run
	// left (under the run's home) before the root is removed.
	Sessions func(path string, content []byte)
}

// Result is a replay's outcome.
type Result struct {
	// Transcript is the normalised, selected output (one line each).
	Transcript []byte
	// Exit is the server's exit code.
	Exit int
	// Stderr is what the server logged.
	Stderr string
	// Effects are the side effects that differ from Options.Absent and
	// Expect, one sentence each.
	Effects []string
}

// Step is one line of the input (transcript.Step: the golden tests'
// step interpreter).
type Step = transcript.Step

// ParseSteps reads input lines; blank lines and lines starting with #
// are skipped.
func ParseSteps(r io.Reader) ([]Step, error) { return transcript.ParseSteps(r) }

// run is one server with piped stdio.
type run struct {
	root, home, work string
	stdin            *io.PipeWriter
	cancel           context.CancelCauseFunc
	exit             chan int
	out              *transcript.Output
	merged           atomic.Pointer[func() (int64, bool)]

	mu     sync.Mutex // guards stderr
	stderr bytes.Buffer
}

// Replay runs the server with opts and plays steps, then closes stdin
// (unless a @close did) and waits for the exit.
func Replay(ctx context.Context, srv Server, opts Options, steps []Step) (Result, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	root, err := transcript.TempRoot("ama-replay")
	if err != nil {
		return Result{}, fmt.Errorf("replay: %w", err)
	}
	defer transcript.RemoveAll(root)
	r := &run{root: root, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"), exit: make(chan int, 1), out: transcript.NewOutput()}
	if err := r.prepare(&opts); err != nil {
		return Result{}, err
	}
	env := map[string]string{
		"HOME": r.home, "XDG_CONFIG_HOME": filepath.Join(r.home, ".config"), "XDG_DATA_HOME": filepath.Join(r.home, ".local", "share"),
		"PATH": os.Getenv("PATH"),
		// No probe of external agents and no sandbox self-test: their
		// results depend on the machine.
		"AMA_NO_AGENT_PROBE": "1", "AMA_NO_SANDBOX_SELFTEST": "1",
	}
	if opts.Script != nil {
		if err := ownfs.WriteAtomic(root, "script.json", opts.Script); err != nil {
			return Result{}, fmt.Errorf("replay: %w", err)
		}
		env["AMA_FAKE_SCRIPT"] = filepath.Join(root, "script.json")
		env["AMA_FAKE_RECORD"] = filepath.Join(root, "fake-record.jsonl")
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	args := opts.Args
	if len(args) == 0 {
		mode := opts.Mode
		if mode == "" {
			mode = "rpc"
		}
		args = []string{"--mode", mode, "--model", "fake/echo"}
	}
	if opts.SessionFile != nil {
		args = slices.Clone(args)
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "<session>", filepath.Join(root, "session.jsonl"))
		}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.stdin = inW
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.cancel = cancel
	go r.out.Collect(outR)
	go func() {
		code := srv(ctx, Start{Args: args, Stdin: inR, Stdout: outW, Stderr: &lockedWriter{r}, Cwd: r.work,
			Getenv: func(k string) string { return env[k] }, Environ: environ(env), Hooks: deterministic(opts.TelemetryStep),
			MaxQueuedItems: opts.MaxQueuedItems, MaxQueuedBytes: opts.MaxQueuedBytes,
			Merged: func(count func() (int64, bool)) { r.merged.Store(&count) }})
		_ = outW.Close()
		_ = inR.Close()
		r.exit <- code
	}()
	closed, perr := transcript.Play(r, steps, map[string]string{"WORK": r.work, "ROOT": r.root}, opts.Timeout)
	if perr != nil {
		perr = fmt.Errorf("replay: %w", perr)
	}
	if !closed || perr != nil {
		_ = r.stdin.Close()
	}
	code, werr := r.wait(opts.Timeout)
	res := Result{Exit: code, Stderr: r.stderrText(), Effects: effects(root, opts)}
	if opts.Sessions != nil {
		sessionFiles(r.home, opts.Sessions)
	}
	if err := errors.Join(perr, werr); err != nil {
		return res, err
	}
	n := &transcript.Normalizer{Root: root, Style: opts.Style, Zero: opts.Zero}
	if n.Style == "" {
		n.Style = "A"
	}
	var buf bytes.Buffer
	for _, l := range transcript.MergeDeltas(opts.Keep.Select(r.out.Lines())) {
		if len(l) == 0 || l[0] != '{' {
			// Print mode's text output: kept as text, the root named.
			buf.Write(bytes.ReplaceAll(l, []byte(root), []byte("<root>")))
			buf.WriteByte('\n')
			continue
		}
		nl, err := n.Line(l)
		if err != nil {
			return res, fmt.Errorf("replay: output line is not JSON: %w: %s", err, l)
		}
		buf.Write(nl)
		buf.WriteByte('\n')
	}
	res.Transcript = buf.Bytes()
	return res, nil
}

func (r *run) prepare(opts *Options) error {
	for _, d := range []string{r.home, r.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	// Every name comes from the host's own test, yet none may leave the
	// run's root: all through os.Root.
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer root.Close()
	relative := func(what, rel string) error {
		if filepath.IsAbs(rel) {
			return fmt.Errorf("replay: %s %s: a relative name, not an absolute path", what, rel)
		}
		return nil
	}
	// Files, relative to the work directory ("../home/…" reaches the home).
	for rel, content := range opts.Files {
		if err := relative("file", rel); err != nil {
			return err
		}
		name := filepath.Join("work", rel)
		if dir := filepath.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("replay: file %s: %w", rel, err)
			}
		}
		if err := root.WriteFile(name, []byte(content), 0o644); err != nil {
			return fmt.Errorf("replay: file %s: %w", rel, err)
		}
	}
	for _, d := range opts.Dirs {
		if err := relative("dir", d); err != nil {
			return err
		}
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("replay: dir %s: %w", d, err)
		}
	}
	// Named pipes before the links: mkfifo takes a path, and until the
	// links are made nothing under the root is a link (files and
	// directories were made through os.Root).
	for _, name := range opts.Fifos {
		if err := relative("fifo", name); err != nil {
			return err
		}
		if strings.Contains(name, "..") {
			return fmt.Errorf("replay: fifo %s: a name inside the work directory", name)
		}
		if err := mkfifo(filepath.Join(r.work, name)); err != nil {
			return fmt.Errorf("replay: fifo %s: %w", name, err)
		}
	}
	// A link's target is what the case tests (a link out of the project):
	// it is made, never followed here.
	for name, target := range opts.Links {
		if err := relative("link", name); err != nil {
			return err
		}
		if err := root.Symlink(strings.ReplaceAll(target, "<root>", r.root), filepath.Join("work", name)); err != nil {
			return fmt.Errorf("replay: link %s: %w", name, err)
		}
	}
	if opts.SessionFile != nil {
		b := bytes.ReplaceAll(opts.SessionFile, []byte("<work>"), []byte(r.work))
		if err := root.WriteFile("session.jsonl", b, 0o644); err != nil {
			return fmt.Errorf("replay: session file: %w", err)
		}
	}
	if opts.UserConfig != nil {
		if err := ownfs.WriteAtomicIn(r.home, filepath.Join(".config", "ama", "config.json"), opts.UserConfig); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	return nil
}

// effects checks the side effects a case names (Options.Absent, Expect)
// in the run's root, through os.Root.
func effects(dir string, opts Options) []string {
	if len(opts.Absent) == 0 && len(opts.Expect) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return []string{err.Error()}
	}
	defer root.Close()
	var out []string
	for _, p := range opts.Absent {
		if _, err := root.Lstat(p); err == nil {
			out = append(out, p+" exists after the run; it must not")
		}
	}
	for _, p := range slices.Sorted(maps.Keys(opts.Expect)) {
		want := opts.Expect[p]
		if got, err := root.ReadFile(p); err != nil || string(got) != want {
			out = append(out, fmt.Sprintf("%s holds %q (%v) after the run, want %q", p, got, err, want))
		}
	}
	return out
}

// sessionFiles hands each session file under home (ama's sessions
// directory: *.jsonl) to f.
func sessionFiles(home string, f func(string, []byte)) {
	root, err := os.OpenRoot(home)
	if err != nil {
		return
	}
	defer root.Close()
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || !strings.Contains(p, "sessions/") {
			return nil
		}
		if b, err := root.ReadFile(p); err == nil {
			f(filepath.Join(home, p), b)
		}
		return nil
	})
}

func deterministic(step time.Duration) Hooks {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var now, uuid, id, clock atomic.Int64
	return Hooks{
		Now:        func() time.Time { return base.Add(time.Duration(now.Add(1)) * time.Millisecond) },
		NewUUID:    func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", uuid.Add(1)) },
		NewEntryID: func() string { return fmt.Sprintf("%08x", id.Add(1)) },
		Clock:      func() time.Time { return base.Add(time.Duration(clock.Add(1)-1) * step) },
	}
}

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

type lockedWriter struct{ r *run }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return w.r.stderr.Write(p)
}

func (r *run) stderrText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

func (r *run) wait(timeout time.Duration) (int, error) {
	select {
	case code := <-r.exit:
		r.out.Drained()
		return code, nil
	case <-time.After(timeout):
		r.out.Resume()
		r.cancel(errors.New("replay: the server did not exit"))
		return -1, fmt.Errorf("replay: the server did not exit within %v", timeout)
	}
}

// The run as transcript.Play's target.

func (r *run) Send(b []byte) error {
	if _, err := r.stdin.Write(b); err != nil {
		return fmt.Errorf("write stdin: %w", err)
	}
	return nil
}

func (r *run) CloseInput()                { _ = r.stdin.Close() }
func (r *run) Output() *transcript.Output { return r.out }
func (r *run) Signal(sig syscall.Signal)  { r.cancel(Signal{sig}) }
func (r *run) Root() string               { return r.root }
func (r *run) Work() string               { return r.work }

func (r *run) MergedDeltas() (int64, bool) {
	if f := r.merged.Load(); f != nil {
		return (*f)()
	}
	return 0, false
}

// Signal is the cancellation cause of @signal; the server adapter maps it
// to its own signal error.
type Signal struct{ Signal syscall.Signal }

func (s Signal) Error() string { return "received " + s.Signal.String() }

// Check compares a transcript with the expected one by shape
// (transcript.CompareShape with the default rules: the same lines, keys,
// JSON types and protocol values; prose such as descriptions and error
// texts may differ) and returns the differences, each naming the line.
func Check(want, got []byte) []string {
	// Deltas the writer may have joined are compared joined on both sides.
	w, g := splitLines(transcript.MergeTranscript(want)), splitLines(transcript.MergeTranscript(got))
	var out []string
	for i := 0; i < len(w) || i < len(g); i++ {
		switch {
		case i >= len(g):
			out = append(out, fmt.Sprintf("line %d: missing; want %s", i+1, short(w[i])))
			continue
		case i >= len(w):
			out = append(out, fmt.Sprintf("line %d: unexpected %s", i+1, short(g[i])))
			continue
		}
		if len(w[i]) == 0 || w[i][0] != '{' { // text (print mode): the same text
			if !bytes.Equal(w[i], g[i]) {
				out = append(out, fmt.Sprintf("line %d: want text %s, got %s", i+1, short(w[i]), short(g[i])))
			}
			continue
		}
		wv, err := transcript.Parse(w[i])
		if err != nil {
			out = append(out, fmt.Sprintf("line %d: the expected line is not JSON: %v", i+1, err))
			continue
		}
		gv, err := transcript.Parse(g[i])
		if err != nil {
			out = append(out, fmt.Sprintf("line %d: not JSON: %v", i+1, err))
			continue
		}
		for _, d := range transcript.CompareShape(wv, gv, transcript.DefaultShapeRules()) {
			out = append(out, fmt.Sprintf("line %d: %s", i+1, d))
		}
	}
	return out
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func short(b []byte) string {
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

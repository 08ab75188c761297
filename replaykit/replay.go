package replaykit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	// Clock is the throughput clock (frozen: no telemetry_tick).
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
	// UserConfig is the user config file's content (nil: none).
	UserConfig []byte
	// Keep selects the transcript's lines (zero: all).
	Keep transcript.Keep
	// Style and Zero configure the normaliser (default style A).
	Style string
	Zero  []string
	// Timeout bounds each wait and the exit (default 20 s).
	Timeout time.Duration
}

// Result is a replay's outcome.
type Result struct {
	// Transcript is the normalised, selected output (one line each).
	Transcript []byte
	// Exit is the server's exit code.
	Exit int
	// Stderr is what the server logged.
	Stderr string
}

// Step is one line of the input: a command, or a directive (a single key
// starting with "@").
type Step struct {
	raw       []byte
	directive string
	arg       json.RawMessage
}

// ParseSteps reads input lines; blank lines and lines starting with #
// are skipped.
func ParseSteps(r io.Reader) ([]Step, error) {
	var steps []Step
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		st := Step{raw: append([]byte(nil), line...)}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) == nil && len(m) == 1 {
			for k, v := range m {
				if strings.HasPrefix(k, "@") {
					st.directive, st.arg = k, v
				}
			}
		}
		steps = append(steps, st)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read commands: %w", err)
	}
	return steps, nil
}

// run is one server with piped stdio.
type run struct {
	root, home, work string
	timeout          time.Duration
	stdin            *io.PipeWriter
	cancel           context.CancelCauseFunc
	exit             chan int

	mu     sync.Mutex
	cond   *sync.Cond
	lines  [][]byte
	eof    bool
	stderr bytes.Buffer
}

// Replay runs the server with opts and plays steps, then closes stdin
// (unless a @close did) and waits for the exit.
func Replay(ctx context.Context, srv Server, opts Options, steps []Step) (Result, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	root, err := fixedRoot()
	if err != nil {
		return Result{}, err
	}
	defer removeAll(root)
	r := &run{root: root, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"), timeout: opts.Timeout, exit: make(chan int, 1)}
	r.cond = sync.NewCond(&r.mu)
	if err := r.prepare(opts); err != nil {
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
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.stdin = inW
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.cancel = cancel
	go r.collect(outR)
	go func() {
		code := srv(ctx, Start{Args: args, Stdin: inR, Stdout: outW, Stderr: &lockedWriter{r}, Cwd: r.work,
			Getenv: func(k string) string { return env[k] }, Environ: environ(env), Hooks: deterministic()})
		_ = outW.Close()
		_ = inR.Close()
		r.exit <- code
	}()
	perr := r.play(steps)
	_ = r.stdin.Close()
	code, werr := r.wait()
	res := Result{Exit: code, Stderr: r.stderrText()}
	if err := errors.Join(perr, werr); err != nil {
		return res, err
	}
	n := &transcript.Normalizer{Root: root, Style: opts.Style, Zero: opts.Zero}
	if n.Style == "" {
		n.Style = "A"
	}
	var buf bytes.Buffer
	for _, l := range transcript.MergeDeltas(opts.Keep.Select(r.snapshot())) {
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

func (r *run) prepare(opts Options) error {
	for _, d := range []string{r.home, r.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	// Files, relative to the work directory ("../home/…" reaches the
	// home): the names come from the host's own test, yet none may leave
	// the run's root.
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer root.Close()
	for rel, content := range opts.Files {
		if filepath.IsAbs(rel) {
			return fmt.Errorf("replay: file %s: a name relative to the work directory, not an absolute path", rel)
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
	if opts.UserConfig != nil {
		if err := ownfs.WriteAtomicIn(r.home, filepath.Join(".config", "ama", "config.json"), opts.UserConfig); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	return nil
}

// fixedRoot is a fresh directory whose path has the same length in every
// run (and as the golden tests' roots): the fake model estimates tokens
// from the request's characters, which include the cwd.
func fixedRoot() (string, error) {
	base := os.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	for {
		dir := filepath.Join(base, fmt.Sprintf("ama-replay-%016x", rand.Uint64()))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("replay: %w", err)
		}
	}
}

// removeAll removes dir, making read-only directories writable first.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

func deterministic() Hooks {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var now, uuid, id atomic.Int64
	return Hooks{
		Now:        func() time.Time { return base.Add(time.Duration(now.Add(1)) * time.Millisecond) },
		NewUUID:    func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", uuid.Add(1)) },
		NewEntryID: func() string { return fmt.Sprintf("%08x", id.Add(1)) },
		Clock:      func() time.Time { return base },
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

func (r *run) snapshot() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.lines...)
}

// collect reads stdout line by line.
func (r *run) collect(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		r.mu.Lock()
		r.lines = append(r.lines, append([]byte(nil), sc.Bytes()...))
		r.cond.Broadcast()
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.eof = true
	r.cond.Broadcast()
	r.mu.Unlock()
	_, _ = io.Copy(io.Discard, out) // an over-long line: keep the server unblocked
}

func (r *run) wait() (int, error) {
	select {
	case code := <-r.exit:
		r.mu.Lock()
		for !r.eof {
			r.cond.Wait()
		}
		r.mu.Unlock()
		return code, nil
	case <-time.After(r.timeout):
		r.cancel(errors.New("replay: the server did not exit"))
		return -1, fmt.Errorf("replay: the server did not exit within %v", r.timeout)
	}
}

func (r *run) send(b []byte) error {
	if _, err := r.stdin.Write(b); err != nil {
		return fmt.Errorf("replay: write stdin: %w", err)
	}
	return nil
}

// waitFor blocks until pred has matched n lines.
func (r *run) waitFor(desc string, n int, pred func(*transcript.Object) bool) error {
	deadline := time.Now().Add(r.timeout)
	timer := time.AfterFunc(r.timeout, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		count := 0
		for _, l := range r.lines {
			v, err := transcript.Parse(l)
			if err != nil {
				continue
			}
			if o, ok := v.(*transcript.Object); ok && pred(o) {
				if count++; count == n {
					return nil
				}
			}
		}
		if r.eof || !time.Now().Before(deadline) {
			return fmt.Errorf("replay: waiting for %s (#%d): not seen (output ended: %v)", desc, n, r.eof)
		}
		r.cond.Wait()
	}
}

// poll waits until cond holds (conditions without an output line).
func (r *run) poll(desc string, cond func() bool) error {
	deadline := time.Now().Add(r.timeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if !time.Now().Before(deadline) {
			return fmt.Errorf("replay: waiting for %s: timed out", desc)
		}
		<-tick.C
	}
	return nil
}

// idOf is a line's id as text: a native response's id, or a JSON-RPC
// response's (number or string).
func idOf(o *transcript.Object) (string, bool) {
	v, ok := o.Get("id")
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	}
	return "", false
}

func isResponse(o *transcript.Object) bool {
	if o.String("type") == "response" {
		return true
	}
	_, method := o.Get("method")
	_, jsonrpc := o.Get("jsonrpc")
	return jsonrpc && !method
}

// play runs the steps. $NAME in a command is replaced by a value bound
// with @bind; $WORK is the work directory (the server's cwd, which ACP's
// session/new names) and $ROOT the run's temporary root.
func (r *run) play(steps []Step) error {
	vars := map[string]string{"WORK": r.work, "ROOT": r.root}
	for _, st := range steps {
		if err := r.step(st, vars); err != nil {
			return err
		}
	}
	return nil
}

func decode(st Step, v any) error {
	if err := json.Unmarshal(st.arg, v); err != nil {
		return fmt.Errorf("replay: %s %s: %w", st.directive, st.arg, err)
	}
	return nil
}

func (r *run) step(st Step, vars map[string]string) error {
	switch st.directive {
	case "":
		line := transcript.Substitute(string(st.raw), vars)
		return r.send([]byte(line + "\n"))
	case "@raw":
		var s string
		if err := decode(st, &s); err != nil {
			return err
		}
		return r.send([]byte(s))
	case "@wait":
		var w struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Count int    `json:"count"`
			Has   string `json:"contains"`
		}
		if err := decode(st, &w); err != nil {
			return err
		}
		if w.Count == 0 {
			w.Count = 1
		}
		return r.waitFor(string(st.arg), w.Count, func(o *transcript.Object) bool {
			if w.ID != "" {
				if id, ok := idOf(o); !ok || id != w.ID || !isResponse(o) {
					return false
				}
			}
			if w.Type != "" && o.String("type") != w.Type {
				return false
			}
			return w.Has == "" || bytes.Contains(transcript.Encode(o), []byte(w.Has))
		})
	case "@bind":
		var b map[string]struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Path string `json:"path"`
		}
		if err := decode(st, &b); err != nil {
			return err
		}
		for name, spec := range b {
			v, err := r.bind(spec.Type, spec.ID, spec.Path)
			if err != nil {
				return err
			}
			vars[name] = v
		}
	case "@file": // the user changes a file behind the agent's back
		var f struct{ Path, Content string }
		if err := decode(st, &f); err != nil {
			return err
		}
		root, err := os.OpenRoot(r.work)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		defer root.Close()
		if err := root.WriteFile(f.Path, []byte(f.Content), 0o644); err != nil {
			return fmt.Errorf("replay: @file: %w", err)
		}
	case "@release": // open a waitFile gate of the fake script
		var name string
		if err := decode(st, &name); err != nil {
			return err
		}
		if strings.ContainsAny(name, `/\`) || name == ".." {
			return fmt.Errorf("replay: @release %q: a file name, not a path", name)
		}
		if err := ownfs.WriteAtomic(r.root, name, nil); err != nil {
			return fmt.Errorf("replay: @release: %w", err)
		}
	case "@waitCalls": // the fake model has received this many requests
		var n int
		if err := decode(st, &n); err != nil {
			return err
		}
		rec := filepath.Join(r.root, "fake-record.jsonl")
		return r.poll(strconv.Itoa(n)+" fake model requests", func() bool {
			data, _ := ownfs.ReadUser(rec, 1<<30)
			return bytes.Count(data, []byte("\n")) >= n
		})
	case "@close":
		_ = r.stdin.Close()
	case "@signal":
		var sig string
		if err := decode(st, &sig); err != nil {
			return err
		}
		s := syscall.SIGINT
		if sig == "SIGTERM" {
			s = syscall.SIGTERM
		}
		r.cancel(Signal{s})
	default:
		return fmt.Errorf("replay: directive %s is not supported (the replay kit knows @wait, @waitCalls, @bind, @raw, @file, @release, @close, @signal)", st.directive)
	}
	return nil
}

// Signal is the cancellation cause of @signal; the server adapter maps it
// to its own signal error.
type Signal struct{ Signal syscall.Signal }

func (s Signal) Error() string { return "received " + s.Signal.String() }

// bind returns the value at path (dot separated, numbers index arrays) of
// the last line of the given type or response id.
func (r *run) bind(typ, id, path string) (string, error) {
	lines := r.snapshot()
	for i := len(lines) - 1; i >= 0; i-- {
		v, err := transcript.Parse(lines[i])
		if err != nil {
			continue
		}
		o, ok := v.(*transcript.Object)
		if !ok || (typ != "" && o.String("type") != typ) {
			continue
		}
		if lid, _ := idOf(o); id != "" && lid != id {
			continue
		}
		var cur transcript.Value = o
		for _, part := range strings.Split(path, ".") {
			switch c := cur.(type) {
			case *transcript.Object:
				cur = c.Values[part]
			case []transcript.Value:
				n, err := strconv.Atoi(part)
				if err != nil || n < 0 || n >= len(c) {
					return "", fmt.Errorf("replay: @bind %s: bad index %s", path, part)
				}
				cur = c[n]
			}
		}
		s, ok := cur.(string)
		if !ok {
			return "", fmt.Errorf("replay: @bind %s: not a string: %s", path, transcript.Encode(cur))
		}
		return s, nil
	}
	return "", fmt.Errorf("replay: @bind: no line of type %q id %q", typ, id)
}

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

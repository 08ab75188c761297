package golden

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/internal/transcript"
)

// Case is the case.json of a fixture directory.
type Case struct {
	Args   []string          `json:"args"`
	Env    map[string]string `json:"env,omitempty"`
	Script json.RawMessage   `json:"script,omitempty"`
	Files  map[string]string `json:"files,omitempty"`
	// Copy creates work files from files under test/fixtures: work path ->
	// path relative to test/fixtures (host adapters).
	Copy map[string]string `json:"copy,omitempty"`
	// Dirs, Links and Fifos shape the file system before the start (see
	// Config).
	Dirs  []string          `json:"dirs,omitempty"`
	Links map[string]string `json:"links,omitempty"`
	Fifos []string          `json:"fifos,omitempty"`
	// Absent lists paths relative to the run's root that must not exist
	// after the run, Expect files (relative to the root) and the content
	// they must have: the side effects, checked besides the transcript.
	Absent []string          `json:"absent,omitempty"`
	Expect map[string]string `json:"expect,omitempty"`
	// Config is the user config file content.
	Config json.RawMessage `json:"config,omitempty"`
	Keep   Keep            `json:"keep"`
	// Normalize is the normaliser style (A, B, C, F or T; default A).
	Normalize string `json:"normalize,omitempty"`
	// Zero lists extra keys normalised to 0.
	Zero []string `json:"zero,omitempty"`
	// Exit is the expected exit code (default 0).
	Exit int `json:"exit,omitempty"`
	// Requires names machine features the case needs; "sandbox" (a usable
	// Landlock sandbox) skips the case where the kernel lacks it.
	Requires []string `json:"requires,omitempty"`
	// Writer bounds the output queue (stall tests).
	MaxQueuedItems int `json:"maxQueuedItems,omitempty"`
	MaxQueuedBytes int `json:"maxQueuedBytes,omitempty"`
	// SessionFile is the content of a session file opened with
	// --session <session>; \xNN stands for the raw byte NN (invalid UTF-8).
	SessionFile string `json:"sessionFile,omitempty"`
	// TelemetryStepMs advances the throughput clock by this much per
	// reading (default 0: a frozen clock, so no telemetry_tick).
	TelemetryStepMs int `json:"telemetryStepMs,omitempty"`
}

// rawBytes turns the \xNN escapes of s into bytes.
func rawBytes(s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if b, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				out = append(out, byte(b))
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}

// Step is one line of a fixture's in.jsonl: a command, or a directive
// whose single key starts with "@".
type Step struct {
	raw       []byte
	directive string
	arg       json.RawMessage
}

// LoadSteps reads in.jsonl.
func LoadSteps(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var steps []Step
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		st := Step{raw: append([]byte(nil), line...)}
		if len(m) == 1 {
			for k, v := range m {
				if strings.HasPrefix(k, "@") {
					st.directive, st.arg = k, v
				}
			}
		}
		steps = append(steps, st)
	}
	return steps, sc.Err()
}

// Play runs the steps against r. Placeholders $NAME in commands are
// replaced by values bound with @bind.
func Play(t testing.TB, r *Run, steps []Step) {
	t.Helper()
	vars := map[string]string{}
	closed := false
	for _, st := range steps {
		switch st.directive {
		case "":
			line := transcript.Substitute(string(st.raw), vars)
			r.Send(line)
		case "@raw":
			var s string
			mustDecode(t, st.arg, &s)
			r.SendRaw([]byte(s))
		case "@wait":
			var w struct {
				Type  string `json:"type"`
				ID    string `json:"id"`
				Count int    `json:"count"`
				Has   string `json:"contains"`
			}
			mustDecode(t, st.arg, &w)
			if w.Count == 0 {
				w.Count = 1
			}
			desc := w.Type + w.ID + w.Has
			r.WaitFor(desc, w.Count, func(o *Object) bool {
				if w.ID != "" && !(o.String("type") == "response" && o.String("id") == w.ID) {
					return false
				}
				if w.Type != "" && o.String("type") != w.Type {
					return false
				}
				return w.Has == "" || bytes.Contains(Encode(o), []byte(w.Has))
			})
		case "@bind":
			var b map[string]struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Path string `json:"path"`
			}
			mustDecode(t, st.arg, &b)
			for name, spec := range b {
				vars[name] = bind(t, r, spec.Type, spec.ID, spec.Path)
			}
		case "@file": // the user changes a file behind the agent's back
			var f struct {
				Path, Content string
			}
			mustDecode(t, st.arg, &f)
			if err := os.WriteFile(filepath.Join(r.Work, f.Path), []byte(f.Content), 0o644); err != nil {
				t.Fatal(err)
			}
		case "@release": // open a waitFile gate of the fake script
			var name string
			mustDecode(t, st.arg, &name)
			if err := os.WriteFile(filepath.Join(r.Root, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		case "@waitCalls": // the fake model has received this many requests
			// (parent and child sessions share one script consumed in call
			// order; this pins which session gets which response)
			var n int
			mustDecode(t, st.arg, &n)
			rec := filepath.Join(r.Root, "fake-record.jsonl")
			r.Poll(fmt.Sprintf("%d fake model requests", n), func() bool {
				data, _ := os.ReadFile(rec)
				return bytes.Count(data, []byte("\n")) >= n
			})
		case "@close":
			r.CloseStdin()
			closed = true
		case "@stall":
			r.Stall()
		case "@resume":
			r.Resume()
		case "@signal":
			var sig string
			mustDecode(t, st.arg, &sig)
			s := syscall.SIGINT
			if sig == "SIGTERM" {
				s = syscall.SIGTERM
			}
			r.Interrupt(app.SignalError{Signal: s})
		case "@waitMerged":
			var n int64
			mustDecode(t, st.arg, &n)
			r.Poll(fmt.Sprintf("%d merged deltas", n), func() bool {
				s := r.Server()
				return s != nil && s.Writer() != nil && s.Writer().Stats().MergedDeltas >= n
			})
		default:
			t.Fatalf("unknown directive %s", st.directive)
		}
	}
	if !closed {
		r.CloseStdin()
	}
}

func mustDecode(t testing.TB, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("directive argument %s: %v", raw, err)
	}
}

// bind returns the value at path (dot separated, numbers index arrays) of
// the last line of the given type or response id.
func bind(t testing.TB, r *Run, typ, id, path string) string {
	t.Helper()
	lines := r.Lines()
	for i := len(lines) - 1; i >= 0; i-- {
		v, err := Parse(lines[i])
		if err != nil {
			continue
		}
		o, ok := v.(*Object)
		if !ok || (typ != "" && o.String("type") != typ) || (id != "" && o.String("id") != id) {
			continue
		}
		var cur Value = o
		for _, part := range strings.Split(path, ".") {
			switch c := cur.(type) {
			case *Object:
				cur = c.Values[part]
			case []Value:
				n, err := strconv.Atoi(part)
				if err != nil || n >= len(c) {
					t.Fatalf("bind %s: bad index %s", path, part)
				}
				cur = c[n]
			}
		}
		s, ok := cur.(string)
		if !ok {
			t.Fatalf("bind %s: not a string: %s", path, Encode(cur))
		}
		return s
	}
	t.Fatalf("bind: no line of type %q id %q", typ, id)
	return ""
}

// Transcript is the normalised, selected output of a run.
func Transcript(t testing.TB, r *Run, keep Keep, style string, zero ...string) []byte {
	t.Helper()
	n := &Normalizer{Root: r.Root, Style: style, Zero: zero}
	var buf bytes.Buffer
	for _, l := range MergeDeltas(keep.Select(r.Lines())) {
		nl, err := n.Line(l)
		if err != nil {
			t.Fatalf("output line is not JSON: %v\n%s", err, l)
		}
		buf.Write(nl)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// RunCase plays a fixture directory (case.json, in.jsonl) and returns the
// run and its transcript.
func RunCase(t testing.TB, dir string) (*Run, *Case, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c Case
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	skipUnlessAvailable(t, c.Requires)
	steps, err := LoadSteps(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for k, v := range c.Files {
		files[k] = v
	}
	for dst, src := range c.Copy {
		data, err := os.ReadFile(filepath.Join(dir, "..", "..", src))
		if err != nil {
			t.Fatalf("%s/case.json copy: %v", dir, err)
		}
		files[dst] = string(data)
	}
	cfg := Config{Args: c.Args, Env: c.Env, Files: files, Dirs: c.Dirs, Links: c.Links, Fifos: c.Fifos,
		Writer:        stdio.WriterOptions{MaxItems: c.MaxQueuedItems, MaxBytes: c.MaxQueuedBytes},
		TelemetryStep: time.Duration(c.TelemetryStepMs) * time.Millisecond}
	if len(c.Script) > 0 {
		cfg.Script = c.Script
	}
	if c.SessionFile != "" {
		cfg.SessionFile = rawBytes(c.SessionFile)
	}
	if len(c.Config) > 0 {
		cfg.UserConfig = c.Config
	}
	r := Start(t, cfg)
	Play(t, r, steps)
	if code := r.Wait(); code != c.Exit {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, c.Exit, r.Stderr())
	}
	for _, p := range c.Absent {
		if _, err := os.Lstat(filepath.Join(r.Root, p)); err == nil {
			t.Errorf("%s exists after the run; it must not", p)
		}
	}
	for p, want := range c.Expect {
		if got, err := os.ReadFile(filepath.Join(r.Root, p)); err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v) after the run, want %q", p, got, err, want)
		}
	}
	style := c.Normalize
	if style == "" {
		style = "A"
	}
	return r, &c, Transcript(t, r, c.Keep, style, c.Zero...)
}

package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/internal/transcript"
	"github.com/armadra/ama-rpc/replaykit"
)

// Case is the case.json of a fixture directory (replaykit.Case: the
// replay kit's --case reads the same format).
type Case = replaykit.Case

// Step is one line of a fixture's in.jsonl (transcript.Step: the one
// step interpreter, shared with the replay kit).
type Step = transcript.Step

// LoadSteps reads in.jsonl.
func LoadSteps(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	steps, err := transcript.ParseSteps(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return steps, nil
}

// Play runs the steps against r (transcript.Play), then closes stdin
// unless a @close did. Placeholders $NAME in commands are replaced by
// values bound with @bind; $WORK is the work directory, $ROOT the root.
func Play(t testing.TB, r *Run, steps []Step) {
	t.Helper()
	closed, err := transcript.Play(player{r}, steps, map[string]string{"WORK": r.Work, "ROOT": r.Root}, WaitTimeout)
	if err != nil {
		t.Fatalf("%v; output so far:\n%s\nstderr:\n%s", err, bytes.Join(r.Lines(), []byte("\n")), r.Stderr())
	}
	if !closed {
		r.CloseStdin()
	}
}

// player is a Run as transcript.Play's target.
type player struct{ r *Run }

func (p player) Send(b []byte) error {
	if _, err := p.r.stdin.Write(b); err != nil {
		return fmt.Errorf("write stdin: %w", err)
	}
	return nil
}

func (p player) CloseInput()                { p.r.CloseStdin() }
func (p player) Output() *transcript.Output { return p.r.out }
func (p player) Signal(sig syscall.Signal)  { p.r.Interrupt(app.SignalError{Signal: sig}) }
func (p player) Root() string               { return p.r.Root }
func (p player) Work() string               { return p.r.Work }
func (p player) MergedDeltas() (int64, bool) {
	s := p.r.Server()
	if s == nil || s.Writer() == nil {
		return 0, false
	}
	return s.Writer().Stats().MergedDeltas, true
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
	c, err := replaykit.DecodeCase(data)
	if err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	SkipUnlessAvailable(t, c.Requires)
	steps, err := LoadSteps(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// The files, the copies (under test/fixtures), the script and the
	// rest as the replay kit reads the case.
	o, err := c.Options(filepath.Join(dir, "..", ".."))
	if err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	cfg := Config{Args: o.Args, Env: o.Env, Script: o.Script, Files: o.Files, Dirs: o.Dirs, Links: o.Links, Fifos: o.Fifos,
		UserConfig: o.UserConfig, SessionFile: o.SessionFile,
		Writer:        stdio.WriterOptions{MaxItems: o.MaxQueuedItems, MaxBytes: o.MaxQueuedBytes},
		TelemetryStep: o.TelemetryStep}
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

// KitChecks are the replay kit's guarantees on one golden, checked on the
// transcript of the run that played it (the fixture is played once per
// suite run; the kit's own harness replays a few representative ones,
// replaykit's TestReplayGoldens): replaykit.Check, what `ama-rpc replay
// --check` runs, finds no difference between the golden and the run, and
// exactly one when one field of the golden is changed (ChangeOneField)
// or, for a golden with no line, when the run wrote one line more. It
// returns what failed.
func KitChecks(want, got []byte) []string {
	var out []string
	if diffs := replaykit.Check(want, got); len(diffs) > 0 {
		out = append(out, fmt.Sprintf("replay --check: %d differences by shape, first: %s", len(diffs), strings.Join(diffs[:min(5, len(diffs))], "\n")))
	}
	if changed, ok := ChangeOneField(want); ok {
		if diffs := replaykit.Check(changed, got); len(diffs) != 1 {
			out = append(out, fmt.Sprintf("replay --check with one changed field: %d differences %v", len(diffs), diffs))
		}
	} else if len(bytes.TrimSpace(want)) == 0 {
		if diffs := replaykit.Check(want, append(slices.Clip(got), "{\"type\":\"extra\"}\n"...)); len(diffs) != 1 {
			out = append(out, fmt.Sprintf("replay --check with one extra line: %d differences %v", len(diffs), diffs))
		}
	} else {
		out = append(out, "no field to change in the golden")
	}
	return out
}

// ChangeOneField returns want with one protocol value changed: the first
// line's "type" (or "jsonrpc", or for a text line its text), so a
// comparison by shape must report exactly one difference.
func ChangeOneField(want []byte) ([]byte, bool) {
	lines := bytes.SplitAfter(want, []byte("\n"))
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var out []byte
		switch {
		case bytes.Contains(l, []byte(`"type":"`)):
			out = bytes.Replace(l, []byte(`"type":"`), []byte(`"type":"changed_`), 1)
		case bytes.Contains(l, []byte(`"jsonrpc":"2.0"`)):
			out = bytes.Replace(l, []byte(`"jsonrpc":"2.0"`), []byte(`"jsonrpc":"2.1"`), 1)
		case l[0] != '{':
			out = append([]byte("changed "), l...)
		default:
			continue
		}
		lines[i] = out
		return bytes.Join(lines, nil), true
	}
	return nil, false
}

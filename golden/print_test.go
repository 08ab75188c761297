package golden_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/replaykit"
)

// TestPrintFixtures replays test/fixtures/print/*: `ama-rpc -p` in process
// with the fake model, stdout (out.txt: JSON lines normalised, other lines
// with the root as <root>), stderr (stderr.txt, the same) and the exit
// code, plus the case's side effects (absent, expect) and the replay
// kit's comparison on the transcript (golden.KitChecks): the print
// goldens' one play.
func TestPrintFixtures(t *testing.T) {
	dirs, err := filepath.Glob("../test/fixtures/print/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no print fixtures: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(dir, "case.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c replaykit.PrintCase
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("case.json: %v", err)
			}
			cfg := golden.Config{Args: c.Args, Env: c.Env, Files: c.Files, Script: c.Script, UserConfig: c.Config}
			if len(c.Script) == 0 {
				cfg.Script = nil
			}
			if len(c.Config) == 0 {
				cfg.UserConfig = nil
			}
			r := golden.Start(t, cfg)
			if c.Stdin != "" {
				r.SendRaw([]byte(c.Stdin))
			}
			r.CloseStdin()
			if in := c.Interrupt; in != nil {
				if in.After != "" {
					r.WaitFor(in.After, 1, func(o *golden.Object) bool { return o.Values["type"] == in.After })
				}
				if in.AfterCalls > 0 {
					r.Poll("model requests", func() bool {
						b, _ := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
						return bytes.Count(b, []byte("\n")) >= in.AfterCalls
					})
				}
				r.Interrupt(app.SignalError{Signal: syscall.Signal(in.Signal)})
			}
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
					t.Errorf("%s holds %q (%v), want %q", p, got, err, want)
				}
			}
			style := c.Normalize
			if style == "" {
				style = "T"
			}
			n := &golden.Normalizer{Root: r.Root, Style: style, Zero: c.Zero}
			var out bytes.Buffer
			lines := r.Lines()
			if c.Keep.Only != nil || c.Keep.Drop != nil {
				lines = c.Keep.Select(lines)
			}
			for i, l := range golden.MergeDeltas(lines) {
				if !utf8.Valid(l) {
					t.Fatalf("stdout line %d is not valid UTF-8", i+1)
				}
				if len(l) > 0 && l[0] == '{' {
					nl, err := n.Line(l)
					if err != nil {
						t.Fatalf("stdout line %d looks like JSON but is not: %v", i+1, err)
					}
					l = nl
				} else {
					l = []byte(strings.ReplaceAll(string(l), r.Root, "<root>"))
				}
				out.Write(l)
				out.WriteByte('\n')
			}
			stderr := strings.ReplaceAll(r.Stderr(), r.Root, "<root>")
			if compareFile(t, filepath.Join(dir, "out.txt"), out.Bytes()) {
				for _, p := range golden.KitChecks(out.Bytes(), out.Bytes()) {
					t.Error(p)
				}
			}
			compareFile(t, filepath.Join(dir, "stderr.txt"), []byte(stderr))
		})
	}
}

// compareFile compares got with the file at path (UPDATE_GOLDEN=1:
// writes it) and reports whether they are equal.
func compareFile(t *testing.T, path string, got []byte) bool {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return false
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (UPDATE_GOLDEN=1 rewrites it)\n%s", path, lineDiff(want, got))
		return false
	}
	return true
}

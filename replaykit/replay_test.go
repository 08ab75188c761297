package replaykit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/replaykit"
	"github.com/armadra/ama-rpc/rpc/schema/schemacheck"
)

const fixtures = "../test/fixtures/rpc"

// golden is one fixture as the kit replays it.
type goldenCase struct {
	opts  replaykit.Options
	steps []replaykit.Step
	exit  int
	want  string // the expected transcript's file
}

// loadCase reads a fixture directory of test/fixtures/<kind>/<name>: an
// rpc or ACP golden (case.json, in.jsonl, out.jsonl) or a print one
// (case.json, out.txt; its stdin and interrupt become steps).
func loadCase(t *testing.T, dir string) goldenCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(filepath.Dir(dir)) == "print" {
		var c replaykit.PrintCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		golden.SkipUnlessAvailable(t, c.Requires)
		opts, err := c.Options("../test/fixtures")
		if err != nil {
			t.Fatal(err)
		}
		if opts.Style == "" {
			opts.Style = "T"
		}
		steps := c.Steps()
		return goldenCase{opts, steps, c.Exit, filepath.Join(dir, "out.txt")}
	}
	c, err := replaykit.DecodeCase(b)
	if err != nil {
		t.Fatal(err)
	}
	golden.SkipUnlessAvailable(t, c.Requires)
	opts, err := c.Options("../test/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := replaykit.ParseSteps(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return goldenCase{opts, steps, c.Exit, filepath.Join(dir, "out.jsonl")}
}

// goldenDirs are the fixtures the kit replays: every rpc, ACP and print
// golden.
func goldenDirs(t *testing.T) []string {
	var dirs []string
	for _, kind := range []string{"rpc", "acp", "print"} {
		d, err := filepath.Glob(filepath.Join("../test/fixtures", kind, "*"))
		if err != nil || len(d) == 0 {
			t.Fatalf("no %s goldens: %v", kind, err)
		}
		dirs = append(dirs, d...)
	}
	return dirs
}

// The kit replays every golden (rpc, ACP, print), and each transcript has
// the golden's shape (replay --check passes on them) and the case's side
// effects; the same transcript with one field changed fails.
func TestReplayGoldens(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every golden")
	}
	dirs := goldenDirs(t)
	var passed atomic.Int32
	t.Run("cases", func(t *testing.T) {
		for _, dir := range dirs {
			t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
				t.Parallel()
				gc := loadCase(t, dir)
				gc.opts.Sessions = func(path string, b []byte) {
					if schemacheck.IsSessionFile(b) {
						for _, err := range schemacheck.SessionFile(b, 3) {
							t.Errorf("session file %s: %v", filepath.Base(path), err)
						}
					}
				}
				res, err := replaykit.Replay(context.Background(), app.ReplayServer, gc.opts, gc.steps)
				if err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, res.Stderr)
				}
				if res.Exit != gc.exit {
					t.Errorf("exit %d, want %d", res.Exit, gc.exit)
				}
				for _, e := range res.Effects {
					t.Error(e)
				}
				want, err := os.ReadFile(gc.want)
				if err != nil {
					t.Fatal(err)
				}
				if diffs := replaykit.Check(want, res.Transcript); len(diffs) > 0 {
					t.Errorf("%d differences by shape, first: %s\nstderr:\n%s", len(diffs), strings.Join(diffs[:min(5, len(diffs))], "\n"), res.Stderr)
					return
				}
				if changed, ok := changeOneField(want); ok {
					if diffs := replaykit.Check(changed, res.Transcript); len(diffs) != 1 {
						t.Errorf("one changed field: %d differences %v", len(diffs), diffs)
					}
				} else if len(bytes.TrimSpace(want)) == 0 {
					// An empty golden (a run that writes nothing on
					// stdout): one line more must fail.
					if diffs := replaykit.Check(want, append(res.Transcript, "{\"type\":\"extra\"}\n"...)); len(diffs) != 1 {
						t.Errorf("one extra line: %d differences %v", len(diffs), diffs)
					}
				} else {
					t.Errorf("no field to change in %s", gc.want)
				}
				passed.Add(1)
			})
		}
	})
	t.Logf("%d of %d goldens replayed with the same shape", passed.Load(), len(dirs))
}

// changeOneField returns want with one protocol value changed: the first
// line's "type" (or, for a text line, one character), so --check must
// report exactly one difference.
func changeOneField(want []byte) ([]byte, bool) {
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

// Check names a changed field, a renamed key, a missing and an extra
// line; prose (an error text) may differ.
func TestCheckFindsOneChange(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(fixtures, "prompt", "out.jsonl"))
	if err != nil {
		t.Skip("no prompt golden")
	}
	if d := replaykit.Check(want, want); len(d) != 0 {
		t.Fatalf("a transcript against itself: %v", d)
	}
	for _, tc := range []struct{ name, from, to, says string }{
		{"changed value", `"stopReason":"stop"`, `"stopReason":"length"`, `want "stop", got "length"`},
		{"renamed key", `"willRetry"`, `"will_retry"`, "want keys"},
		{"changed type", `"willRetry":false`, `"willRetry":"false"`, "want boolean"},
	} {
		if !bytes.Contains(want, []byte(tc.from)) {
			t.Fatalf("%s: %s not in the golden", tc.name, tc.from)
		}
		got := bytes.Replace(want, []byte(tc.from), []byte(tc.to), 1)
		d := replaykit.Check(want, got)
		if len(d) != 1 || !strings.Contains(d[0], tc.says) || !strings.HasPrefix(d[0], "line ") {
			t.Errorf("%s: %v", tc.name, d)
		}
	}
	lines := bytes.SplitAfter(bytes.TrimSpace(want), []byte("\n"))
	if d := replaykit.Check(want, bytes.Join(lines[:len(lines)-1], nil)); len(d) != 1 || !strings.Contains(d[0], "missing") {
		t.Errorf("a missing line: %v", d)
	}
	err1 := []byte(`{"id":"1","type":"response","command":"prompt","success":false,"error":"one text","code":"busy"}`)
	err2 := []byte(`{"id":"1","type":"response","command":"prompt","success":false,"error":"another text","code":"busy"}`)
	if d := replaykit.Check(err1, err2); len(d) != 0 {
		t.Errorf("prose differs: %v", d)
	}
}

// The subcommand end to end: a host's script and commands, its transcript
// as the expected file, --check passing; then one changed field fails with
// the difference on stderr.
func TestCommandCheck(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake.json")
	if err := os.WriteFile(script, []byte(`{"responses":[{"text":"hello back"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	commands := `{"id":"1","type":"prompt","message":"hi"}
{"@wait":{"type":"agent_settled"}}
{"id":"2","type":"get_last_assistant_text"}
{"@wait":{"id":"2"}}
`
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := app.Main(context.Background(), app.Env{Args: append([]string{"replay"}, args...), Stdin: strings.NewReader(commands),
			Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: dir})
		return code, out.String(), errb.String()
	}
	code, out, stderr := run("--script", script)
	if code != replaykit.ExitOK || !strings.Contains(out, `"text":"hello back"`) || strings.Contains(out, dir) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	expected := filepath.Join(dir, "expected.jsonl")
	if err := os.WriteFile(expected, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("--script", script, "--check", expected); code != replaykit.ExitOK {
		t.Fatalf("--check on its own transcript: exit %d\n%s", code, stderr)
	}
	changed := strings.Replace(out, `"text":"hello back"`, `"text":"hello there"`, 1)
	if err := os.WriteFile(expected, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("--script", script, "--check", expected)
	if code != replaykit.ExitDiffers || !strings.Contains(stderr, `want "hello there", got "hello back"`) {
		t.Errorf("one changed field: exit %d\n%s", code, stderr)
	}
	if code, _, _ := run("--mode", "grpc"); code != replaykit.ExitUsage {
		t.Errorf("--mode grpc: exit %d", code)
	}
}

// A file name of the host's test may reach the home but not leave the
// run's temporary root.
func TestFilesStayInRoot(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "planted")
	rel, err := filepath.Rel(os.TempDir(), outside)
	if err != nil {
		t.Skip(err)
	}
	for _, name := range []string{"../../" + rel, outside} {
		_, err := replaykit.Replay(context.Background(), app.ReplayServer, replaykit.Options{Files: map[string]string{name: "x"}}, nil)
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := os.Stat(outside); err == nil {
			t.Fatalf("%s: written outside the root", name)
		}
	}
	for _, opts := range []replaykit.Options{
		{Fifos: []string{"../../" + rel}}, {Links: map[string]string{"../../" + rel: "/"}}, {Dirs: []string{"../" + rel}},
		{Links: map[string]string{"out": filepath.Dir(outside)}, Files: map[string]string{"out/planted": "x"}},
	} {
		if _, err := replaykit.Replay(context.Background(), app.ReplayServer, opts, nil); err == nil {
			t.Errorf("%+v: accepted", opts)
		}
		if _, err := os.Lstat(outside); err == nil {
			t.Fatalf("%+v: made outside the root", opts)
		}
	}
}

// ACP mode: two replays of the same commands have the same shape, and a
// changed field is found.
func TestReplayACP(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}
{"@wait":{"id":"1"}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"$WORK","mcpServers":[]}}
{"@wait":{"id":"2"}}
{"@bind":{"SID":{"id":"2","path":"result.sessionId"}}}
{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"$SID","prompt":[{"type":"text","text":"hi"}]}}
{"@wait":{"id":"3"}}
`
	play := func() []byte {
		steps, err := replaykit.ParseSteps(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		res, err := replaykit.Replay(context.Background(), app.ReplayServer, replaykit.Options{Mode: "acp", Script: []byte(`[{"text":"hello back"}]`)}, steps)
		if err != nil {
			t.Fatalf("%v\n%s", err, res.Stderr)
		}
		return res.Transcript
	}
	a, b := play(), play()
	if !bytes.Contains(a, []byte(`"stopReason":"end_turn"`)) || !bytes.Contains(a, []byte("hello back")) {
		t.Fatalf("transcript:\n%s", a)
	}
	if d := replaykit.Check(a, b); len(d) != 0 {
		t.Errorf("two replays differ: %v", d)
	}
	if d := replaykit.Check(a, bytes.Replace(b, []byte(`"end_turn"`), []byte(`"cancelled"`), 1)); len(d) != 1 {
		t.Errorf("a changed stop reason: %v", d)
	}
}

// --case: a golden that needs the harness's file system (a link out of
// the project, a directory beside it, side effects to check) replays
// through the subcommand with --check; a changed field fails.
func TestCommandCase(t *testing.T) {
	dir := filepath.Join(fixtures, "perm-symlink-write")
	in, err := os.ReadFile(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := app.Main(context.Background(), app.Env{Args: append([]string{"replay"}, args...), Stdin: bytes.NewReader(in),
			Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
		return code, errb.String()
	}
	caseFile, want := filepath.Join(dir, "case.json"), filepath.Join(dir, "out.jsonl")
	if code, stderr := run("--case", caseFile, "--check", want); code != replaykit.ExitOK {
		t.Fatalf("--case --check: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	changed, ok := changeOneField(b)
	if !ok {
		t.Fatal("nothing to change")
	}
	bad := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(bad, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run("--case", caseFile, "--check", bad); code != replaykit.ExitDiffers || !strings.Contains(stderr, "1 differences") {
		t.Errorf("one changed field: exit %d\n%s", code, stderr)
	}
}

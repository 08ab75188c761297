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
)

const fixtures = "../test/fixtures/rpc"

// options returns the replay of a golden case, or a reason why the kit
// cannot replay it (features of the golden harness a host's test does not
// have: links, fifos, a prepared session file, writer bounds, a stalled
// reader).
func options(t *testing.T, dir string) (replaykit.Options, []replaykit.Step, int, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c golden.Case
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	switch {
	case len(c.Links) > 0, len(c.Fifos) > 0, len(c.Dirs) > 0, c.SessionFile != "", len(c.Copy) > 0,
		c.MaxQueuedItems > 0, c.MaxQueuedBytes > 0, c.TelemetryStepMs > 0, len(c.Requires) > 0:
		return replaykit.Options{}, nil, 0, "uses a golden-harness feature (links, fifos, dirs, session file, copy, writer bounds, telemetry clock, requires)"
	}
	in, err := os.ReadFile(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{`"@stall"`, `"@resume"`, `"@waitMerged"`} {
		if bytes.Contains(in, []byte(d)) {
			return replaykit.Options{}, nil, 0, "uses " + d
		}
	}
	steps, err := replaykit.ParseSteps(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	opts := replaykit.Options{Args: c.Args, Env: c.Env, Files: c.Files, Keep: c.Keep, Style: c.Normalize, Zero: c.Zero}
	if len(c.Script) > 0 {
		opts.Script = c.Script
	}
	if len(c.Config) > 0 {
		opts.UserConfig = c.Config
	}
	return opts, steps, c.Exit, ""
}

// The kit replays the rpc goldens, and each transcript has the golden's
// shape (replay --check passes on them).
func TestReplayGoldens(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every rpc golden")
	}
	dirs, err := filepath.Glob(filepath.Join(fixtures, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no rpc goldens: %v", err)
	}
	var passed, skipped atomic.Int32
	t.Run("cases", func(t *testing.T) {
		for _, dir := range dirs {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				t.Parallel()
				opts, steps, exit, why := options(t, dir)
				if why != "" {
					skipped.Add(1)
					t.Skip(why)
				}
				res, err := replaykit.Replay(context.Background(), app.ReplayServer, opts, steps)
				if err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, res.Stderr)
				}
				if res.Exit != exit {
					t.Errorf("exit %d, want %d", res.Exit, exit)
				}
				want, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				if diffs := replaykit.Check(want, res.Transcript); len(diffs) > 0 {
					t.Errorf("%d differences by shape, first: %s", len(diffs), strings.Join(diffs[:min(5, len(diffs))], "\n"))
					return
				}
				passed.Add(1)
			})
		}
	})
	t.Logf("%d rpc goldens replayed with the same shape, %d skipped (golden-harness features), of %d", passed.Load(), skipped.Load(), len(dirs))
	if passed.Load() < int32(len(dirs))*3/4 {
		t.Errorf("only %d of %d goldens replayed", passed.Load(), len(dirs))
	}
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

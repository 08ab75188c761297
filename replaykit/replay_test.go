package replaykit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/replaykit"
	"github.com/armadra/ama-rpc/rpc/schema/schemacheck"
)

const fixtures = "../test/fixtures/rpc"

// kitCases are the goldens the kit itself replays, one for each thing
// its harness does on its own rather than through the shared step runner
// and normaliser (every golden is played once per suite run by the golden
// package, which checks replaykit.Check on each transcript,
// golden.KitChecks):
//   - rpc/perm-symlink-write: links (one out of the project), dirs, and
//     absent/expect side effects, made and checked through os.Root;
//   - rpc/tool-read-special: a named pipe (fifos);
//   - rpc/wire-utf8: a session file with raw invalid bytes (\xNN) opened
//     with --session <session>;
//   - rpc/stall: writer bounds and @stall/@waitMerged (the kit's Merged
//     hook into app.ReplayServer);
//   - rpc/signal: @signal as the kit's Signal, mapped by app.ReplayServer,
//     and the exit code;
//   - rpc/telemetry-tick: the kit's throughput clock (telemetryStepMs);
//   - rpc/host-hits: copy, read from the default --fixtures directory
//     (needs Node.js);
//   - acp/deny-seq: --mode acp (JSON-RPC ids in @wait) with a side effect;
//   - print/sigint and print/denied-bash-text: a print case's stdin and
//     interrupt as steps (@wait, @signal), text output with the root
//     named, exit codes 130 and 7, an absent file.
var kitCases = []string{"rpc/perm-symlink-write", "rpc/tool-read-special", "rpc/wire-utf8", "rpc/stall", "rpc/signal",
	"rpc/telemetry-tick", "rpc/host-hits", "acp/deny-seq", "print/sigint", "print/denied-bash-text"}

// The kit replays the representative goldens (kitCases) end to end: the
// rpc and ACP ones through the subcommand, `ama-rpc replay --case
// case.json --check out.jsonl < in.jsonl`, which exits 0 only when the
// transcript has the golden's shape, the exit code is the case's and the
// side effects hold; the print ones (whose case files the subcommand does
// not read) through Replay with their steps, the same checks, and every
// session file they leave validated against the schema.
func TestReplayGoldens(t *testing.T) {
	for _, name := range kitCases {
		dir := filepath.Join("../test/fixtures", name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if strings.HasPrefix(name, "print/") {
				replayPrint(t, dir)
				return
			}
			b, err := os.ReadFile(filepath.Join(dir, "case.json"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := replaykit.DecodeCase(b)
			if err != nil {
				t.Fatal(err)
			}
			golden.SkipUnlessAvailable(t, c.Requires)
			in, err := os.ReadFile(filepath.Join(dir, "in.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := app.Main(context.Background(), app.Env{Args: []string{"replay", "--case", filepath.Join(dir, "case.json"), "--check", filepath.Join(dir, "out.jsonl")},
				Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
			if code != replaykit.ExitOK {
				t.Fatalf("replay --case --check: exit %d\n%s", code, errb.String())
			}
			if out.Len() == 0 {
				t.Fatal("no transcript on stdout")
			}
		})
	}
}

// replayPrint replays a print golden (case.json, out.txt) through Replay.
func replayPrint(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
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
	opts.Sessions = func(path string, b []byte) {
		if schemacheck.IsSessionFile(b) {
			for _, err := range schemacheck.SessionFile(b, 3) {
				t.Errorf("session file %s: %v", filepath.Base(path), err)
			}
		}
	}
	res, err := replaykit.Replay(context.Background(), app.ReplayServer, opts, c.Steps())
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, res.Stderr)
	}
	if res.Exit != c.Exit {
		t.Errorf("exit %d, want %d", res.Exit, c.Exit)
	}
	for _, e := range res.Effects {
		t.Error(e)
	}
	want, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if diffs := replaykit.Check(want, res.Transcript); len(diffs) > 0 {
		t.Errorf("%d differences by shape, first: %s\nstderr:\n%s", len(diffs), strings.Join(diffs[:min(5, len(diffs))], "\n"), res.Stderr)
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

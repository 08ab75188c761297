package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

type proc struct {
	home, cwd string
	env       map[string]string
}

func newProc(t *testing.T) *proc {
	p := &proc{home: t.TempDir(), cwd: t.TempDir(), env: map[string]string{}}
	p.env["HOME"] = p.home
	p.env["PATH"] = os.Getenv("PATH")
	return p
}

// run executes ama-rpc in-process with the given stdin and returns the exit
// code, stdout lines and stderr.
func (p *proc) run(t *testing.T, ctx context.Context, stdin string, args ...string) (int, []map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := app.Main(ctx, app.Env{Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd})
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			lines = append(lines, map[string]any{"raw": l})
			continue
		}
		lines = append(lines, m)
	}
	return code, lines, errb.String()
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(p *proc)
		args  []string
		code  int
		err   string
	}{
		{name: "unknown flag", args: []string{"--nope"}, code: app.ExitUsage},
		{name: "bad mode", args: []string{"--mode", "grpc", "--model", "fake/echo"}, code: app.ExitUsage, err: "--mode"},
		{name: "exclusive session flags", args: []string{"--model", "fake/echo", "--resume", "x", "--continue"}, code: app.ExitUsage},
		{name: "invalid config", setup: func(p *proc) {
			dir := filepath.Join(p.home, ".config", "ama")
			_ = os.MkdirAll(dir, 0o755)
			_ = os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"permission": {"mode": 7}}`), 0o644)
		}, args: []string{"--model", "fake/echo"}, code: app.ExitConfig, err: "config.json"},
		{name: "negative model stream bound", setup: func(p *proc) {
			dir := filepath.Join(p.home, ".config", "ama")
			_ = os.MkdirAll(dir, 0o755)
			_ = os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"modelStream": {"idleTimeoutMs": -1}}`), 0o644)
		}, args: []string{"--model", "fake/echo"}, code: app.ExitConfig, err: "modelStream"},
		{name: "missing cwd", args: []string{"--model", "fake/echo", "--cwd", "/nonexistent/dir"}, code: app.ExitConfig},
		{name: "no model", args: nil, code: app.ExitNoModel, err: "--model"},
		{name: "unknown model", args: []string{"--model", "fake/nope"}, code: app.ExitNoModel},
		{name: "provider without key", args: []string{"--model", "openai/gpt-4.1-mini"}, code: app.ExitNoModel, err: "OPENAI_API_KEY"},
		{name: "missing session file", args: []string{"--model", "fake/echo", "--session", "/nonexistent/s.jsonl"}, code: app.ExitSession},
		{name: "unknown session id", args: []string{"--model", "fake/echo", "--resume", "00000000-0000-4000-8000-00000000dead"}, code: app.ExitSession},
		{name: "nothing to continue", args: []string{"--model", "fake/echo", "--continue"}, code: app.ExitSession},
		{name: "corrupt session", setup: func(p *proc) {
			_ = os.WriteFile(filepath.Join(p.cwd, "bad.jsonl"), []byte("{\"type\":\"session\",\"version\":1,\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/\"}\nnot json\n{\"type\":\"message\",\"id\":\"a\"}\n"), 0o644)
		}, args: []string{"--model", "fake/echo", "--session", "bad.jsonl"}, code: app.ExitSession, err: "invalid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProc(t)
			if c.setup != nil {
				c.setup(p)
			}
			code, lines, stderr := p.run(t, t.Context(), "", c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, stderr)
			}
			if len(lines) != 0 {
				t.Errorf("startup failure wrote to stdout: %v", lines)
			}
			if !strings.Contains(stderr, c.err) {
				t.Errorf("stderr %q does not mention %q", stderr, c.err)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	p := newProc(t)
	code, lines, _ := p.run(t, t.Context(), "", "--version")
	if code != 0 || len(lines) != 1 || lines[0]["raw"] != app.Version {
		t.Fatalf("exit %d, output %v", code, lines)
	}
}

func TestSigintExits130(t *testing.T) {
	p := newProc(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(app.SignalError{Signal: syscall.SIGINT})
	r, w, _ := os.Pipe() // stdin stays open: only the signal ends the server
	defer w.Close()
	var out, errb bytes.Buffer
	code := app.Main(ctx, app.Env{Args: []string{"--model", "fake/echo"}, Stdin: r, Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd})
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, errb.String())
	}
}

// A session can be continued, resumed by id and listed.
func TestContinueResumeAndList(t *testing.T) {
	p := newProc(t)
	code, lines, stderr := p.run(t, t.Context(), `{"id":"1","type":"prompt","message":"remember me"}`+"\n", "--model", "fake/echo")
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	id, _ := lines[1]["sessionId"].(string)

	for _, args := range [][]string{{"--continue"}, {"-c"}, {"--resume", id}} {
		code, lines, stderr = p.run(t, t.Context(), `{"id":"s","type":"get_state"}`+"\n", append([]string{"--model", "fake/echo"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		start := lines[1]
		if start["type"] != "session_start" || start["reason"] != "resume" || start["sessionId"] != id || start["sessionFile"] == nil {
			t.Fatalf("%v: session_start %v", args, start)
		}
	}
	file, _ := lines[1]["sessionFile"].(string)
	code, lines, stderr = p.run(t, t.Context(), `{"id":"s","type":"get_messages"}`+"\n", "--model", "fake/echo", "--session", file)
	if code != 0 || lines[1]["reason"] != "resume" {
		t.Fatalf("--session: exit %d %v %s", code, lines, stderr)
	}

	code, lines, stderr = p.run(t, t.Context(), "", "sessions", "list")
	if code != 0 || len(lines) != 1 || lines[0]["id"] != id || lines[0]["firstPrompt"] != "remember me" || lines[0]["path"] != file {
		t.Fatalf("sessions list: exit %d %v %s", code, lines, stderr)
	}
	code, lines, _ = p.run(t, t.Context(), "", "sessions", "list", "--all")
	if code != 0 || len(lines) != 1 {
		t.Fatalf("sessions list --all: %v", lines)
	}
}

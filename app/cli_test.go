package app_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

// Bad flag values are usage errors (exit 2), whatever the flag.
func TestBadFlagValuesExit2(t *testing.T) {
	for _, args := range [][]string{
		{"--model", "fake/echo", "--permission-mode", "bogus"},
		{"--model", "fake/echo", "--thinking", "huge"},
		{"--model", "fake/echo", "--session-id", "not-a-uuid"},
		{"--model", "fake/echo", "--session-id", "../../etc/x"},
		{"--model", "fake/echo", "extra"},
	} {
		p := newProc(t)
		code, lines, stderr := p.run(t, t.Context(), "", args...)
		if code != app.ExitUsage || len(lines) != 0 {
			t.Errorf("%v: exit %d (want 2), stdout %v, stderr %s", args, code, lines, stderr)
		}
	}
	p := newProc(t)
	if code, _, stderr := p.run(t, t.Context(), "", "--model", "fake/echo", "--session-id", "0B5E6F3A-3C1D-4E2F-9A7B-1C2D3E4F5A6B"); code != 0 {
		t.Errorf("an upper-case UUID is refused: exit %d, %s", code, stderr)
	}
}

// --help and `ama-rpc help` exit 0 and name the subcommands, the
// environment, the exit codes and the real --tools default.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		p := newProc(t)
		var out, errb bytes.Buffer
		code := app.Main(t.Context(), app.Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd})
		text := out.String()
		if code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
		if errb.Len() != 0 {
			t.Errorf("%v: help wrote to stderr (want stdout only): %s", args, errb.String())
		}
		for _, want := range []string{"sessions list", "explain", "AMA_FAKE_SCRIPT", "AMA_API_KEY_<ID>", "Exit codes", "130/143",
			"default bash,edit,glob,grep,read,write"} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: help lacks %q", args, want)
			}
		}
	}
}

// The permission mode is part of the session: set over RPC, restored by
// --resume and --continue in a new process; an explicit --permission-mode
// wins.
func TestPermissionModeSurvivesResume(t *testing.T) {
	p := newProc(t)
	const id = "6f0c2a4e-1b3d-4c5e-8f70-9a1b2c3d4e5f"
	in := `{"id":"p","type":"prompt","message":"hi"}` + "\n" + `{"id":"m","type":"set_permission_mode","mode":"auto-edit"}` + "\n"
	if code, _, stderr := p.run(t, t.Context(), in, "--model", "fake/echo", "--session-id", id); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mode := func(args ...string) any {
		t.Helper()
		code, lines, stderr := p.run(t, t.Context(), `{"id":"s","type":"get_state"}`+"\n", append([]string{"--model", "fake/echo"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, l := range lines {
			if l["id"] == "s" {
				return l["data"].(map[string]any)["permissionMode"]
			}
		}
		t.Fatalf("%v: no get_state response", args)
		return nil
	}
	if m := mode("--resume", id); m != "auto-edit" {
		t.Errorf("--resume: mode %v", m)
	}
	if m := mode("--continue"); m != "auto-edit" {
		t.Errorf("--continue: mode %v", m)
	}
	if m := mode("--resume", id, "--permission-mode", "plan"); m != "plan" {
		t.Errorf("--resume --permission-mode plan: mode %v", m)
	}
	if m := mode("--resume", id); m != "plan" {
		t.Errorf("the explicit mode was not recorded: %v", m)
	}
	if m := mode(); m != "default" {
		t.Errorf("a new session: mode %v", m)
	}
}

// An unknown flag is reported once on stderr (not once by the flag
// package and again by Main), with nothing on stdout.
func TestUnknownFlagReportedOnce(t *testing.T) {
	p := newProc(t)
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{Args: []string{"--bogus"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd})
	if code != app.ExitUsage || out.Len() != 0 {
		t.Fatalf("exit %d (want 2), stdout %q", code, out.String())
	}
	if n := strings.Count(errb.String(), "-bogus"); n != 1 {
		t.Errorf("the error names -bogus %d times (want once):\n%s", n, errb.String())
	}
	if strings.Contains(errb.String(), "Usage:") {
		t.Errorf("a usage error prints the whole usage:\n%s", errb.String())
	}
}

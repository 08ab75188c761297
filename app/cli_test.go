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
		text := out.String() + errb.String()
		if code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
		for _, want := range []string{"sessions list", "explain", "AMA_FAKE_SCRIPT", "AMA_API_KEY_<ID>", "Exit codes", "130/143",
			"default bash,edit,glob,grep,read,write"} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: help lacks %q", args, want)
			}
		}
	}
}

package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

// The profile's hooksFile is the profile hooks layer (between user and
// project) and its trustProject trusts the project's .ama/hooks.json
// unless --trust/--no-trust says otherwise (hooks spec §1.2, host-api §8).
// Each layer's SessionStart hook leaves a marker file.
func TestProfileHooksAndTrust(t *testing.T) {
	run := func(t *testing.T, trust string, args ...string) (code int, stderr string, markers []string) {
		t.Helper()
		p := newProc(t)
		dir := t.TempDir()
		mark := func(name string) string {
			return `{"version":1,"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo ` + name + ` >> ` + filepath.Join(dir, "markers") + `"}]}]}}`
		}
		write(t, filepath.Join(dir, "hooks.json"), mark("profile"))
		_ = os.MkdirAll(filepath.Join(p.cwd, ".ama"), 0o755)
		write(t, filepath.Join(p.cwd, ".ama", "hooks.json"), mark("project"))
		_ = os.MkdirAll(filepath.Join(p.home, ".config", "ama"), 0o755)
		write(t, filepath.Join(p.home, ".config", "ama", "hooks.json"), mark("user"))
		prof := write(t, filepath.Join(dir, "profile.json"), `{"version":1,"hooksFile":"`+filepath.Join(dir, "hooks.json")+`"`+trust+`}`)
		var out, errb bytes.Buffer
		code = app.Main(context.Background(), app.Env{Args: append([]string{"--model", "fake/echo", "--profile", prof}, args...),
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd})
		data, _ := os.ReadFile(filepath.Join(dir, "markers"))
		markers = strings.Fields(string(data))
		sort.Strings(markers) // the hooks of one event run in parallel
		return code, errb.String(), markers
	}
	cases := []struct {
		name, trust string
		args        []string
		want        string
		warn        bool
	}{
		{"profile layer, project untrusted", "", nil, "profile user", true},
		{"trustProject true", `,"trustProject":true`, nil, "profile project user", false},
		{"trustProject false", `,"trustProject":false`, nil, "profile user", true},
		{"--no-trust beats trustProject", `,"trustProject":true`, []string{"--no-trust"}, "profile user", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stderr, markers := run(t, c.trust, c.args...)
			if code != 0 || strings.Join(markers, " ") != c.want {
				t.Fatalf("exit %d, markers %v, want %q\n%s", code, markers, c.want, stderr)
			}
			if got := strings.Contains(stderr, "project hooks file"); got != c.warn {
				t.Errorf("untrusted warning %v, want %v:\n%s", got, c.warn, stderr)
			}
		})
	}
	// An invalid profile hooks file is a config error naming it.
	t.Run("invalid hooksFile", func(t *testing.T) {
		p := newProc(t)
		dir := t.TempDir()
		hf := write(t, filepath.Join(dir, "hooks.json"), `{"version":1,"hooks":{"PreToolUse":[{"matcher":"/(/","hooks":[]}]}}`)
		prof := write(t, filepath.Join(dir, "profile.json"), `{"version":1,"hooksFile":"`+hf+`"}`)
		code, _, stderr := p.run(t, context.Background(), "", "--model", "fake/echo", "--profile", prof)
		if code != app.ExitConfig || !strings.Contains(stderr, hf) {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}

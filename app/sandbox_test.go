package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/sandbox"
)

func TestExplainShowsSandbox(t *testing.T) {
	self, _ := os.Executable()
	if st := sandbox.New(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self, sandbox.Dirs{Temp: os.TempDir()}).Status(); !st.Available || !st.NetworkIsolation {
		t.Skipf("needs the Landlock sandbox: %s", st.Detail)
	}
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "ama", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"sandbox":{"bash":"auto"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"tool":"bash","input":{"command":"touch x"}}
{"tool":"bash","input":{"command":"touch x","sandbox":false}}
{"tool":"bash","input":{"command":"cat .env"}}
`
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{
		Args: []string{"explain"}, Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, Cwd: t.TempDir(),
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := []string{
		`"decision":"allow","layer":"sandbox"`,
		`"decision":"ask","layer":"mode"`,
		`"decision":"ask","layer":"mode"`,
	}
	wantRuns := []bool{true, false, true}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %q", out.String())
	}
	for i, l := range lines {
		var v struct {
			Sandboxed     bool
			RunsSandboxed *bool
		}
		_ = json.Unmarshal([]byte(l), &v)
		if !strings.Contains(l, want[i]) || v.RunsSandboxed == nil || *v.RunsSandboxed != wantRuns[i] || v.Sandboxed != (i == 0) {
			t.Errorf("line %d: %s", i+1, l)
		}
	}
}

// TestExplainStoppedBy: explain tells which layer would stop a command: the
// rules (deny), the sandbox (predicted from the command's text), or both.
func TestExplainStoppedBy(t *testing.T) {
	self, _ := os.Executable()
	if st := sandbox.New(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self, sandbox.Dirs{Temp: os.TempDir()}).Status(); !st.Available || !st.NetworkIsolation {
		t.Skipf("needs the Landlock sandbox: %s", st.Detail)
	}
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "ama", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"sandbox":{"bash":"auto"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ command, stoppedBy, stop string }{
		{"touch x", "", ""},
		{"echo x > /etc/ama-explain", "both", "write outside the writable trees: /etc/ama-explain"},
		{"cat " + home + "/.ssh/id_rsa", "both", "read of hidden " + home + "/.ssh/id_rsa"},
		{"curl -s https://example.com", "sandbox", "network access (denied)"},
		{"echo x > .git/hooks/pre-commit", "", "write to protected"},
		{"echo x > .env.local", "", "write to protected"}, // an external agent CLI loads it
		{"cp .env.example .env.dist", "", ""},
		{"head -c 64 /dev/zram0", "", "read of a device off the allowlist: /dev/zram0"},
		{"head -c 16 /dev/urandom; ls /dev; cat /dev/stdin /dev/fd/0", "", ""},
	}
	var in strings.Builder
	for _, c := range cases {
		b, _ := json.Marshal(map[string]any{"tool": "bash", "input": map[string]any{"command": c.command}})
		in.Write(append(b, '\n'))
	}
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{
		Args: []string{"explain", "--unattended"}, Stdin: strings.NewReader(in.String()), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, Cwd: t.TempDir(),
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("got %q", out.String())
	}
	for i, l := range lines {
		var v struct {
			StoppedBy    string
			SandboxStops []string
		}
		_ = json.Unmarshal([]byte(l), &v)
		c := cases[i]
		if c.stoppedBy != "" && v.StoppedBy != c.stoppedBy || c.stop != "" && !strings.Contains(strings.Join(v.SandboxStops, "|"), c.stop) ||
			c.stop == "" && len(v.SandboxStops) != 0 {
			t.Errorf("%s: %s", c.command, l)
		}
	}
}

package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// TestWalksSkipSecrets: the grep and glob walks skip every path on the one
// list of credential stores and ama's private places, whatever their root
// (HOME, a parent of it, the project), also through a symlink in the tree.
// The side effect checked: the marker in the secrets never comes back.
func TestWalksSkipSecrets(t *testing.T) {
	env := newEnv(t)
	home := filepath.Dir(env.Cwd) // the project lies in HOME
	env.Home = home
	data := filepath.Join(filepath.Dir(home), "data")
	env.Private = secrets.PrivateDirs(data, "")
	const marker = "MARKER_SECRET_7f3"
	for _, rel := range []string{
		".ssh/id_rsa", ".aws/credentials", ".netrc", ".kube/config", ".git-credentials", ".docker/config.json",
		".npmrc", ".config/gh/hosts.yml", ".pypirc", ".cargo/credentials.toml", ".vault-token",
		".terraform.d/credentials.tfrc.json", ".azure/accessTokens.json", ".bash_history",
		".local/share/ama/sessions/p/s.jsonl", ".local/share/ama/file-history/x", ".config/ama/auth.json",
		"work/.env",
	} {
		writeFile(t, home, rel, marker+" in "+rel+"\n")
	}
	writeFile(t, data, "sessions/other/s.jsonl", marker+" other session\n")
	writeFile(t, data, "tool-output/s1/out.log", "visible tool output\n")
	writeFile(t, home, "notes.txt", "visible note\n")
	if err := os.Symlink(filepath.Join(home, ".aws", "credentials"), filepath.Join(env.Cwd, "creds")); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{home, filepath.Dir(home), env.Cwd, filepath.Join(home, ".aws"), data} {
		out := text(run(t, env, "grep", map[string]any{"pattern": "MARKER|visible", "path": root}))
		if strings.Contains(out, marker) {
			t.Errorf("grep in %s returned a secret:\n%s", root, out)
		}
		out = text(run(t, env, "glob", map[string]any{"pattern": "**/*", "path": root}))
		for _, leak := range []string{"id_rsa", "credentials", "hosts.yml", "s.jsonl", ".env", "auth.json"} {
			if strings.Contains(out, leak) {
				t.Errorf("glob in %s listed %s:\n%s", root, leak, out)
			}
		}
	}
	for _, dir := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), filepath.Join(data, "sessions")} {
		if out := text(run(t, env, "ls", map[string]any{"path": dir})); !strings.Contains(out, "not listed") ||
			strings.Contains(out, "id_rsa") || strings.Contains(out, "other/") || strings.Contains(out, "\ncredentials") {
			t.Errorf("ls %s listed a secret store:\n%s", dir, out)
		}
	}
	if out := text(run(t, env, "ls", map[string]any{"path": home})); !strings.Contains(out, "notes.txt") {
		t.Errorf("ls of HOME failed:\n%s", out)
	}
	if out := text(run(t, env, "grep", map[string]any{"pattern": "visible", "path": home})); !strings.Contains(out, "notes.txt") {
		t.Errorf("grep of HOME lost the ordinary files:\n%s", out)
	}
	if out := text(run(t, env, "grep", map[string]any{"pattern": "visible", "path": data})); !strings.Contains(out, "out.log") {
		t.Errorf("grep of the data directory lost the tool output:\n%s", out)
	}
}

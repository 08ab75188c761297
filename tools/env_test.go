//go:build unix

package tools_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

// The provider key of the server never reaches a command, unless the user
// config passes it through.
func TestBashDoesNotSeeProviderKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-secret-1234")
	t.Setenv("AMA_API_KEY_CUSTOM", "custom-secret-5678")
	env := newEnv(t)
	r := run(t, env, "bash", map[string]any{"command": "printenv; env; echo ${OPENAI_API_KEY:-unset}"})
	if out := text(r); strings.Contains(out, "sk-test-secret") || strings.Contains(out, "custom-secret") ||
		!strings.Contains(out, "unset") {
		t.Fatalf("the key reached the command:\n%s", out)
	}
	env.EnvPolicy = tools.EnvPolicy{Pass: []string{"OPENAI_API_KEY"}}
	if out := text(run(t, env, "bash", map[string]any{"command": "echo $OPENAI_API_KEY"})); out != "sk-test-secret-1234" {
		t.Fatalf("passthrough: %q", out)
	}
}

// The four-write attack: a repository-shaped directory written with the
// file tools, whose config sets core.fsmonitor, must not run a program when
// git status (read-only, auto safe) runs in it through the bash tool.
func TestBashGitRepositoryConfigCannotRunPrograms(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	env := newEnv(t)
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	for name, content := range map[string]string{
		"evil/HEAD":              "ref: refs/heads/main\n",
		"evil/objects/info/keep": "",
		"evil/refs/heads/keep":   "",
		"evil/config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n" +
			"\tfsmonitor = \"touch " + marker + "; false\"\n\tpager = \"touch " + marker + "\"\n" +
			"[diff]\n\texternal = \"touch " + marker + "\"\n",
	} {
		if r := run(t, env, "write", map[string]any{"path": name, "content": content}); r.IsError {
			t.Fatalf("write %s: %s", name, text(r))
		}
	}
	// Without the protection the attack works (checks the setup).
	cmd := exec.Command("git", "-C", "evil", "status")
	cmd.Dir = env.Cwd
	cmd.Env = append(os.Environ(), "GIT_CONFIG_COUNT=0")
	_ = cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Skipf("this git does not run core.fsmonitor from the layout (%v)", err)
	}
	os.Remove(marker)
	for _, c := range []string{"git -C evil status", "git -C evil status --short", "cd evil && git status",
		"git -C evil diff", "git -C evil log -p", "GIT_DIR=evil git status"} {
		r := run(t, env, "bash", map[string]any{"command": c})
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q ran the repository's program: %s", c, text(r))
		}
	}
}

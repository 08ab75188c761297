package golden_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The four-write git attack through the fake model in auto mode, nobody
// answering approvals: the writes and `git -C evil status` are allowed,
// and the repository's core.fsmonitor and core.pager programs must not
// run (the side effect, not only the verdict). The transcript is the
// fixture test/fixtures/rpc/git-fsmonitor.
func TestGitRepositoryConfigDoesNotRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r, _, _ := golden.RunCase(t, "../test/fixtures/rpc/git-fsmonitor")
	for _, m := range []string{"fsmonitor-ran", "pager-ran"} {
		if _, err := os.Stat(filepath.Join(r.Work, m)); err == nil {
			t.Fatalf("%s: the repository's program ran", m)
		}
	}
	// The layout is a working attack without the bash tool's settings.
	cmd := exec.Command("git", "-C", "evil", "status")
	cmd.Dir = r.Work
	cmd.Env = append(os.Environ(), "GIT_CONFIG_COUNT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	_ = cmd.Run()
	if _, err := os.Stat(filepath.Join(r.Work, "fsmonitor-ran")); err != nil {
		t.Logf("note: this git does not run core.fsmonitor from the layout (%v)", err)
	}
}

// The provider key in the server's environment does not reach the bash
// tool (fixture test/fixtures/rpc/bash-no-provider-key, replayed here with
// the keys set).
func TestBashDoesNotSeeProviderKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-golden-secret-123456")
	t.Setenv("AMA_API_KEY_FAKE", "fake-golden-secret")
	dir := "../test/fixtures/rpc/bash-no-provider-key"
	_, _, got := golden.RunCase(t, dir)
	want, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want = golden.MergeTranscript(want)
	if string(got) != string(want) {
		t.Fatalf("with the keys set the transcript differs:\n%s\nwant:\n%s", got, want)
	}
}

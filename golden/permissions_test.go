package golden_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The four-write git attack through the fake model in auto mode, nobody
// answering approvals: the writes and `git -C evil status` are allowed,
// and the repository's core.fsmonitor and core.pager programs must not
// run (the side effect, not only the verdict). Checked on the one play of
// the fixture test/fixtures/rpc/git-fsmonitor (TestFixtures/git-fsmonitor).
var _ = afterFixture("rpc/git-fsmonitor", "repository programs do not run", func(t *testing.T, r *golden.Run, _ *golden.Case) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
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
})

// The provider key in the test process's environment (what the bash
// tool's environment is built from, internal/childenv) does not reach the
// bash tool: the one play of the fixture
// test/fixtures/rpc/bash-no-provider-key, with the keys set (t.Setenv
// cannot run beside TestFixtures' parallel plays, so TestFixtures leaves
// this fixture to this test).
func TestBashDoesNotSeeProviderKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-golden-secret-123456")
	t.Setenv("AMA_API_KEY_FAKE", "fake-golden-secret")
	r, _, _ := playFixture(t, "../test/fixtures/rpc/bash-no-provider-key")
	for _, secret := range []string{"sk-golden-secret-123456", "fake-golden-secret"} {
		for _, l := range r.Lines() {
			if strings.Contains(string(l), secret) {
				t.Fatalf("the key reached stdout: %s", l)
			}
		}
	}
}

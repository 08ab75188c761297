//go:build unix

package childenv_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// A repository that plants programs everywhere git looks for one: hooks in
// .git/hooks and in a core.hooksPath of its own, core.fsmonitor, a pager,
// an external diff. ama-rpc's own git runs none of them (checked by the
// marker files), where a plain git runs the hook (the setup works).
func TestOwnGitRunsNothingOfTheRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	dir := t.TempDir()
	repo, marks := filepath.Join(dir, "repo"), filepath.Join(dir, "marks")
	if err := os.MkdirAll(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	plain("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain("add", "a.txt")
	plain("commit", "-q", "-m", "one")
	hook := func(dir, name string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\ntouch '" + filepath.Join(marks, name) + "'\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hook(filepath.Join(repo, ".git", "hooks"), "post-checkout")
	// The control: a plain git runs the planted hook.
	plain("worktree", "add", "-q", "-b", "control", filepath.Join(dir, "control"), "HEAD")
	if _, err := os.Stat(filepath.Join(marks, "post-checkout")); err != nil {
		t.Skipf("this git does not run post-checkout on worktree add (%v)", err)
	}
	if err := os.Remove(filepath.Join(marks, "post-checkout")); err != nil {
		t.Fatal(err)
	}
	hook(filepath.Join(repo, "myhooks"), "post-checkout")
	plain("config", "core.hooksPath", filepath.Join(repo, "myhooks"))
	plain("config", "core.fsmonitor", "touch '"+filepath.Join(marks, "fsmonitor")+"'; false")
	plain("config", "core.pager", "touch '"+filepath.Join(marks, "pager")+"'; cat")
	plain("config", "diff.external", filepath.Join(repo, "myhooks", "post-checkout"))

	own := func(dir string, args ...string) {
		t.Helper()
		if out, err := childenv.Git(context.Background(), dir, args...).CombinedOutput(); err != nil {
			t.Fatalf("own git %v: %v\n%s", args, err, out)
		}
	}
	wt := filepath.Join(dir, "wt")
	own(repo, "worktree", "add", "-b", "task", wt, "HEAD")
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	own(wt, "status", "--porcelain")
	own(wt, append([]string{"diff", "--stat"}, childenv.GitDiffArgs...)...)
	own(wt, append([]string{"diff"}, childenv.GitDiffArgs...)...)
	own(repo, "worktree", "remove", "--force", wt)
	for _, m := range []string{"post-checkout", "fsmonitor", "pager"} {
		if _, err := os.Stat(filepath.Join(marks, m)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ama-rpc's own git ran the repository's %s (%v)", m, err)
		}
	}
}

//go:build unix

package childenv_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// A FIFO (or another non-regular file) at a file git opens on every call
// (.git/HEAD, .git/index, packed-refs, the current branch's ref; all
// writable by a sandboxed command) makes ama-rpc's own git refuse at once
// with ErrGitFile, never block until the caller's timeout; in the
// repository, in a subdirectory and in a linked worktree. Everyday: the
// same calls in the untouched repository succeed.
func TestOwnGitRefusesFIFOs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	setup := func(t *testing.T) (repo, wt string) {
		dir := t.TempDir()
		repo, wt = filepath.Join(dir, "repo"), filepath.Join(dir, "wt")
		for _, args := range [][]string{
			{"init", "-q", "-b", "main", repo},
			{"-C", repo, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "one"},
			{"-C", repo, "pack-refs", "--all"},
			{"-C", repo, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "two"},
			{"-C", repo, "worktree", "add", "-q", "-b", "side", wt},
		} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "sub", "f"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return repo, wt
	}
	run := func(dir string) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		_, err := childenv.Git(ctx, dir, "status", "--porcelain").CombinedOutput()
		if err == nil {
			_, err = childenv.Git(ctx, dir, "rev-parse", "HEAD").CombinedOutput()
		}
		return time.Since(start), err
	}
	t.Run("everyday", func(t *testing.T) {
		repo, wt := setup(t)
		for _, d := range []string{repo, filepath.Join(repo, "sub"), wt} {
			if _, err := run(d); err != nil {
				t.Errorf("%s: %v", d, err)
			}
		}
	})
	for _, tc := range []struct {
		name  string
		fifo  func(repo, wt string) string // the path made a FIFO
		where func(repo, wt string) string // where git runs
	}{
		{"HEAD", func(r, _ string) string { return filepath.Join(r, ".git", "HEAD") }, func(r, _ string) string { return r }},
		{"index", func(r, _ string) string { return filepath.Join(r, ".git", "index") }, func(r, _ string) string { return r }},
		{"index from a subdirectory", func(r, _ string) string { return filepath.Join(r, ".git", "index") }, func(r, _ string) string { return filepath.Join(r, "sub") }},
		{"packed-refs", func(r, _ string) string { return filepath.Join(r, ".git", "packed-refs") }, func(r, _ string) string { return r }},
		{"branch ref", func(r, _ string) string { return filepath.Join(r, ".git", "refs", "heads", "main") }, func(r, _ string) string { return r }},
		{"worktree HEAD", func(r, _ string) string { return filepath.Join(r, ".git", "worktrees", "wt", "HEAD") }, func(_, w string) string { return w }},
		{"worktree index", func(r, _ string) string { return filepath.Join(r, ".git", "worktrees", "wt", "index") }, func(_, w string) string { return w }},
		{"worktree branch ref", func(r, _ string) string { return filepath.Join(r, ".git", "refs", "heads", "side") }, func(_, w string) string { return w }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, wt := setup(t)
			p := tc.fifo(repo, wt)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			took, err := run(tc.where(repo, wt))
			if !errors.Is(err, childenv.ErrGitFile) {
				t.Fatalf("want ErrGitFile, got %v after %v", err, took)
			}
			if took > 10*time.Second {
				t.Errorf("the refusal took %v", took)
			}
		})
	}
}

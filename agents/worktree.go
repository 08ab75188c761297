package agents

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// worktree is the git worktree of a task with isolation "worktree"
// (agents.md §5.4).
type worktree struct {
	repo, path, branch, base string
}

// gitTimeout bounds one git command.
const gitTimeout = 30 * time.Second

func git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// addWorktree creates <repo>/.ama/worktrees/<name> on a new branch
// ama/task-<name> and returns it with the child's cwd (the directory that
// corresponds to cwd).
func addWorktree(cwd, name string) (*worktree, string, error) {
	repo, err := git(cwd, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, "", fmt.Errorf("isolation worktree needs a git repository: %w", err)
	}
	base, err := git(repo, "rev-parse", "HEAD")
	if err != nil {
		return nil, "", fmt.Errorf("isolation worktree needs a commit to start from: %w", err)
	}
	dir := filepath.Join(repo, ".ama", "worktrees")
	// Inside the repository, which is untrusted: no link out of it.
	if err := ownfs.WriteAtomicIn(repo, filepath.Join(".ama", "worktrees", ".gitignore"), []byte("*\n")); err != nil {
		return nil, "", err
	}
	w := &worktree{repo: repo, path: filepath.Join(dir, name), branch: "ama/task-" + name, base: base}
	if _, err := git(repo, "worktree", "add", "-b", w.branch, w.path, base); err != nil {
		return nil, "", err
	}
	rel, err := filepath.Rel(repo, cwd)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	return w, filepath.Join(w.path, rel), nil
}

// finish removes a worktree the task left clean and without commits, or
// keeps it and describes it.
func (w *worktree) finish() (changed bool, note string, err error) {
	status, err := git(w.path, "status", "--porcelain")
	if err != nil {
		return false, "", err
	}
	commits, err := git(w.path, "rev-list", "--count", w.base+"..HEAD")
	if err != nil {
		return false, "", err
	}
	if status == "" && commits == "0" {
		if _, err := git(w.repo, "worktree", "remove", "--force", w.path); err != nil {
			return false, "", err
		}
		_, err := git(w.repo, "branch", "-D", w.branch)
		return false, "", err
	}
	_, _ = git(w.path, "add", "-A", "--intent-to-add")
	stat, _ := git(w.path, "diff", "--stat", w.base)
	return true, fmt.Sprintf("\n\n[worktree kept: branch %s at %s]\n%s", w.branch, w.path, stat), nil
}

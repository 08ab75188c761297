package agents

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/internal/ownfs"
)

// worktree is the git worktree of a task with isolation "worktree"
// (agents.md §5.4).
type worktree struct {
	repo, path, branch, base string
}

// worktreePlanText refuses isolation "worktree" in plan mode, where
// ama-rpc creates nothing (a read-only child needs no isolation).
const worktreePlanText = "The sub-agent was not started: isolation \"worktree\" creates a git worktree and branch, which plan mode does not allow. Run the task without isolation (it works read-only in plan mode), or ask the user to leave plan mode first."

// gitTimeout bounds one git command.
const gitTimeout = 30 * time.Second

// git runs ama-rpc's own git (internal/childenv.Git: the repository's
// hooks, fsmonitor, pager, submodules and transports never run).
func git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	out, err := childenv.Git(ctx, dir, args...).CombinedOutput()
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
	real := cwd
	if r, err := filepath.EvalSymlinks(cwd); err == nil {
		real = r // git names the top level by its resolved path
	}
	rel, err := filepath.Rel(repo, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		// core.worktree of the repository's config names another
		// directory: ama-rpc creates nothing there.
		return nil, "", fmt.Errorf("isolation worktree: the repository's work tree %s does not contain %s", repo, cwd)
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
	stat, _ := git(w.path, append(append([]string{"diff", "--stat"}, childenv.GitDiffArgs...), w.base)...)
	return true, fmt.Sprintf("\n\n[worktree kept: branch %s at %s]\n%s", w.branch, w.path, stat), nil
}

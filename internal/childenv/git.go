package childenv

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// ownGit is forced on ama-rpc's own git on top of gitSafe. That git runs
// on ama-rpc's account, outside the sandbox, in a repository whose
// configuration, hooks and attributes the model or a sandboxed command may
// have written, so nothing of the repository may run a program: no hook
// (core.hooksPath names a directory that cannot exist, "/dev/null/<hook>"),
// no fsmonitor or pager (gitSafe), no submodule recursion (a clone would run the
// submodule's configuration), no transport at all (ama-rpc's own git never
// fetches), no automatic gc or maintenance (a detached background git).
// Diffs are run with --no-ext-diff --no-textconv by the caller (GitDiffArgs).
// The user's and the system's configuration stay in force (they are the
// user's, and e.g. git-lfs's smudge filter lives there); only the
// repository's is distrusted. Not covered: a filter driver defined in the repository's own .git/config
// runs on checkout like any git's; writing .git/config is itself a write
// into .git, which asks or is denied.
var ownGit = [][2]string{
	{"core.hooksPath", os.DevNull},
	{"submodule.recurse", "false"},
	{"protocol.allow", "never"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
}

// gitKept are the GIT_* variables of this process that ama-rpc's own git
// keeps: where the user's and system configuration live and how far
// discovery goes. Every other GIT_* variable (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_SSH_COMMAND,
// GIT_CONFIG_PARAMETERS and the caller's GIT_CONFIG_* pairs, …) is
// dropped: ama-rpc's git works on the repository of its directory, with
// ama-rpc's settings only.
var gitKept = map[string]bool{
	"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true, "GIT_EXEC_PATH": true,
}

// GitDiffArgs are the options every diff-like command of ama-rpc's own git
// carries: no external diff program, no textconv filter.
var GitDiffArgs = []string{"--no-ext-diff", "--no-textconv"}

// GitEnv is the complete environment of ama-rpc's own git, built from
// base: Scrub's, without the GIT_* variables not in gitKept, with gitSafe
// and ownGit forced, no terminal prompt and no optional locks (a status
// does not rewrite the index).
func GitEnv(base []string) []string {
	kept := make([]string, 0, len(base))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !gitKept[name] {
			continue
		}
		kept = append(kept, kv)
	}
	out, _ := scrub(kept, Policy{}, 2)
	out = appendGitConfig(out, 0, append(append([][2]string(nil), gitSafe...), ownGit...))
	return append(out, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}

// Git is ama-rpc's own git: `git args…` in dir with GitEnv of this
// process's environment and stdin from the null device. The git program
// is found by LookPath outside dir (a git planted in the project's
// .venv/bin is not run). Its start fails with ErrGitFile when a file git
// opens on every call (HEAD, index, packed-refs, the current branch's ref)
// is not a regular file (checkGitFiles).
func Git(ctx context.Context, dir string, args ...string) *exec.Cmd {
	prog, err := LookPath("git", dir)
	if err != nil {
		prog = "git"
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	if err != nil {
		cmd.Err = err // Start fails with it, as exec.Command's own lookup would
	}
	if ferr := checkGitFiles(dir); ferr != nil {
		cmd.Err = ferr // a FIFO at .git/HEAD: refused at once, not after the caller's timeout
	}
	cmd.Dir = dir
	cmd.Env = GitEnv(os.Environ())
	return cmd
}

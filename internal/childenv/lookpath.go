package childenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// LookPath finds program for ama-rpc to start on its own account (its own
// git, the host adapter's node, an MCP server's command, an external agent
// and its version probe, the bash tool's shell) in this process's PATH; see
// LookPathIn.
func LookPath(program string, untrusted ...string) (string, error) {
	return LookPathIn(os.Getenv("PATH"), program, untrusted...)
}

// LookPathIn is exec.LookPath over pathList (a PATH value), except that a
// directory the model or a sandboxed command can write is never searched:
// an entry that is relative (it names a directory of whatever the current
// directory is, which is the project) or that lies inside one of untrusted
// (the project directories), symlinks resolved, is skipped. A project's
// .venv/bin, node_modules/.bin or direnv bin on PATH would otherwise let a
// planted git, node or npx run outside the sandbox, unjudged, with the
// user's rights. A program named with a slash is an explicit choice of the
// user's configuration and is returned as exec.LookPath returns it.
func LookPathIn(pathList, program string, untrusted ...string) (string, error) {
	if strings.Contains(program, "/") {
		return exec.LookPath(program)
	}
	bad := make([]string, 0, 2*len(untrusted))
	for _, u := range untrusted {
		if u != "" {
			bad = append(bad, filepath.Clean(u), realPath(u))
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		// Both spellings: a link in the project to /usr/bin can be
		// swapped, and a link elsewhere may lead into the project. The
		// resolved directory is what is returned.
		real := realPath(dir)
		if inside(filepath.Clean(dir), bad) || inside(real, bad) {
			continue
		}
		// exec.LookPath of a name with a slash only checks that it is an
		// executable file (not a directory).
		if p, err := exec.LookPath(filepath.Join(real, program)); err == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: program, Err: exec.ErrNotFound}
}

// realPath is p with its symlinks resolved (cleaned when it cannot be).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// inside reports whether dir is one of dirs or lies under one (cleaned
// absolute paths).
func inside(dir string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return secrets.Within(dir, d) })
}

package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/approvals"
)

// Resolved is the one interpretation of a tool call that every reader
// uses: the verdict (through Facts), the approval preview, the checkpoint
// (Changes) and the execution. It is computed once per call by Resolve,
// before the verdict, and is immutable afterwards.
//
// Paths are absolute. Real paths have the symlinks of their existing prefix
// resolved the way the kernel resolves them when the call runs ("link/.."
// is the parent of the link's target, not the directory holding the link);
// the part that does not exist yet is appended as written (cleaned).
type Resolved struct {
	Tool string
	// Root is the session directory (the project root) as given, RealRoot
	// the same with symlinks resolved; likewise Home and RealHome.
	Root, RealRoot string
	Home, RealHome string

	// File tools (read, write, edit, grep, glob, ls): Path is the target as
	// the model named it, made absolute (Env.Abs); Real is Path resolved.
	// Err is set when Real could not be computed (a symlink loop).
	HasPath    bool
	Path, Real string
	Err        error

	// bash: Dir is the working directory with symlinks resolved (the cwd
	// argument against Root, or RealRoot without one), DirPath the same
	// before resolving (for messages). Shell is the command analysis run
	// in Dir with its targets resolved.
	Dir, DirPath string
	Shell        *approvals.Analysis

	// Changes are the real paths the call creates, modifies or deletes as
	// far as known before it runs (checkpoints record them first).
	Changes []string
}

// ErrSymlinkLoop is returned (wrapped) for paths with too many symlinks.
var ErrSymlinkLoop = errors.New("too many levels of symbolic links")

// maxSymlinks is where real path resolution gives up (Linux' limit).
const maxSymlinks = 40

// pathTools take a path argument (default: the session directory).
var pathTools = map[string]bool{NameRead: true, NameWrite: true, NameEdit: true, NameGrep: true, NameGlob: true, NameLs: true}

// Resolve computes the interpretation of one call of tool with args in
// env. It reads the file system (lstat and readlink) but changes nothing.
// Arguments it cannot decode leave the fields empty: the verdict then
// judges the input lexically and the tool reports the problem.
func Resolve(tool string, args json.RawMessage, env *Env) *Resolved {
	if env == nil {
		env = &Env{}
	}
	r := &Resolved{Tool: tool, Root: env.cwd(), Home: env.home()}
	r.RealRoot = realOr(r.Root)
	if r.Home != "" {
		r.RealHome = realOr(r.Home)
	}
	switch {
	case tool == NameBash:
		r.resolveBash(args, env)
	case pathTools[tool]:
		var a struct {
			Path *string `json:"path"`
		}
		if json.Unmarshal(args, &a) != nil {
			return r
		}
		p := "."
		if a.Path != nil && *a.Path != "" {
			p = *a.Path
		}
		r.HasPath = true
		r.Path = env.Abs(p)
		r.Real, r.Err = realPath(env.absRaw(p))
		if r.Err == nil && (tool == NameWrite || tool == NameEdit) {
			r.Changes = []string{r.Real}
		}
	}
	return r
}

// Target is the file a call of a file tool names: its path argument made
// absolute (Env.Abs, as Resolved.Path); "" for other tools and for a call
// naming no path. It reads nothing (the call's announcement, before its
// PreToolUse hook and Resolve, shows it).
func (e *Env) Target(tool string, args json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	if !pathTools[tool] || json.Unmarshal(args, &a) != nil || a.Path == "" {
		return ""
	}
	return e.Abs(a.Path)
}

func (r *Resolved) resolveBash(args json.RawMessage, env *Env) {
	var a struct {
		Command *string `json:"command"`
		Cwd     *string `json:"cwd"`
	}
	if json.Unmarshal(args, &a) != nil || a.Command == nil {
		return
	}
	r.DirPath, r.Dir = r.Root, r.RealRoot
	if a.Cwd != nil && *a.Cwd != "" {
		r.DirPath = env.Abs(*a.Cwd)
		d, err := realPath(env.absRaw(*a.Cwd))
		if err != nil {
			d = "" // unknown: every relative path of the command is dynamic
		}
		r.Dir = d
	}
	sh := approvals.AnalyzeShellIn(*a.Command, r.Dir, r.RealRoot, r.RealHome)
	if sh.Parsed() {
		real := map[string]string{}
		for _, p := range sh.PathsToResolve() {
			if rp, err := realPath(p); err == nil {
				real[p] = rp
			}
		}
		sh = sh.WithRealPaths(real)
		sh = sh.WithLinks(scanLinks(sh.LinkScans()))
		risk, aliases := map[string]string{}, map[string][]string{}
		for _, d := range sh.GitDirs() {
			why, names := gitConfigRisk(realOr(d))
			if why != "" {
				risk[d] = why
			}
			if len(names) > 0 {
				aliases[d] = names
			}
		}
		sh = sh.WithGitRisk(risk, aliases)
	}
	r.Shell = sh
	for _, p := range append(sh.WriteTargets(), sh.DeleteTargets()...) {
		if !slices.Contains(r.Changes, p) {
			r.Changes = append(r.Changes, p)
		}
	}
}

// Facts is what the verdict needs from r (nil for tools without paths or
// commands).
func (r *Resolved) Facts() *approvals.Facts {
	if r == nil || (!r.HasPath && r.Shell == nil) {
		return nil
	}
	f := &approvals.Facts{Root: r.RealRoot, Home: r.RealHome, Shell: r.Shell}
	if r.HasPath {
		f.Path = r.Real
		if r.Err != nil {
			f.Path, f.PathErr = "", r.Err.Error()
		}
	}
	return f
}

// realOr is realPath, or p itself when it cannot be resolved.
func realOr(p string) string {
	if rp, err := realPath(p); err == nil {
		return rp
	}
	return filepath.Clean(p)
}

// realPath resolves the symlinks of the absolute path p component by
// component, as the kernel does when the call runs: ".." after a symlink
// goes to the parent of the link's target. Once a component does not exist
// (or cannot be looked at), the rest is appended as written and cleaned:
// the call creates it, or fails on it. The result is absolute and clean.
//
// Written here rather than using filepath.EvalSymlinks, which fails on
// paths that do not exist yet (every new file a write creates) and cleans
// lexically first ("link/../x" becomes "x").
func realPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("not an absolute path: %q", p)
	}
	cur, rest, links := "/", p, 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(next, rest), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", fmt.Errorf("%s: %w", p, ErrSymlinkLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(next, rest), nil
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		if rest != "" {
			target += "/" + rest
		}
		rest = target
	}
	return cur, nil
}

// home is the home directory for "~" (Env.Home, else the process's).
func (e *Env) home() string {
	if e != nil && e.Home != "" {
		return filepath.Clean(e.Home)
	}
	h, _ := os.UserHomeDir()
	return h
}

// absRaw is Abs without cleaning: the joined path, for realPath.
func (e *Env) absRaw(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home := e.home(); home != "" {
			p = home + p[1:]
		}
	}
	if !filepath.IsAbs(p) {
		p = e.cwd() + string(filepath.Separator) + p
	}
	return p
}

// resolution returns the call's Resolved when it was made for this tool,
// else resolves the call now (tools run without the session's runner).
func (c *Call) resolution(tool string) *Resolved {
	if c.Resolved != nil && c.Resolved.Tool == tool {
		return c.Resolved
	}
	return Resolve(tool, c.Args, c.env())
}

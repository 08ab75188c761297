package approvals

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Limits of the shell analyser. Anything beyond them fails closed.
const (
	// MaxCommandBytes is the largest command that is analysed at all.
	MaxCommandBytes = 1 << 20
	// MaxNesting is the deepest allowed layer of nested scripts (sh -c,
	// eval, xargs, find -exec, ...). `eval eval eval ls` reaches it exactly.
	MaxNesting    = 3
	maxSegments   = 4096
	maxWords      = 16384
	maxRecursion  = 200
	maxFindRoots  = 8
	maxLayerTexts = 64
	// maxBracketDepth bounds the nesting of brackets handed to the parser.
	maxBracketDepth = 512
	// maxOperatorChain bounds unbracketed operator chains (see operatorChain).
	maxOperatorChain = 4096
)

// Errors recorded in Analysis.Err.
var (
	ErrUnanalyzable = errors.New("command cannot be analysed")
	errTooLarge     = fmt.Errorf("%w: larger than %d bytes", ErrUnanalyzable, MaxCommandBytes)
	errTooComplex   = fmt.Errorf("%w: too many commands or too deeply nested", ErrUnanalyzable)
	errTooDeep      = fmt.Errorf("%w: brackets nested more than %d deep", ErrUnanalyzable, maxBracketDepth)
	errTooChained   = fmt.Errorf("%w: operators chained more than %d deep", ErrUnanalyzable, maxOperatorChain)
)

// Analysis is what the shell analyser found in one bash command. It is
// immutable once AnalyzeShell returns.
type Analysis struct {
	Command string // the command as given
	Cwd     string // the project root (what "inside the project" means)
	Dir     string // directory the command starts in (the bash cwd argument; Cwd by default)
	Home    string // HOME used for ~ and $HOME

	// Err is set when the command could not be analysed (syntax error,
	// oversized input, internal error). Such a command is never allowed
	// silently.
	Err error
	// Segments are all simple commands found, outer ones and nested ones,
	// in source order (a nested layer follows the command that starts it).
	Segments []Segment
	// Writes, Deletes and Inputs are the files the command writes (redirects
	// and operands), deletes, and reads through input redirects.
	Writes  []Target
	Deletes []Target
	Inputs  []Target
	// Subst reports a command or process substitution anywhere.
	Subst bool
	// Compound reports structure beyond plain lists and pipelines:
	// subshells, groups, if/while/for/case, functions, negation,
	// background jobs, [[ ]], (( )), coprocesses.
	Compound bool
	// TooDeep reports nested scripts beyond MaxNesting layers.
	TooDeep bool
	// Depth is the deepest nested layer that was analysed.
	Depth int

	collapsed  string
	layerTexts []string // collapsed text of every nested script
	envTaint   string   // a code-loading variable is assigned for the rest of the script
	pipelines  []pipeline
	forkBomb   bool
	budget     int
	words      int
	danger     []DangerMatch

	// bound are the values the script gives its own variables and
	// parameters (NAME=value, arrays, declare/export/local values, for
	// and select word lists), each with the directory it is expanded in:
	// a value that names a secret is a secret reference, whatever word
	// later uses the variable ("$F", ${a[0]}, "$f"), so auto's rule tier
	// judges it like an argument.
	bound []boundWord

	literal       bool // this analyses a string literal of interpreter code (see interp.go)
	literalChecks int  // string literals of interpreter code checked so far

	// real maps joined, uncleaned paths (see PathsToResolve) to what they
	// resolve to on disk; set by WithRealPaths.
	real map[string]string
	// gitRisk maps directories whose repository configuration runs
	// programs to the reason; set by WithGitRisk.
	gitRisk map[string]string
	// gitAliases maps directories to their repository's alias names; set
	// by WithGitRisk.
	gitAliases map[string][]string
	// links holds what the LinkScans found (nil: no scan was made, the
	// text alone is judged); set by WithLinks.
	links map[LinkScan]LinkReach
}

// Segment is one simple command.
type Segment struct {
	Text     string   // as written (white space collapsed), with its redirects
	Name     string   // normalised command name: lower-case base name after wrappers; "" when nothing runs
	Args     []string // arguments after Name, quotes removed, $HOME/$PWD/~ expanded
	Depth    int      // nested layer: 0 for the command itself
	InSubst  bool     // runs inside $( ), backticks, <( ) or >( )
	Dynamic  bool     // some word is only known at run time
	Wrappers []string // wrappers removed in front of Name (env, nice, sudo, ...)
	Assigns  []string // NAME=value assignments for this command (prefix and env)

	args        []arg
	plainName   bool      // command word is a bare lower-case name or lives in a system bin directory
	dir         string    // directory relative paths resolve against ("" = unknown)
	spawns      bool      // starts a nested layer
	opaque      string    // the code it runs is only known at run time
	runtimeArgs bool      // gets more arguments at run time (xargs)
	virtual     bool      // built from another command's arguments (xargs, find -exec)
	fileOut     bool      // has an output redirect into a file
	substSegs   []int     // segments inside substitutions in its own words
	stdinScript bool      // a shell that reads its script from standard input
	level       int       // substitution nesting level it runs at
	stdinText   string    // here-document or here-string text fed to it (cut)
	stdin       *stdinSrc // what it reads on standard input (nil: nothing to judge)
	netIn       bool      // reads code from a network connection (/dev/tcp)
	dollar      bool      // some word uses a $-form (even a resolved $HOME)
	envCleared  string    // env -i / -u removed variables (also the protections of the bash tool's environment)
}

// Target is a path a command writes, deletes or reads.
type Target struct {
	Path    string // absolute and cleaned; "" when Dynamic
	Raw     string // as written
	Dynamic bool   // depends on run-time values or an unknown directory
	Op      string // how: ">", ">>", "&>", ">|", "tee", "cp", "rm", "<", ...
	Segment int    // index into Segments; -1 for redirects of compound commands

	// joined is the path joined to its directory but not cleaned: "a/../b"
	// is only "b" when a is not a symlink, so the resolver needs it.
	joined string
}

// AnalyzeShell parses a bash command with mvdan.cc/sh and collects what it
// runs, writes and deletes. cwd and home must be absolute; paths are only
// resolved lexically. It never panics: internal errors end up in Err.
func AnalyzeShell(command, cwd, home string) *Analysis {
	return AnalyzeShellIn(command, cwd, cwd, home)
}

// AnalyzeShellIn is AnalyzeShell for a command that starts in dir (the bash
// tool's cwd argument, resolved) of the project rooted at root. An unknown
// dir ("") makes every relative path dynamic.
func AnalyzeShellIn(command, dir, root, home string) (a *Analysis) {
	a = &Analysis{Command: command, Cwd: cleanDir(root), Dir: cleanDir(dir), Home: cleanDir(home)}
	defer func() {
		if r := recover(); r != nil {
			a.Err = fmt.Errorf("%w: internal error: %v", ErrUnanalyzable, r)
		}
	}()
	if len(command) > MaxCommandBytes {
		a.Err = errTooLarge
		return a
	}
	a.collapsed = collapseSpace(command)
	if !utf8.ValidString(command) || strings.IndexByte(command, 0) >= 0 {
		a.Err = fmt.Errorf("%w: invalid characters", ErrUnanalyzable)
		return a
	}
	w := &walker{a: a, src: command, dir: a.Dir}
	if err := w.script(command); err != nil {
		a.Err = err
		return a
	}
	a.throughLinks()
	a.findDanger()
	return a
}

// Parsed reports whether the command was understood completely.
func (a *Analysis) Parsed() bool { return a.Err == nil }

// Empty reports a command without anything to run.
func (a *Analysis) Empty() bool {
	return a.Err == nil && len(a.Segments) == 0 && len(a.Writes) == 0
}

// Collapsed is the command with white space collapsed.
func (a *Analysis) Collapsed() string { return a.collapsed }

// Dynamic reports whether any word is only known at run time.
func (a *Analysis) Dynamic() bool {
	for i := range a.Segments {
		if a.Segments[i].Dynamic {
			return true
		}
	}
	return false
}

// WriteTargets returns the resolved absolute paths the command writes
// (redirects, tee, cp/mv/... operands), without output devices, each once.
func (a *Analysis) WriteTargets() []string { return targetPaths(a.Writes) }

// DeleteTargets returns the resolved absolute paths the command deletes.
func (a *Analysis) DeleteTargets() []string { return targetPaths(a.Deletes) }

func targetPaths(ts []Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range ts {
		if t.Dynamic || isDeviceSink(t.Path) || seen[t.Path] {
			continue
		}
		seen[t.Path] = true
		out = append(out, t.Path)
	}
	return out
}

// maxResolvePaths bounds the paths PathsToResolve returns.
const maxResolvePaths = 512

// PathsToResolve lists the paths the caller should look up on disk and hand
// back through WithRealPaths: every write, delete and input target and
// every argument that could name a file, joined to its directory but not
// cleaned (only the file system knows what "link/.." is). Each appears
// once; at most maxResolvePaths.
func (a *Analysis) PathsToResolve() []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && p[0] == '/' && !seen[p] && len(out) < maxResolvePaths {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, list := range [...][]Target{a.Writes, a.Deletes, a.Inputs} {
		for _, t := range list {
			if t.Dynamic {
				continue
			}
			if parent, _, ok := t.unfollowed(); ok {
				add(parent)
				continue
			}
			add(t.joined)
		}
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.dir != "" {
			// The directory the segment runs in (after cd): the default
			// root of a walk, where git finds its repository.
			add(joinRaw(s.dir, "."))
		}
		for _, x := range s.args {
			if v := pathArgValue(x); v != "" {
				add(joinRaw(s.dir, v))
			}
			if v, ok := argWord(x); ok {
				for _, tok := range codePathTokens(v) {
					add(joinRaw(s.dir, tok))
				}
			}
		}
	}
	for _, b := range a.bound {
		if v := pathArgValue(b.x); v != "" {
			add(joinRaw(b.dir, v))
		}
	}
	return out
}

// boundWord is a value the script binds to a variable (see
// Analysis.bound) with the directory it is expanded in.
type boundWord struct {
	x   arg
	dir string
}

// pathArgValue is argWord without globs and URLs ("" then).
func pathArgValue(x arg) string {
	v, ok := argWord(x)
	if !ok || v == "" || v == "-" || strings.Contains(v, "://") || strings.ContainsAny(v, "*?[") {
		return ""
	}
	return v
}

// argWord is the part of a static argument that may name a file: the
// word, or the value of --opt=value; false for a dynamic word and an
// option without "=".
func argWord(x arg) (string, bool) {
	if x.dyn {
		return "", false
	}
	if strings.HasPrefix(x.val, "-") {
		_, val, ok := strings.Cut(x.val, "=")
		return val, ok
	}
	return x.val, true
}

// WithRealPaths returns a copy of a that judges what is on disk: every
// target whose joined path is in real gets the resolved path instead of the
// lexical one, the arguments are checked as secrets under their resolved
// names too, and the dangerous list is computed again. real maps the paths
// of PathsToResolve to absolute, cleaned, symlink-free paths (the caller did
// the I/O; this does none). a is not changed.
func (a *Analysis) WithRealPaths(real map[string]string) *Analysis {
	if a == nil || len(real) == 0 || a.Err != nil {
		return a
	}
	b := *a
	b.real = real
	fix := func(ts []Target) []Target {
		out := append([]Target(nil), ts...)
		for i := range out {
			t := &out[i]
			if t.Dynamic {
				continue
			}
			if parent, base, ok := t.unfollowed(); ok {
				if r, ok := real[parent]; ok {
					t.Path = path.Join(r, base)
				}
				continue
			}
			if r, ok := real[t.joined]; ok {
				t.Path = r
			}
		}
		return out
	}
	b.Writes, b.Deletes, b.Inputs = fix(a.Writes), fix(a.Deletes), fix(a.Inputs)
	b.danger, b.literalChecks = nil, 0
	b.findDanger()
	b.linkedDeleteDanger(a.Deletes)
	return &b
}

// unfollowed reports targets whose last component the command does not
// follow when it is a symlink (rm removes the link, not its target): only
// their directory is resolved. A trailing slash follows the link.
func (t *Target) unfollowed() (parent, base string, ok bool) {
	switch t.Op {
	case "rm", "rmdir", "unlink", "srm":
	default:
		return "", "", false
	}
	i := strings.LastIndexByte(t.joined, '/')
	if i <= 0 || i == len(t.joined)-1 {
		return "", "", false
	}
	base = t.joined[i+1:]
	if base == "." || base == ".." {
		return "", "", false
	}
	return t.joined[:i], base, true
}

// linkedDeleteDanger reports recursive deletions that reach, through a
// symlink, what the lexical check let pass (rm -rf build/ with build ->
// HOME). lexical are the deletes before resolution.
func (a *Analysis) linkedDeleteDanger(lexical []Target) {
	for i, t := range a.Deletes {
		if t.Dynamic || i >= len(lexical) || t.Path == lexical[i].Path || t.Segment < 0 || t.Segment >= len(a.Segments) {
			continue
		}
		s := &a.Segments[t.Segment]
		if !shortCluster(s.Args, "rR") && !longOpt(s.Args, "--recursive", 3) {
			continue
		}
		if r := systemDeleteReason(t.Path, a.Cwd, a.Home); r != "" {
			a.addDanger(DangerRmSystem, "recursively deletes "+r+" ("+t.Raw+" resolves to "+t.Path+")")
		}
	}
}

// realArg returns the resolved name of an argument, or "" when it was not
// looked up.
func (a *Analysis) realArg(s *Segment, v string) string {
	if a.real == nil {
		return ""
	}
	return a.real[joinRaw(s.dir, v)]
}

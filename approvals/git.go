package approvals

import (
	"slices"
	"strings"
)

// gitCmd is a git command line split the way git parses it: global
// options, the subcommand and its arguments.
type gitCmd struct {
	globals parsedArgs
	sub     string
	rest    []arg
}

// parseGit splits git's arguments.
func parseGit(args []arg) gitCmd {
	g := gitCmd{globals: gitGlobal.parse(args)}
	if ops := g.globals.operands; len(ops) > 0 && !ops[0].dyn {
		g.sub, g.rest = ops[0].val, ops[1:]
	}
	return g
}

// gitSplit separates git's global options from the subcommand and its
// arguments (as strings).
func gitSplit(args []string) (globals []string, sub string, rest []string) {
	g := parseGit(argsOf(args))
	if g.sub == "" {
		return args, "", nil
	}
	restS := make([]string, len(g.rest))
	for i, r := range g.rest {
		restS[i] = r.val
	}
	return args[:len(args)-len(g.rest)-1], g.sub, restS
}

// gitDirInside reports that git runs in the project: the directory it
// starts in and every -C of the global options lead inside it (a repository elsewhere brings its own
// configuration, which may run programs).
//
// Both are judged where they lead (WithRealPaths): a directory of the
// project that is a link to a repository elsewhere (cd vendor/dots && git
// log -p, git -C vendor/dots log) is outside. With resolved paths, a -C
// that was not looked up (one after another) counts as outside.
func (a *Analysis) gitDirInside(g gitCmd, s *Segment) bool {
	return a.gitDirInsideAs(g, s, a.real)
}

// gitLinkedOut says why a git whose directories lie in the project by
// their text runs in a repository elsewhere through a link, or returns "":
// the text is all the classifier sees, so the rule tier asks.
func (a *Analysis) gitLinkedOut(s *Segment) string {
	if s.Name != "git" || a.real == nil {
		return ""
	}
	g := parseGit(s.args)
	if a.gitDirInsideAs(g, s, nil) && !a.gitDirInsideAs(g, s, a.real) {
		return "runs git in a repository outside the project through a link (" + s.Text + ")"
	}
	return ""
}

// gitDirInsideAs is gitDirInside judging with the resolved paths real
// (nil: the text).
func (a *Analysis) gitDirInsideAs(g gitCmd, s *Segment, real map[string]string) bool {
	dir := s.dir
	if rd := real[joinRaw(s.dir, ".")]; rd != "" {
		dir = rd
	}
	if dir == "" || a.Cwd == "" || !within(dir, a.Cwd) {
		return false // cd'd outside the project, or somewhere unknown
	}
	lex := s.dir
	for _, o := range g.globals.opts {
		if o.def == nil || o.def.name != "-C" {
			continue
		}
		if !o.hasVal || o.val.dyn {
			return false
		}
		p, ok := joinPath(dir, o.val.val)
		if real != nil {
			rp, found := real[joinRaw(lex, o.val.val)]
			if !found || lex != s.dir {
				return false
			}
			p, lex = rp, ""
		}
		if !ok || a.Cwd == "" || !within(p, a.Cwd) {
			return false
		}
		dir = p
	}
	return true
}

// gitTLSOff reports `-c http.sslVerify=false` style global options.
func gitTLSOff(globals []string) bool {
	for i := 0; i+1 < len(globals); i++ {
		if globals[i] != "-c" {
			continue
		}
		k, v, _ := strings.Cut(globals[i+1], "=")
		if isSSLVerifyKey(k) && isFalseWord(v) {
			return true
		}
	}
	return false
}

func isSSLVerifyKey(k string) bool {
	k = strings.ToLower(k)
	return strings.HasPrefix(k, "http.") && strings.HasSuffix(k, ".sslverify")
}

func isFalseWord(v string) bool {
	switch strings.ToLower(v) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}

// gitBranchListing reports a `git branch` that only lists branches.
func gitBranchListing(rest []arg) bool {
	p, ok := optsSafe(gitBranchTable, rest)
	if !ok {
		return false
	}
	// `git branch NAME` creates a branch; patterns need a listing option.
	return len(p.operands) == 0 || p.has("--list", "--all", "--remotes")
}

// gitReadSafe reports the read-only git invocations of the safe lists:
// plain global options (-C only into the project), a read-only
// subcommand, and none of its options that write or run programs.
func (a *Analysis) gitReadSafe(s *Segment) bool {
	if a.gitRisk[s.dir] != "" {
		return false // the repository's configuration runs programs
	}
	g := parseGit(s.args)
	if g.globals.unsafe(gitGlobal) != "" || !a.gitDirInside(g, s) {
		return false
	}
	switch g.sub {
	case "status", "rev-parse", "blame", "ls-files", "diff", "log", "show":
		_, ok := optsSafe(gitSubTable(g.sub), g.rest)
		return ok
	case "branch":
		return gitBranchListing(g.rest)
	}
	return false
}

// GitDirs are the directories git runs in, for the caller to check the
// repositories' configuration (WithGitRisk); "" (unknown) is left out.
func (a *Analysis) GitDirs() []string {
	var out []string
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.Name == "git" && s.dir != "" && !slices.Contains(out, s.dir) {
			out = append(out, s.dir)
		}
	}
	return out
}

// WithGitRisk returns a copy of the analysis that knows which of its git
// directories (GitDirs) belong to a repository whose configuration makes
// read-only git run programs (diff.external, diff.*.textconv or .command,
// filter.*, gpg programs, log.showSignature, includes): git there is not
// read-only, and auto's rule tier asks. risk maps a directory to the
// reason; aliases maps a directory to its repository's alias names, and
// git running one of those asks in auto too (an alias runs what the
// repository says; the classifier sees only its name).
func (a *Analysis) WithGitRisk(risk map[string]string, aliases map[string][]string) *Analysis {
	if a == nil || (len(risk) == 0 && len(aliases) == 0) {
		return a
	}
	b := *a
	b.gitRisk, b.gitAliases = risk, aliases
	return &b
}

// gitConfigReason says why auto's rule tier asks about the git command s
// because of its repository's configuration, or "".
func (a *Analysis) gitConfigReason(s *Segment) string {
	if s.Name != "git" {
		return ""
	}
	if r := a.gitRisk[s.dir]; r != "" {
		return "git runs a program its repository's configuration names (" + r + ")"
	}
	if sub := parseGit(s.args).sub; sub != "" && slices.Contains(a.gitAliases[s.dir], strings.ToLower(sub)) {
		return "git runs the repository's alias " + sub + " (what it does is the repository's configuration)"
	}
	return ""
}

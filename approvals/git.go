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
	g := parseGit(s.args)
	if where := a.gitWhere(s, g); where == "" || a.gitRisk[where] != "" || a.gitElsewhere(s, g) != "" {
		return false // the repository's configuration runs programs, or was not read
	}
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

// GitDirs are the directories git starts looking for its repository in
// (s's directory after each -C, gitWhere), for the caller to check the
// repositories' configuration (WithGitRisk); "" (unknown) is left out.
func (a *Analysis) GitDirs() []string {
	var out []string
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.Name != "git" {
			continue
		}
		if d := a.gitWhere(s, parseGit(s.args)); d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// gitWhere is the directory git starts looking for its repository in: the
// segment's directory after each -C of the global options, resolved where
// the paths were looked up (WithRealPaths), or "" when it is only known at
// run time. The configuration checked (WithGitRisk) is keyed by it: git
// -C sub diff reads sub's repository, not the project's.
func (a *Analysis) gitWhere(s *Segment, g gitCmd) string {
	dir := s.dir
	if rd := a.real[joinRaw(s.dir, ".")]; rd != "" {
		dir = rd
	}
	if dir == "" {
		return ""
	}
	lex := s.dir
	for _, o := range g.globals.opts {
		if o.def == nil || o.def.name != "-C" {
			continue
		}
		if !o.hasVal || o.val.dyn {
			return ""
		}
		if rp, found := a.real[joinRaw(lex, o.val.val)]; found && lex == s.dir {
			dir, lex = rp, ""
			continue
		}
		p, ok := joinPath(dir, o.val.val)
		if !ok {
			return ""
		}
		dir, lex = p, ""
	}
	return dir
}

// gitElsewhere says why git reads configuration, or runs commands, from
// somewhere the scan of its repository (gitConfigRisk in tools) does not
// read, or returns "": a repository named by --git-dir or GIT_DIR, an
// include (-c include.path=…), a configuration file named by GIT_CONFIG_*
// (or HOME, XDG_CONFIG_HOME: ~/.gitconfig, $XDG_CONFIG_HOME/git/config), the
// program directory (--exec-path, GIT_EXEC_PATH), a value taken from a
// variable (--config-env), or the bash tool's forced settings (GIT_CONFIG_*
// pairs that turn core.fsmonitor and core.pager off) removed or replaced
// (env -i/-u, unset, GIT_CONFIG_COUNT=0). Any assignment of the command
// counts, not only this segment's (export, or HOME=… before git).
func (a *Analysis) gitElsewhere(s *Segment, g gitCmd) string {
	for _, o := range g.globals.opts {
		if o.def == nil {
			continue
		}
		switch o.def.name {
		case "--git-dir", "--exec-path", "--config-env":
			return o.def.name
		case "-c":
			if k, _, _ := strings.Cut(strings.ToLower(o.val.val), "="); o.val.dyn || strings.HasPrefix(k, "include") {
				return "-c " + o.val.raw
			}
		}
	}
	if s.envCleared != "" {
		return s.envCleared
	}
	for i := range a.Segments {
		t := &a.Segments[i]
		for _, as := range t.Assigns {
			if name, val, _ := strings.Cut(as, "="); gitConfigVar(name, val) {
				return name
			}
		}
		if t.Name == "unset" || t.Name == "env" {
			for _, x := range t.args {
				if strings.HasPrefix(x.val, "GIT_CONFIG") || x.dyn {
					return t.Name + " " + x.raw
				}
			}
		}
	}
	return ""
}

// gitConfigVar reports an environment variable whose value val makes git
// read configuration or a repository other than its own, or drops the bash
// tool's forced settings.
func gitConfigVar(name, val string) bool {
	switch name {
	case "GIT_DIR", "GIT_COMMON_DIR", "GIT_EXEC_PATH", "HOME", "XDG_CONFIG_HOME":
		return true
	case "GIT_CONFIG_NOSYSTEM":
		return false
	case "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM":
		return val != "/dev/null" && val != "'/dev/null'" && val != `"/dev/null"`
	}
	return strings.HasPrefix(name, "GIT_CONFIG")
}

// gitCommands are git's own commands (git help -a, git 2.39-2.47, and
// the common helpers). In a repository with aliases another name may run
// one: help.autocorrect (the user's setting) runs the alias closest to a
// mistyped name, so git running a name that is not one of these asks there.
var gitCommands = strings.Fields(`add am annotate apply archimport archive bisect blame branch bugreport bundle
	cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
	citool clean clone column commit commit-graph commit-tree config count-objects credential credential-cache
	credential-store cvsexportcommit cvsimport cvsserver daemon describe diagnose diff diff-files diff-index
	diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref
	for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id grep gui hash-object
	help hook http-backend http-fetch http-push imap-send index-pack init init-db instaweb interpret-trailers
	log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index
	merge-one-file merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes p4 pack-objects
	pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport range-diff read-tree rebase
	receive-pack reflog refs remote remote-ext remote-fd remote-http remote-https repack replace replay
	request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack sh-i18n sh-setup
	shell shortlog show show-branch show-index show-ref sparse-checkout stage stash status stripspace
	submodule svn switch symbolic-ref tag unpack-file unpack-objects update-index update-ref
	update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag version web--browse
	whatchanged worktree write-tree lfs`)

// gitConfigReason says why auto's rule tier asks about the git command s
// because of its repository's configuration, or "": the repository's
// configuration runs a program, git runs one of its aliases (or a name
// that may reach one), or the configuration git reads is not the one
// that was scanned.
func (a *Analysis) gitConfigReason(s *Segment) string {
	if s.Name != "git" {
		return ""
	}
	g := parseGit(s.args)
	if r := a.gitElsewhere(s, g); r != "" {
		return "git reads configuration that was not checked (" + r + "), which may run programs"
	}
	where := a.gitWhere(s, g)
	if where == "" {
		return "git runs in a directory only known at run time (its repository's configuration was not checked)"
	}
	if r := a.gitRisk[where]; r != "" {
		return "git runs a program its repository's configuration names (" + r + ")"
	}
	aliases := a.gitAliases[where]
	if len(aliases) == 0 {
		return ""
	}
	ops, sub := g.globals.operands, strings.ToLower(g.sub)
	for _, o := range g.globals.opts {
		if k, _, _ := strings.Cut(strings.ToLower(o.val.val), "="); o.def != nil && o.def.name == "-c" && sub != "" && k == "alias."+sub {
			return "" // the alias is the command's own (-c alias.x=…), shown to the classifier
		}
	}
	switch {
	case len(ops) > 0 && ops[0].dyn, len(ops) == 0 && s.runtimeArgs:
		return "git's subcommand is only known at run time, in a repository with aliases"
	case slices.Contains(aliases, sub):
		return "git runs the repository's alias " + g.sub + " (what it does is the repository's configuration)"
	case sub != "" && !slices.Contains(gitCommands, sub):
		return "git " + g.sub + " is not one of git's commands; in a repository with aliases git may run one in its place (help.autocorrect)"
	}
	return ""
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

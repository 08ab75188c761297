package approvals

import (
	"slices"
	"strings"
)

// The static lists: auto mode's safe list (commands allowed without the
// classifier) and the narrower read-only list of plan and allowlist modes.

// codeLoadingVars are environment variables that make programs load or run
// other code (lesson 8). Assigning one disqualifies a command from "safe".
var codeLoadingVars = map[string]bool{
	"PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true, "BASH_ENV": true, "ENV": true,
	"PROMPT_COMMAND": true, "PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "PATH": true,
	"CDPATH": true, "HOME": true, "ZDOTDIR": true, "XDG_CONFIG_HOME": true, "NODE_OPTIONS": true,
	"NODE_PATH": true, "PERL5LIB": true, "PERL5OPT": true, "PERLLIB": true, "RUBYOPT": true, "RUBYLIB": true,
	"LESSOPEN": true, "LESSCLOSE": true, "LESSKEY": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true,
	"RIPGREP_CONFIG_PATH": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
	"GOFLAGS": true, "GOTOOLCHAIN": true, "GOENV": true, "RUSTC_WRAPPER": true, "RUSTC": true,
	"MAKEFLAGS": true, "TAR_OPTIONS": true, "GREP_OPTIONS": true, "BROWSER": true, "TERMINAL": true,
}

var codeLoadingPrefixes = []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "CARGO_", "PYTHON"}

// isCodeLoadingVar reports variables from codeLoadingVars and the
// code-loading families (LD_*, DYLD_*, GIT_*, ...).
func isCodeLoadingVar(name string) bool {
	up := strings.ToUpper(name)
	if codeLoadingVars[up] {
		return true
	}
	for _, p := range codeLoadingPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// safeWrappers are the wrappers the safe list looks through (sudo and the
// like are never looked through).
var safeWrappers = []string{"command", "exec", "nohup", "time", "env", "builtin", "nice", "timeout"}

// AutoSafe reports whether auto mode's static tier allows the command
// without the classifier: it passes the rule tier and every segment is on
// the safe list (extended by the user's autoSafeCommands entries).
func (a *Analysis) AutoSafe(extra []string) bool {
	return a.RuleTierReason() == "" && a.staticSafe(extra, false) == ""
}

// ReadOnly reports whether the command only reads (the list shared by plan
// and allowlist modes): on the read-only list, no writes except the output
// devices, no nesting, no assignments or wrappers, nothing the rule tier
// objects to.
func (a *Analysis) ReadOnly() bool {
	if a.staticSafe(nil, true) != "" || a.RuleTierReason() != "" {
		return false
	}
	for _, t := range a.Writes {
		if t.Dynamic || !isDeviceSink(t.Path) {
			return false
		}
	}
	return true
}

// staticSafe returns "" when every segment is on the list, or why not.
func (a *Analysis) staticSafe(extra []string, readOnly bool) string {
	switch {
	case a.Err != nil:
		return "the command could not be analysed"
	case len(a.Segments) == 0:
		return "empty command"
	case a.TooDeep:
		return "nested too deep"
	case a.Subst:
		return "contains a command or process substitution"
	case a.Compound:
		return "uses subshells, groups, conditionals, loops, functions or background jobs"
	case a.envTaint != "":
		return "sets " + a.envTaint + ", which makes programs load other code"
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		switch {
		case s.Depth > 0 || s.spawns || s.opaque != "":
			return "runs a nested command"
		case s.Dynamic || s.dollar:
			return "uses variable expansion"
		case s.Name == "" || !s.plainName:
			return "not a plain command name"
		case dotfileGlob(s):
			return "a glob that may match dotfiles"
		}
		for _, as := range s.Assigns {
			name, _, _ := strings.Cut(as, "=")
			if isCodeLoadingVar(name) {
				return "sets " + name + ", which makes programs load other code"
			}
		}
		for _, wr := range s.Wrappers {
			if !slices.Contains(safeWrappers, wr) {
				return wr + " is never safe"
			}
		}
		if readOnly && (len(s.Assigns) > 0 || len(s.Wrappers) > 0) {
			return "starts with an assignment or a wrapper"
		}
		if readOnly {
			if !readOnlyCommand(s) {
				return s.Name + " is not on the read-only list"
			}
			continue
		}
		if !autoSafeCommand(s) && !extraSafe(s, extra) {
			return s.Name + " is not on the safe list"
		}
	}
	return ""
}

// dotfileGlob reports a glob word with a component that starts with a dot
// followed by something other than a dot (".e*", ".*").
func dotfileGlob(s *Segment) bool {
	for _, v := range s.Args {
		if !strings.ContainsAny(v, "*?[") {
			continue
		}
		for c := range strings.SplitSeq(v, "/") {
			if len(c) > 1 && c[0] == '.' && c[1] != '.' {
				return true
			}
		}
	}
	return false
}

// strippedText is the command without assignments and wrappers.
func strippedText(s *Segment) string {
	if len(s.Args) == 0 {
		return s.Name
	}
	return s.Name + " " + strings.Join(s.Args, " ")
}

// extraSafe matches the user's autoSafeCommands: entries without '*' are
// word prefixes, entries with '*' wildcards over the whole stripped text.
func extraSafe(s *Segment, extra []string) bool {
	if len(extra) == 0 {
		return false
	}
	text := strippedText(s)
	for _, e := range extra {
		e = collapseSpace(e)
		if e == "" || len(e) > MaxPatternLen {
			continue
		}
		if !strings.Contains(e, "*") {
			if wordPrefix(text, e) {
				return true
			}
			continue
		}
		if w, err := compileWildcard(e); err == nil && len(text) <= MaxMatchInput && w.match(text, false) {
			return true
		}
	}
	return false
}

// wordsPrefix reports whether args start with the given words.
func wordsPrefix(args []string, words ...string) bool {
	if len(args) < len(words) {
		return false
	}
	for i, w := range words {
		if args[i] != w {
			return false
		}
	}
	return true
}

// findSafe reports a find without actions that run, delete or write.
func findSafe(args []string) bool {
	return !hasPrefixed(args, "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
}

// autoSafeCommand is the auto safe list (section 7).
func autoSafeCommand(s *Segment) bool {
	args := s.Args
	switch s.Name {
	case "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "printf", "which",
		"printenv", "true", "false", "cut", "tr", "diff", "basename", "dirname", "realpath", "stat",
		"file", "du", "df", "whoami", "uname", "cd", "pushd", "popd", "env":
		if s.Name == "file" && hasPrefixed(args, "-C", "--compile") {
			return false
		}
		return s.Name != "env" || len(args) == 0
	case "rg":
		return !hasPrefixed(args, "--pre")
	case "sort":
		return !hasOpt(mustOpts(s.args, sortSpec), "-o", "--output", "--compress-program")
	case "date":
		return !hasOpt(mustOpts(s.args, optSpec{short: "dfrsI", long: []string{"--date", "--file", "--reference", "--set"}}), "-s", "--set")
	case "find":
		return findSafe(args)
	case "git":
		return gitReadSafe(args)
	case "npm", "pnpm", "yarn":
		switch {
		case wordsPrefix(args, "test"), wordsPrefix(args, "run", "test"), wordsPrefix(args, "run", "lint"),
			wordsPrefix(args, "run", "typecheck"), wordsPrefix(args, "run", "build"):
			return true
		case s.Name == "npm" && wordsPrefix(args, "t"):
			return true
		case s.Name != "npm" && (wordsPrefix(args, "lint") || wordsPrefix(args, "typecheck") || wordsPrefix(args, "build")):
			return true
		case s.Name == "pnpm" && (wordsPrefix(args, "tsc") && hasWord(args, "--noEmit") ||
			wordsPrefix(args, "vitest", "run") || wordsPrefix(args, "exec", "vitest", "run")):
			return true
		case s.Name == "yarn" && wordsPrefix(args, "vitest", "run"):
			return true
		}
	case "node":
		return wordsPrefix(args, "--test")
	case "tsc":
		return hasWord(args, "--noEmit")
	case "vitest":
		return wordsPrefix(args, "run")
	case "pytest":
		return true
	case "python", "python3":
		return wordsPrefix(args, "-m", "pytest")
	case "cargo":
		return wordsPrefix(args, "test") || wordsPrefix(args, "check") || wordsPrefix(args, "build") || wordsPrefix(args, "clippy")
	case "go":
		return wordsPrefix(args, "test") || wordsPrefix(args, "build") || wordsPrefix(args, "vet")
	case "make":
		return wordsPrefix(args, "test") || wordsPrefix(args, "check") || wordsPrefix(args, "lint") || wordsPrefix(args, "build")
	}
	return false
}

// readOnlyCommand is the read-only list (section 6).
func readOnlyCommand(s *Segment) bool {
	args := s.Args
	switch s.Name {
	case "ls", "cat", "head", "tail", "wc", "stat", "echo", "printf", "pwd", "which", "du", "basename",
		"dirname", "realpath", "true", "false", "cd", "grep", "egrep", "fgrep":
		return true
	case "tree":
		return !hasOpt(mustOpts(s.args, treeSpec), "-o")
	case "file":
		return !hasPrefixed(args, "-C", "--compile")
	case "rg":
		return !hasPrefixed(args, "--pre")
	case "fd":
		return !hasPrefixed(args, "-x", "-X", "--exec", "--exec-batch")
	case "find":
		return findSafe(args)
	case "jq":
		return !hasPrefixed(args, "-i", "--in-place")
	case "git":
		return gitReadSafe(args)
	}
	return false
}

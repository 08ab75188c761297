package approvals

import (
	"regexp"
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
func (a *Analysis) ReadOnly() bool { return a.readOnlyIn(nil) }

// readOnlyIn is ReadOnly with ama's private places (Policy.Private)
// counted as secrets.
func (a *Analysis) readOnlyIn(private []string) bool {
	if a.staticSafe(nil, true) != "" || a.ruleTier(private) != "" {
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
	for _, t := range a.Inputs {
		if t.Dynamic {
			// < "$F": what is read is only known at run time.
			return "reads a path only known at run time (" + t.Raw + ")"
		}
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
		case s.envCleared != "":
			return s.envCleared + " removes variables from the environment (also the settings that keep git from running programs)"
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
			if !a.readOnlyCommand(s) {
				return s.Name + " is not on the read-only list"
			}
			continue
		}
		if !a.autoSafeCommand(s) && !extraSafe(s, extra) {
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

// optsSafe parses args with the table and reports whether every option is
// one the table accepts.
func optsSafe(t *optTable, args []arg) (parsedArgs, bool) {
	p := t.parse(args)
	return p, p.unsafe(t) == ""
}

// operandsIn reports operands that are all among the words.
func operandsIn(ops []arg, words ...string) bool {
	for _, o := range ops {
		if o.dyn || !slices.Contains(words, o.val) {
			return false
		}
	}
	return true
}

// autoSafeCommand is the auto safe list (section 7): the read-only list
// plus build tools and test runners, each with the options it accepts.
func (a *Analysis) autoSafeCommand(s *Segment) bool {
	if a.readOnlyCommand(s) {
		return true
	}
	args := s.args
	switch s.Name {
	case "cut", "tr", "diff", "df", "whoami", "uname", "pushd", "popd":
		return true
	case "sort":
		// -o writes a file: it is a write target the rule tier judges.
		_, ok := optsSafe(sortTable, args)
		return ok
	case "date":
		p, ok := optsSafe(dateTable, args)
		// An operand that is not +FORMAT sets the clock (date MMDDhhmm).
		for _, o := range p.operands {
			if !strings.HasPrefix(o.val, "+") {
				return false
			}
		}
		return ok
	case "npm", "pnpm", "yarn":
		return a.jsRunnerSafe(s, s.Name, args)
	case "node":
		p, ok := optsSafe(nodeTestTable, args)
		// A reporter that is not built in is a module node loads; test
		// files outside the project are code the project does not own.
		return ok && p.has("--test") && builtinOnly(p.values("--test-reporter"), nodeReporters) &&
			a.allInside(s, p.operands)
	case "tsc":
		p, ok := optsSafe(tscTable, args)
		// tsc prints the lines it cannot parse: a project or file outside
		// the project is a read outside it.
		return ok && p.has("--noEmit") && a.allInside(s, p.values("--project")) && a.allInside(s, p.operands)
	case "vitest":
		return a.vitestSafe(s, args)
	case "pytest":
		p, ok := optsSafe(pytestTable, args)
		return ok && a.pytestInside(s, p)
	case "python", "python3":
		if len(args) < 2 || args[0].val != "-m" || args[1].val != "pytest" {
			return false
		}
		p, ok := optsSafe(pytestTable, args[2:])
		return ok && a.pytestInside(s, p)
	case "cargo":
		if len(args) == 0 || !slices.Contains([]string{"test", "check", "build", "clippy"}, args[0].val) {
			return false
		}
		p, ok := optsSafe(cargoTable, args[1:])
		return ok && (len(p.after) == 0 || args[0].val == "test" || args[0].val == "clippy")
	case "go":
		if len(args) == 0 {
			return false
		}
		t := goFlags
		switch args[0].val {
		case "test", "build":
		case "vet":
			t = goVetFlags
		default:
			return false
		}
		p, ok := optsSafe(t, args[1:])
		// -mod=mod lets go change go.mod and fetch what it wants; package
		// paths outside the project are code the project does not own.
		if m, has := p.value("-mod"); has && (m.dyn || m.val != "readonly" && m.val != "vendor") {
			return false
		}
		for _, o := range p.operands {
			if o.dyn || (strings.HasPrefix(o.val, ".") || strings.HasPrefix(o.val, "/")) && !a.inside(s, o) {
				return false
			}
		}
		return ok && !p.dashdash
	case "make":
		p, ok := optsSafe(makeTable, args)
		if !ok {
			return false
		}
		for _, o := range p.operands {
			// Targets of the list only; NAME=value overrides variables
			// (SHELL=…), a bare number is the value of -j.
			if o.dyn || !(slices.Contains([]string{"test", "check", "lint", "build"}, o.val) || allDigits(o.val)) {
				return false
			}
		}
		return true
	}
	return false
}

// goVetFlags also accepts the analyzers' own flags (-printf=false).
var goVetFlags = goFlags.with("").other()

// jsRunnerSafe is the npm/pnpm/yarn part of the safe list: a test, lint,
// typecheck or build script with the runner's harmless options; arguments
// after "--" go to the project's own script.
func (a *Analysis) jsRunnerSafe(s *Segment, name string, args []arg) bool {
	if name == "pnpm" && len(args) > 0 {
		switch args[0].val {
		case "tsc":
			p, ok := optsSafe(tscTable, args[1:])
			return ok && p.has("--noEmit") && a.allInside(s, p.values("--project")) && a.allInside(s, p.operands)
		case "vitest":
			return a.vitestSafe(s, args[1:])
		case "exec":
			return len(args) > 1 && args[1].val == "vitest" && a.vitestSafe(s, args[2:])
		}
	}
	if name == "yarn" && len(args) > 0 && args[0].val == "vitest" {
		return a.vitestSafe(s, args[1:])
	}
	p, ok := optsSafe(npmTable, args)
	if !ok {
		return false
	}
	ops := p.operands[:len(p.operands)-len(p.after)]
	vals := make([]string, 0, len(ops))
	for _, o := range ops {
		if o.dyn {
			return false
		}
		vals = append(vals, o.val)
	}
	switch {
	case wordsPrefix(vals, "test"), wordsPrefix(vals, "run", "test"), wordsPrefix(vals, "run", "lint"),
		wordsPrefix(vals, "run", "typecheck"), wordsPrefix(vals, "run", "build"):
		return true
	case name == "npm" && wordsPrefix(vals, "t"):
		return true
	case name != "npm" && (wordsPrefix(vals, "lint") || wordsPrefix(vals, "typecheck") || wordsPrefix(vals, "build")):
		return true
	}
	return false
}

// vitestSafe reports `vitest run` with accepted options and built-in
// reporters (any other reporter is a module vitest loads).
func (a *Analysis) vitestSafe(s *Segment, args []arg) bool {
	if len(args) == 0 || args[0].val != "run" {
		return false
	}
	p, ok := optsSafe(vitestTable, args[1:])
	return ok && builtinOnly(p.values("--reporter"), vitestReporters)
}

// Built-in reporters (node's test runner, vitest): names, not modules.
var (
	nodeReporters   = []string{"spec", "tap", "dot", "junit", "lcov"}
	vitestReporters = []string{"default", "basic", "verbose", "dot", "json", "junit", "tap", "tap-flat",
		"hanging-process", "github-actions", "tree"}
)

// builtinOnly reports option values that are all among the names.
func builtinOnly(vals []arg, names []string) bool {
	for _, v := range vals {
		if v.dyn || !slices.Contains(names, v.val) {
			return false
		}
	}
	return true
}

// inside reports a static path operand that lies in the project (also
// after symlinks, when the caller resolved them).
func (a *Analysis) inside(s *Segment, v arg) bool {
	if v.dyn || a.Cwd == "" {
		return false
	}
	p, ok := joinPath(s.dir, globBase(v.val))
	if !ok || !within(p, a.Cwd) {
		return false
	}
	if rp := a.realArg(s, globBase(v.val)); rp != "" && !within(rp, a.Cwd) {
		return false
	}
	return true
}

// allInside reports path operands that all lie in the project.
func (a *Analysis) allInside(s *Segment, vals []arg) bool {
	for _, v := range vals {
		if !a.inside(s, v) {
			return false
		}
	}
	return true
}

// pytestInside: the test paths (before "::") and report paths of
// --cov-report=KIND:PATH lie in the project.
func (a *Analysis) pytestInside(s *Segment, p parsedArgs) bool {
	for _, o := range p.operands {
		o.val, _, _ = strings.Cut(o.val, "::")
		if !a.inside(s, o) {
			return false
		}
	}
	for _, r := range p.values("--cov-report") {
		if _, out, ok := strings.Cut(r.val, ":"); r.dyn || ok && !a.inside(s, arg{val: out, raw: r.raw}) {
			return false
		}
	}
	return true
}

// readOnlyCommand is the read-only list (section 6), each entry with the
// options it accepts.
func (a *Analysis) readOnlyCommand(s *Segment) bool {
	args := s.args
	switch s.Name {
	case "ls", "cat", "head", "tail", "wc", "stat", "echo", "printf", "pwd", "which", "du", "basename",
		"dirname", "realpath", "true", "false", "cd", "grep", "egrep", "fgrep":
		// None of their options writes a file or runs a program: every
		// option is accepted (their operands are still judged as paths).
		return true
	case "tree":
		_, ok := optsSafe(treeTable, args)
		return ok
	case "file":
		_, ok := optsSafe(fileTable, args)
		return ok
	case "rg":
		_, ok := optsSafe(rgTable, args)
		return ok
	case "fd":
		_, ok := optsSafe(fdTable, args)
		return ok
	case "find":
		return findSafe(s.Args)
	case "jq":
		p, ok := optsSafe(jqTable, args)
		if !ok {
			return false
		}
		// env and $ENV print the environment (secrets). The filter is
		// not always the first operand (--arg takes two values), so every
		// word is checked.
		for _, o := range p.operands {
			if o.dyn || jqEnvRE.MatchString(o.val) {
				return false
			}
		}
		for _, o := range p.opts {
			if o.hasVal && jqEnvRE.MatchString(o.val.val) {
				return false
			}
		}
		return true
	case "git":
		return a.gitReadSafe(s)
	}
	return false
}

var jqEnvRE = regexp.MustCompile(`\$ENV\b|\benv\b`)

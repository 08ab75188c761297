package approvals

import (
	"github.com/armadra/ama-rpc/internal/secrets"
	"path"
	"slices"
	"strings"
)

// Auto mode's rule tier for bash: network, deletion, protected or unknown
// write targets and secret paths ask, whatever the allow rules say.

// alwaysNetwork are commands that reach the network whatever their
// arguments.
var alwaysNetwork = map[string]bool{
	"curl": true, "wget": true, "ssh": true, "scp": true, "sftp": true, "rsync": true, "nc": true,
	"ncat": true, "netcat": true, "telnet": true, "ftp": true, "socat": true, "aria2c": true,
	"http": true, "https": true, "gh": true, "npx": true, "bunx": true, "pnpx": true, "uvx": true,
}

// networkFirstArg maps a tool to the first arguments that download or
// upload.
var networkFirstArg = map[string][]string{
	"pip":     {"install", "download"},
	"pip3":    {"install", "download"},
	"pipx":    {"install", "run"},
	"poetry":  {"install", "add", "update"},
	"uv":      {"add", "sync", "pip"},
	"cargo":   {"install", "publish", "update", "add"},
	"gem":     {"install", "push"},
	"brew":    {"install", "upgrade", "update", "tap"},
	"apt":     {"install", "update", "upgrade"},
	"apt-get": {"install", "update", "upgrade"},
	"yum":     {"install", "update"},
	"dnf":     {"install", "update"},
	"apk":     {"add", "update"},
	"docker":  {"pull", "push", "login"},
	"podman":  {"pull", "push", "login"},
}

var jsNetworkVerbs = []string{"install", "i", "add", "ci", "update", "up", "upgrade", "publish", "dlx", "create", "login", "adduser"}

// networkReason names the network access of a command, or returns "".
func networkReason(s *Segment) string {
	name, args := s.Name, s.Args
	if alwaysNetwork[name] {
		return name
	}
	op, at := firstOperand(args, npmValued...)
	switch name {
	case "git":
		_, sub, rest := gitSplit(args)
		switch sub {
		case "push", "pull", "fetch", "clone", "ls-remote":
			return "git " + sub
		case "submodule":
			if hasWord(rest, "update", "add") {
				return "git submodule"
			}
		case "remote":
			if r, _ := firstOperand(rest); r == "update" {
				return "git remote update"
			}
		}
	case "npm", "pnpm", "yarn", "bun":
		if name == "yarn" && at < 0 {
			return "yarn (install)"
		}
		if hasWord([]string{op}, jsNetworkVerbs...) || (name == "bun" && op == "x") {
			return name + " " + op
		}
	case "python", "python3":
		for k := 0; k+2 < len(args); k++ {
			if args[k] == "-m" && (args[k+1] == "pip" || args[k+1] == "pip3") &&
				hasWord(args[k+2:], "install", "download") {
				return name + " -m pip install"
			}
		}
	case "go":
		if op == "get" || op == "install" {
			return "go " + op
		}
		if op == "mod" && at+1 < len(args) && args[at+1] == "download" {
			return "go mod download"
		}
	case "pacman":
		for _, a := range args {
			if strings.HasPrefix(a, "-S") {
				return "pacman " + a
			}
		}
	default:
		if verbs, ok := networkFirstArg[name]; ok && hasWord([]string{op}, verbs...) {
			return name + " " + op
		}
	}
	return ""
}

// deletionReason names a deleting or history-discarding command, or
// returns "".
func deletionReason(s *Segment) string {
	name, args := s.Name, s.Args
	switch name {
	case "rm":
		if p := rmTable.parse(s.args); p.has("--recursive", "--force") {
			return "rm -r/-f"
		}
	case "find":
		if hasWord(args, "-delete") {
			return "find -delete"
		}
	case "shred", "truncate", "srm":
		return name
	case "git":
		_, sub, rest := gitSplit(args)
		switch sub {
		case "clean", "restore":
			return "git " + sub
		case "checkout":
			if p := gitCheckoutTable.parse(argsOf(rest)); hasWord(rest, "--", ".") || p.has("--force", "--discard-changes") {
				return "git checkout discarding changes"
			}
		case "switch":
			if p := gitCheckoutTable.parse(argsOf(rest)); p.has("--force", "--discard-changes") {
				return "git switch discarding changes"
			}
		case "stash":
			if op, _ := firstOperand(rest); op == "drop" || op == "clear" {
				return "git stash " + op
			}
		case "reset":
			if p := gitResetTable.parse(argsOf(rest)); p.has("--hard") {
				return "git reset --hard"
			}
		}
	}
	return ""
}

// RuleTierReason returns why auto mode's rule tier asks about this command
// (a command that prints a credential, credcmds.go; network access, deletion, a protected, outside or run-time write target,
// a secret path among the arguments), or "" when nothing hits. The project
// root is the analysis' Cwd.
func (a *Analysis) RuleTierReason() string { return a.ruleTier(nil) }

// ruleTier is RuleTierReason with ama's private places (Policy.Private)
// counted as secrets.
func (a *Analysis) ruleTier(private []string) string {
	if a.Err != nil {
		return "the command could not be analysed"
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		if r := credentialReason(s); r != "" {
			return "prints a credential (" + r + ")"
		}
		if r := networkReason(s); r != "" {
			return "network access (" + r + ")"
		}
		if r := deletionReason(s); r != "" {
			return "deletes or discards data (" + r + ")"
		}
		if r := a.gitConfigReason(s); r != "" {
			return r
		}
	}
	for _, list := range [][]Target{a.Inputs, a.Writes} {
		for _, t := range list {
			if !t.Dynamic && isNetPath(t.Path) {
				return "network access (" + t.Path + ")"
			}
		}
	}
	for i := range a.Segments {
		if r := environArgReason(&a.Segments[i]); r != "" {
			return r
		}
	}
	for _, t := range a.Inputs {
		if !t.Dynamic && environPath(t.Path) {
			return "reads the environment of a process (" + t.Path + "), which holds secrets"
		}
		if t.Dynamic {
			if r := dynamicSecretReason(t.Raw); r != "" {
				return "reads " + r
			}
		}
	}
	for _, t := range a.Writes {
		if t.Dynamic {
			return "writes to a path only known at run time (" + t.Raw + ")"
		}
		if r := protectedWriteReason(t.Path, a.Cwd); r != "" {
			return r
		}
	}
	for _, b := range a.bound {
		if r := a.secretWordReason(&Segment{dir: b.dir}, b.x, private); r != "" {
			return r + " (a value the command assigns)"
		}
		if b.x.dollar {
			if n := credentialRef(b.x.raw); n != "" {
				return "prints a credential ($" + n + ")"
			}
		}
		if !b.x.dyn && credentialVarName(b.x.val) {
			// T=GITHUB_TOKEN; echo ${!T}, declare -n R=NPM_TOKEN.
			return "prints a credential (" + b.x.val + " by an indirect reference)"
		}
	}
	for i := range a.Segments {
		if r := a.secretArgReason(&a.Segments[i], private); r != "" {
			return r
		}
		if r := a.reachReason(&a.Segments[i], private); r != "" {
			return r
		}
		if r := a.gitLinkedOut(&a.Segments[i]); r != "" {
			return r
		}
	}
	for _, t := range a.Inputs {
		if !t.Dynamic {
			if r := privateSecretReason(t.Path, private); r != "" {
				return "reads " + r
			}
		}
	}
	return ""
}

// secretArgReason checks every argument (and --opt=value values) of a
// command as a path against the secret-path list.
func (a *Analysis) secretArgReason(s *Segment, private []string) string {
	for _, x := range s.args {
		if r := a.secretWordReason(s, x, private); r != "" {
			return r
		}
	}
	return ""
}

// secretWordReason judges one word of s (an argument, or a value the
// script binds, expanded in s's directory) as a path against the
// secret-path list: as written, where it resolves, the links a glob
// matches, the paths in interpreter code it holds, the known parts of a
// word only known at run time.
func (a *Analysis) secretWordReason(s *Segment, x arg, private []string) string {
	check := func(v string) string {
		if v == "" || v == "-" || strings.Contains(v, "://") {
			return ""
		}
		if strings.ContainsAny(v, "*?[") {
			if r := globSecretReason(v); r != "" {
				return r
			}
			if p, ok := joinPath(s.dir, v); ok {
				// What the glob can match, as bash matches it.
				if r := secrets.GlobMatchReason(p, a.Home, private, a.dotglob()); r != "" {
					return r
				}
			}
			return a.linkedSecretReason(s, v, private)
		}
		p, ok := joinPath(s.dir, v)
		if !ok {
			p = v
		}
		if r := privateSecretReason(p, private); r != "" {
			return "touches " + r
		}
		if rp := a.realArg(s, v); rp != "" && rp != p {
			if r := privateSecretReason(rp, private); r != "" {
				return "touches " + r + " (" + v + " resolves to " + rp + ")"
			}
		}
		return ""
	}
	if v, ok := argWord(x); ok {
		if r := check(v); r != "" {
			return r
		}
		for _, tok := range codePathTokens(v) {
			// A path in interpreter code (open('src/key.txt')) is
			// judged where it leads, as an argument is.
			if rp := a.realArg(s, tok); rp != "" {
				if r := privateSecretReason(rp, private); r != "" {
					return "touches " + r + " (" + tok + " in the code resolves to " + rp + ")"
				}
			}
		}
	} else if x.dyn {
		if r := dynamicSecretReason(x.raw); r != "" {
			return "touches " + r
		}
		if pat, ok := a.extglobPattern(s, x.raw); ok {
			// A group may hold the dot itself (@(.ssh)): matched as with
			// dotglob.
			if r := secrets.GlobMatchReason(pat, a.Home, private, true); r != "" {
				return r
			}
		}
	}
	return ""
}

// extglobPattern turns a word with extended glob groups (~/.@(ssh)/*,
// !(x)) into a plain glob for GlobMatchReason: each group matches like *.
// It reports false for words without a group, with a parameter or
// substitution, or in an unknown directory.
func (a *Analysis) extglobPattern(s *Segment, raw string) (string, bool) {
	if strings.ContainsAny(raw, "$`\\\"'") || !strings.Contains(raw, "(") {
		return "", false
	}
	var b strings.Builder
	found := false
	for i := 0; i < len(raw); i++ {
		if strings.IndexByte("@!+*?", raw[i]) >= 0 && i+1 < len(raw) && raw[i+1] == '(' {
			depth := 0
			j := i + 1
			for ; j < len(raw); j++ {
				if raw[j] == '(' {
					depth++
				} else if raw[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			b.WriteByte('*')
			found = true
			i = j
			continue
		}
		b.WriteByte(raw[i])
	}
	if !found {
		return "", false
	}
	p := b.String()
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = a.Home + p[1:]
	}
	return joinPath(s.dir, p)
}

// dotglob reports whether the script may make globs match names that
// start with a dot (shopt -s dotglob, or GLOBIGNORE set): then * reaches
// ~/.ssh too. Any mention counts; shopt -u is not told apart.
func (a *Analysis) dotglob() bool {
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.Name == "shopt" && slices.ContainsFunc(s.Args, func(v string) bool { return strings.Contains(v, "dotglob") }) {
			return true
		}
		for _, as := range s.Assigns {
			if strings.HasPrefix(as, "GLOBIGNORE=") {
				return true
			}
		}
	}
	return false
}

// dynamicSecretReason judges a word only known at run time by its shape:
// each parameter or substitution ($PPID, ${D}, $(…), `…`) stands for any
// text, so /proc/$PPID/environ, "$D/.env" and ~/.ssh/$K read secrets
// whatever the values are. It returns "" when no value makes a secret
// path of the known parts.
func dynamicSecretReason(raw string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case depth > 0:
			switch c {
			case '(', '{':
				depth++
			case ')', '}':
				depth--
			}
			continue
		case c == '\\' && i+1 < len(raw):
			i++
			b.WriteByte(raw[i])
			continue
		case c == '"' || c == '\'':
			continue
		case c == '`':
			if j := strings.IndexByte(raw[i+1:], '`'); j >= 0 {
				i += j + 1
			} else {
				i = len(raw)
			}
			b.WriteByte('*')
			continue
		case c != '$':
			b.WriteByte(c)
			continue
		}
		b.WriteByte('*')
		if i+1 < len(raw) && (raw[i+1] == '(' || raw[i+1] == '{') {
			depth = 1
			i++
			continue
		}
		for i+1 < len(raw) && (raw[i+1] == '_' || raw[i+1] >= 'a' && raw[i+1] <= 'z' || raw[i+1] >= 'A' && raw[i+1] <= 'Z' ||
			raw[i+1] >= '0' && raw[i+1] <= '9') {
			i++
		}
		if i+1 < len(raw) && i > 0 && raw[i] == '$' && strings.IndexByte("$!#?@*-", raw[i+1]) >= 0 {
			i++
		}
	}
	shape := b.String()
	if environPath(shape) {
		return "the environment of a process (" + raw + "), which holds secrets"
	}
	if !strings.HasPrefix(shape, "/") {
		shape = "/" + shape // a relative shape: judged by its components
	}
	last := shape[strings.LastIndexByte(shape, '/')+1:]
	if strings.Contains(last, "*") && !strings.HasPrefix(shape, "/proc/") {
		// The name itself is unknown: only a directory whose whole content
		// is secret decides (~/.ssh/$K); cat "$F" is the classifier's.
		if r := secrets.Reason(path.Dir(shape)); r != "" {
			return r + " (" + raw + ")"
		}
		return ""
	}
	if r := secrets.Reason(shape); r != "" {
		return r + " (" + raw + ")"
	}
	return ""
}

// environArgReason reports an argument naming /proc/<pid>/environ (also
// through globs and relative to cd /proc): printing a process environment
// prints its secrets.
func environArgReason(s *Segment) string {
	for _, x := range s.args {
		v, ok := argWord(x)
		if !ok || !strings.Contains(v, "environ") && !strings.ContainsAny(v, "*?[") {
			continue
		}
		if p, ok := joinPath(s.dir, v); ok && environPath(p) {
			return "reads the environment of a process (" + x.raw + "), which holds secrets"
		}
		// dd if=/proc/self/environ: a key=value operand names a file too.
		if _, val, ok := strings.Cut(v, "="); ok {
			if p, ok := joinPath(s.dir, val); ok && environPath(p) {
				return "reads the environment of a process (" + x.raw + "), which holds secrets"
			}
		}
	}
	return ""
}

// environPath reports /proc/PID/environ and /proc/PID/task/TID/environ,
// where any component may be a glob that matches.
func environPath(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if !strings.HasPrefix(p, "/") || len(parts) < 3 || !procGlobMatch(parts[0], "proc") ||
		!procGlobMatch(parts[len(parts)-1], "environ") {
		return false
	}
	return len(parts) == 3 || len(parts) == 5 && procGlobMatch(parts[2], "task")
}

// procGlobMatch reports whether a path component, possibly a glob, matches
// name.
func procGlobMatch(pat, name string) bool {
	if pat == name {
		return true
	}
	if !strings.ContainsAny(pat, "*?[") {
		return false
	}
	ok, err := path.Match(pat, name)
	return ok || err != nil
}

// maxCodePathTokens bounds the path-like tokens taken from one argument.
const maxCodePathTokens = 32

// codePathTokens are the path-like tokens of an argument that is code
// (it holds quotes, brackets or separators: python3 -c "open('a/b')"):
// the words between those characters that contain a slash or a dot, no
// glob and no URL. A plain argument is a path itself and is not split.
func codePathTokens(v string) []string {
	const seps = "'\"`()[]{},;=: \t\n<>|&"
	if !strings.ContainsAny(v, "'\"`()[]{},;=") {
		return nil
	}
	var out []string
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if len(out) == maxCodePathTokens {
			break
		}
		if len(tok) > 1 && len(tok) < 4096 && strings.ContainsAny(tok, "/.") && !strings.ContainsAny(tok, "*?$\\") &&
			tok != ".." && !strings.HasPrefix(tok, "-") {
			out = append(out, tok)
		}
	}
	return out
}

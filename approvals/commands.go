package approvals

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// shellNames are programs that run shell scripts.
var shellNames = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"fish": true, "ash": true, "yash": true, "posh": true, "rbash": true, "ksh93": true,
}

// command applies what the command itself means: directory changes, nested
// layers (sh -c, eval, xargs, find -exec, su -c) and the files it writes and
// deletes.
func (w *walker) command(idx int) {
	s := &w.a.Segments[idx]
	name, args, dir := s.Name, s.args, s.dir
	switch {
	case name == "cd" || name == "pushd":
		if !s.virtual {
			w.changeDir(args, dir)
		}
	case name == "popd":
		if !s.virtual {
			w.dir = ""
		}
	case shellNames[name]:
		w.shellCommand(idx, args, dir)
	case name == "eval":
		w.scriptFromWords(idx, args, dir, "eval")
	case name == "su" || name == "runuser":
		opts, _, _ := parseArgs(args, optSpec{short: "csgGw", long: []string{"--command", "--shell", "--group", "--supp-group", "--whitelist-environment"}})
		if c, ok := optVal(opts, "-c", "--command"); ok {
			w.scriptFromWords(idx, []arg{c}, dir, "su -c")
		}
	case name == "xargs":
		opts, _, stop := parseArgs(args, optSpec{
			short: "ILnPsEda", shortOpt: "ile",
			long:      []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
			stopFirst: true,
		})
		if stop < len(args) {
			s.spawns = true
			w.nestedArgv(args[stop:], dir, true, xargsReplace(opts), s.stdin)
		}
	case name == "find":
		w.findCommand(idx, args, dir)
	case name == "git":
		w.gitCommands(idx, args, dir)
	default:
		w.runnerCommand(idx, name, args, dir)
	case name == "alias":
		for _, x := range args {
			if _, v, ok := strings.Cut(x.val, "="); ok && v != "" {
				w.scriptFromWords(idx, []arg{{val: v, raw: x.raw, dyn: x.dyn}}, dir, "alias")
			}
		}
	case name == "trap":
		_, ops, _ := parseArgs(args, optSpec{})
		if len(ops) > 0 && ops[0].val != "-" && ops[0].val != "" && !hasWord(s.Args, "-p", "-l") {
			w.scriptFromWords(idx, ops[:1], dir, "trap")
		}
	case name == "source" || name == ".":
		if len(args) > 1 && args[0].val == "--" {
			args = args[1:]
		}
		if len(args) > 0 && w.scriptOperand(idx, args[0], name) {
			w.a.Segments[idx].stdinScript = true
		}
	}
	w.commandVars(idx, dir)
	w.fileTargets(idx)
}

// commandValued are environment variables whose value is a command line
// that programs run (pagers, editors, diff and ssh helpers).
var commandValued = map[string]bool{
	"PAGER": true, "GIT_PAGER": true, "MANPAGER": true, "GIT_EXTERNAL_DIFF": true, "GIT_EDITOR": true,
	"EDITOR": true, "VISUAL": true, "SUDO_EDITOR": true, "GIT_SSH_COMMAND": true, "GIT_SEQUENCE_EDITOR": true,
	"PROMPT_COMMAND": true, "BROWSER": true,
}

// commandVars analyses the commands held by command-valued assignments of
// a segment (PAGER='rm -rf /' git log).
func (w *walker) commandVars(idx int, dir string) {
	for _, as := range w.a.Segments[idx].Assigns {
		name, val, ok := strings.Cut(as, "=")
		if ok && val != "" && commandValued[strings.ToUpper(name)] {
			w.scriptFromWords(idx, []arg{{val: val, raw: as}}, dir, name)
		}
	}
}

// gitCommands analyses command lines passed in `git -c key=value` and
// `--config-env` (pagers, editors, diff/filter/merge drivers, shell
// aliases "!cmd"), and the commands git subcommands run (see runners.go).
func (w *walker) gitCommands(idx int, args []arg, dir string) {
	g := parseGit(args)
	for _, o := range g.globals.opts {
		if o.def == nil || !o.hasVal {
			continue
		}
		switch o.def.name {
		case "-c":
			key, val, ok := strings.Cut(o.val.val, "=")
			if _, run := gitConfigCommand(key, "!x"); o.val.dyn && run {
				w.markOpaque(idx, "git -c sets "+key+" to a command only known at run time")
				continue
			}
			if script, run := gitConfigCommand(key, val); ok && run {
				w.scriptFromWords(idx, []arg{{val: script, raw: o.val.raw, dyn: o.val.dyn}}, dir, "git -c "+strings.ToLower(key))
			}
		case "--config-env":
			key, _, _ := strings.Cut(o.val.val, "=")
			if _, run := gitConfigCommand(key, "!x"); run {
				w.markOpaque(idx, "git --config-env sets "+key+" to a command only known at run time")
			}
		}
	}
	w.gitSubcommand(idx, g, dir)
}

// gitConfigCommand reports configuration keys whose value is a command
// line git runs, and the command (an alias runs a command only with "!").
func gitConfigCommand(key, val string) (string, bool) {
	key = strings.ToLower(key)
	switch {
	case val == "":
		return "", false
	case key == "core.pager" || key == "core.editor" || key == "core.sshcommand" || key == "diff.external" ||
		key == "core.fsmonitor" || key == "sequence.editor" || key == "gpg.program" || key == "core.askpass" ||
		key == "core.hookspath" || key == "uploadpack.packobjectshook" || key == "credential.helper" ||
		strings.HasPrefix(key, "pager.") || strings.HasSuffix(key, ".textconv") ||
		strings.HasSuffix(key, ".command") || strings.HasSuffix(key, ".clean") || strings.HasSuffix(key, ".cmd") ||
		strings.HasSuffix(key, ".smudge") || strings.HasSuffix(key, ".process") || strings.HasSuffix(key, ".driver") ||
		strings.HasPrefix(key, "hook.") || strings.HasSuffix(key, ".program") || strings.HasSuffix(key, ".receivepack") ||
		strings.HasSuffix(key, ".uploadpack") || strings.HasSuffix(key, ".proxycommand") || key == "core.gitproxy":
		if key == "credential.helper" || strings.HasSuffix(key, ".helper") {
			if !strings.HasPrefix(val, "!") {
				return "", false // a helper name, not a command line
			}
			return val[1:], true
		}
		return val, true
	case (strings.HasPrefix(key, "alias.") || strings.HasPrefix(key, "credential.")) && strings.HasPrefix(val, "!"):
		return val[1:], true
	}
	return "", false
}

// changeDir follows cd/pushd for resolving later relative paths.
func (w *walker) changeDir(args []arg, dir string) {
	_, ops, _ := parseArgs(args, optSpec{})
	switch {
	case len(ops) == 0:
		w.dir = w.a.Home
	case ops[0].dyn || ops[0].val == "-" || strings.HasPrefix(ops[0].val, "+"):
		w.dir = ""
	default:
		w.dir = w.resolveDir(dir, ops[0])
	}
}

// xargsReplace returns the replacement string of xargs -I/-i/--replace.
func xargsReplace(opts []option) string {
	for _, o := range opts {
		switch o.name {
		case "-I":
			if o.hasVal && o.val.val != "" {
				return o.val.val
			}
		case "-i", "--replace":
			if o.hasVal && o.val.val != "" {
				return o.val.val
			}
			return "{}"
		}
	}
	return ""
}

// shellCommand handles sh/bash/...: -c runs its first operand as a script;
// without -c and without a script file (or with -s, -, /dev/stdin) the
// script comes from standard input (here-documents, here-strings, a pipe,
// an input redirect), which simple then judges. fish's -C/--init-command
// and --command run their value too.
func (w *walker) shellCommand(idx int, args []arg, dir string) {
	s := &w.a.Segments[idx]
	cFlag, sFlag := false, false
	stdinFile := false // a start-up file (--rcfile, BASH_ENV, ENV) is read from standard input
	for _, as := range s.Assigns {
		// BASH_ENV and ENV name a file the shell sources before the script.
		if n, v, _ := strings.Cut(as, "="); (n == "BASH_ENV" || n == "ENV") && v != "" {
			dyn := s.Dynamic && strings.ContainsAny(v, "$`<")
			stdinFile = stdinFile || w.scriptOperand(idx, arg{val: v, raw: as, dyn: dyn}, s.Name+" "+n)
			s = &w.a.Segments[idx]
		}
	}
	var inline []arg // fish -C/--init-command/--command values
	i := 0
loop:
	for i < len(args) {
		a := args[i]
		v := a.val
		switch {
		case a.dyn:
			break loop
		case v == "--" || v == "-":
			i++
			break loop
		case strings.HasPrefix(v, "--"):
			name, val, has := strings.Cut(v, "=")
			switch name {
			case "--rcfile", "--init-file":
				// The file is sourced by an interactive shell (bash -i).
				f := arg{val: val, raw: a.raw}
				if !has && i+1 < len(args) {
					i++
					f = args[i]
				}
				stdinFile = stdinFile || w.scriptOperand(idx, f, s.Name+" "+name)
				s = &w.a.Segments[idx]
			case "--command", "--init-command":
				if s.Name == "fish" {
					if !has && i+1 < len(args) {
						i++
						val = args[i].val
						a = args[i]
					}
					inline = append(inline, arg{val: val, raw: a.raw, dyn: a.dyn})
					if name == "--command" {
						cFlag = true
					}
				}
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				switch {
				case c == 'c':
					cFlag = true
				case c == 's':
					sFlag = true
				case c == 'o' || c == 'O':
					i++ // the option name
				case c == 'C' && s.Name == "fish" && i+1 < len(args):
					i++
					inline = append(inline, args[i])
				}
			}
		default:
			break loop
		}
		i++
	}
	var ops []arg
	if i < len(args) {
		ops = args[i:]
	}
	name := s.Name
	fromInput := s.virtual && s.runtimeArgs // xargs appends its input to the arguments
	virtual := s.virtual
	for _, x := range inline {
		w.scriptFromWords(idx, []arg{x}, dir, name+" --init-command")
	}
	if stdinFile {
		w.a.Segments[idx].stdinScript = true
	}
	switch {
	case cFlag && len(ops) > 0:
		if w.repl != "" && virtual && strings.Contains(ops[0].val, w.repl) {
			w.markOpaque(idx, name+" -c runs a script completed by run-time input ("+ops[0].raw+")")
		}
		w.scriptFromWords(idx, ops[:1], dir, name+" -c")
	case cFlag && len(inline) > 0:
	case cFlag:
		if fromInput {
			w.markOpaque(idx, name+" -c runs xargs' input as a script")
		}
	case sFlag:
		w.a.Segments[idx].stdinScript = true
	case len(ops) == 0:
		if fromInput {
			w.markOpaque(idx, name+" runs a script named by xargs' input")
			return
		}
		w.a.Segments[idx].stdinScript = true
	default:
		if w.scriptOperand(idx, ops[0], name) {
			w.a.Segments[idx].stdinScript = true
		}
	}
}

// scriptFromWords runs the words joined by spaces as a nested script, or
// marks the command opaque when they are only known at run time. The
// script reads what the command reads on standard input.
func (w *walker) scriptFromWords(idx int, words []arg, dir, what string) {
	if len(words) == 0 {
		return
	}
	w.a.Segments[idx].spawns = true
	vals := make([]string, len(words))
	for i, x := range words {
		if x.dyn {
			w.markOpaque(idx, what+" runs a script only known at run time ("+x.raw+")")
			return
		}
		vals[i] = x.val
	}
	w.nested(strings.Join(vals, " "), dir, w.a.Segments[idx].stdin)
}

// findCommand handles find: -exec/-execdir/-ok/-okdir run nested commands
// ({} stands for something below each starting point), -delete deletes
// below the starting points, -fprint* write files.
func (w *walker) findCommand(idx int, args []arg, dir string) {
	roots, i := findRoots(args)
	if len(roots) > maxFindRoots {
		roots = roots[:maxFindRoots]
	}
	for ; i < len(args); i++ {
		switch args[i].val {
		case "-exec", "-execdir", "-ok", "-okdir":
			inDir := args[i].val == "-execdir" || args[i].val == "-okdir"
			j := i + 1
			for j < len(args) && args[j].val != ";" && args[j].val != "+" {
				j++
			}
			inner := args[i+1 : j]
			i = j
			if len(inner) == 0 {
				continue
			}
			w.a.Segments[idx].spawns = true
			for _, root := range roots {
				sub := make([]arg, len(inner))
				for k, x := range inner {
					sub[k] = x
					if strings.Contains(x.val, "{}") {
						repl := root.val + "/{}"
						if inDir {
							repl = "./{}"
						}
						sub[k].val = strings.ReplaceAll(x.val, "{}", repl)
						sub[k].dyn = x.dyn || root.dyn
					}
				}
				d := dir
				if inDir {
					d = ""
				}
				w.nestedArgv(sub, d, false, "{}", w.a.Segments[idx].stdin)
			}
		case "-delete":
			for _, root := range roots {
				w.addDelete(root, "find -delete", idx, dir)
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				w.addWrite(args[i+1], "find "+args[i].val, idx, dir)
				i++
			}
		}
	}
}

// findRoots returns find's starting points ("." when none is given) and
// the index where the expression starts.
func findRoots(args []arg) ([]arg, int) {
	i := 0
	for i < len(args) && !args[i].dyn {
		v := args[i].val
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
			continue
		}
		if v == "-D" && i+1 < len(args) {
			i += 2
			continue
		}
		break
	}
	var roots []arg
	for i < len(args) {
		v := args[i].val
		if !args[i].dyn && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ")" || v == ",") {
			break
		}
		roots = append(roots, args[i])
		i++
	}
	if len(roots) == 0 {
		roots = []arg{{val: ".", raw: "."}}
	}
	return roots, i
}

// printfText formats printf arguments the way printf would print them.
// Formats with '*' or large field widths are refused (they could make the
// output, and this analysis, arbitrarily large).
func printfText(args []string) (string, error) {
	format, rest := args[0], args[1:]
	if !boundedFormat(format) {
		return "", errDynamic
	}
	var b strings.Builder
	for range 64 {
		out, n, err := expand.Format(&expand.Config{}, format, rest)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
		if n == 0 || n >= len(rest) {
			break
		}
		rest = rest[n:]
	}
	return b.String(), nil
}

// boundedFormat reports a printf format whose widths and precisions are all
// at most three digits and that takes no width from the arguments.
func boundedFormat(f string) bool {
	digits := 0
	for i := 0; i < len(f); i++ {
		switch c := f[i]; {
		case c == '*':
			return false
		case c >= '0' && c <= '9':
			if digits++; digits > 3 {
				return false
			}
		default:
			digits = 0
		}
	}
	return true
}

package approvals

import (
	"strings"
)

// Programs that run a command given in their arguments or options: git
// subcommands (difftool -x, rebase --exec, submodule foreach, bisect run,
// filter-branch filters, grep -O, config of command-valued keys), tar's
// command options, sed's e command, and session, debugger, editor and job
// runners (script -c, tmux, at, gdb, vim, expect, parallel, sg). The
// command is analysed as a nested layer where its text is known and makes
// the segment opaque where it is not.

// runnerCommand dispatches the programs above.
func (w *walker) runnerCommand(idx int, name string, args []arg, dir string) {
	switch name {
	case "tar", "bsdtar":
		w.tarCommand(idx, args, dir)
	case "sed", "gsed":
		w.sedCommand(idx, args, dir)
	case "script":
		w.scriptCommand(idx, args, dir)
	case "tmux":
		w.tmuxCommand(idx, args, dir)
	case "at", "batch":
		w.atCommand(idx, args)
	case "gdb":
		w.gdbCommand(idx, args, dir)
	case "vim", "vi", "nvim", "view", "ex", "gvim", "rvim", "vimdiff":
		w.vimCommand(idx, args, dir)
	case "expect":
		w.expectCommand(idx, args, dir)
	case "parallel", "sem":
		w.parallelCommand(idx, args, dir)
	case "sort":
		// sort runs the compress program itself (argv, no shell).
		p := sortTable.parse(args)
		for _, v := range p.values("--compress-program") {
			w.a.Segments[idx].spawns = true
			w.nestedArgv([]arg{v}, dir, false, "", nil)
		}
	case "rg":
		p := rgTable.parse(args)
		for _, v := range p.values("--pre") {
			w.a.Segments[idx].spawns = true
			w.nestedArgv([]arg{v, {val: "{}", raw: "{}"}}, dir, false, "{}", nil)
		}
	case "fd", "fdfind":
		w.fdCommand(idx, args, dir)
	case "sg":
		// sg GROUP [-c] COMMAND: the command is a string run by /bin/sh -c.
		rest := args
		if len(rest) > 0 && rest[0].val == "-" {
			rest = rest[1:]
		}
		if len(rest) > 1 {
			rest = rest[1:]
			if rest[0].val == "-c" {
				rest = rest[1:]
			}
			w.scriptFromWords(idx, rest, dir, "sg")
		}
	}
}

// nestedScript runs one known script in a nested layer or marks the
// command opaque.
func (w *walker) nestedScript(idx int, script arg, dir, what string) {
	w.scriptFromWords(idx, []arg{script}, dir, what)
}

// gitSubcommand handles git subcommands that run commands.
func (w *walker) gitSubcommand(idx int, g gitCmd, dir string) {
	t := gitSubTable(g.sub)
	p := t.parse(g.rest)
	switch g.sub {
	case "difftool", "mergetool":
		for _, v := range p.values("--extcmd") {
			w.nestedScript(idx, v, dir, "git difftool --extcmd")
		}
		if g.sub == "mergetool" || p.has("--tool") {
			w.a.Segments[idx].spawns = true // runs a configured tool
		}
	case "rebase":
		for _, v := range p.values("--exec") {
			w.nestedScript(idx, v, dir, "git rebase --exec")
		}
	case "grep":
		for i := range p.opts {
			o := &p.opts[i]
			if !o.is("--open-files-in-pager") {
				continue
			}
			if o.hasVal && o.val.val != "" {
				w.nestedScript(idx, o.val, dir, "git grep -O")
			} else {
				w.a.Segments[idx].spawns = true // the pager
			}
		}
	case "filter-branch":
		for _, f := range []string{"--setup", "--env-filter", "--tree-filter", "--index-filter", "--parent-filter",
			"--msg-filter", "--commit-filter", "--tag-name-filter"} {
			for _, v := range p.values(f) {
				w.nestedScript(idx, v, dir, "git filter-branch "+f)
			}
		}
	case "submodule":
		ops := p.operands
		for k, o := range ops {
			if o.val != "foreach" {
				continue
			}
			rest := ops[k+1:]
			for len(rest) > 0 && (rest[0].val == "--recursive" || rest[0].val == "-q" || rest[0].val == "--quiet") {
				rest = rest[1:]
			}
			w.scriptFromWords(idx, rest, dir, "git submodule foreach")
			break
		}
	case "bisect":
		if len(g.rest) > 1 && g.rest[0].val == "run" {
			w.a.Segments[idx].spawns = true
			w.nestedArgv(g.rest[1:], dir, false, "", w.a.Segments[idx].stdin)
		}
	case "config":
		ops := p.operands
		if len(ops) > 0 && (ops[0].val == "set" || ops[0].val == "--add") {
			ops = ops[1:]
		}
		if len(ops) >= 2 && !ops[0].dyn {
			if strings.EqualFold(ops[0].val, "core.hooksPath") {
				w.markOpaque(idx, "git config core.hooksPath makes git run hooks from another directory")
			} else if script, run := gitConfigCommand(ops[0].val, ops[1].val); run || ops[1].dyn {
				what := "git config " + ops[0].val
				if ops[1].dyn {
					if _, run := gitConfigCommand(ops[0].val, "!x"); run {
						w.markOpaque(idx, what+" sets a command only known at run time")
					}
					return
				}
				w.nestedScript(idx, arg{val: script, raw: ops[1].raw}, dir, what)
			}
		}
	}
}

// tarCommand handles tar's options that run programs.
func (w *walker) tarCommand(idx int, args []arg, dir string) {
	if len(args) > 0 && !args[0].dyn && !strings.HasPrefix(args[0].val, "-") {
		// Old style: the first word is a cluster of letters (tar xzf a.tgz).
		a0 := args[0]
		a0.val = "-" + a0.val
		args = append([]arg{a0}, args[1:]...)
	}
	p := tarTable.parse(args)
	for _, f := range []string{"--to-command", "--use-compress-program", "--rsh-command", "--info-script"} {
		for _, v := range p.values(f) {
			w.nestedScript(idx, v, dir, "tar "+f)
		}
	}
	for _, v := range p.values("--checkpoint-action") {
		act := v.val
		if cmd, ok := strings.CutPrefix(act, "exec="); ok {
			w.nestedScript(idx, arg{val: cmd, raw: v.raw, dyn: v.dyn}, dir, "tar --checkpoint-action=exec")
		} else if v.dyn {
			w.markOpaque(idx, "tar --checkpoint-action runs an action only known at run time")
		}
	}
	if p.dyn {
		w.markOpaque(idx, "tar has an option only known at run time")
	}
}

// sedCommand finds sed's e command (runs a command, or the pattern space)
// and the s///e flag (runs the result of the substitution).
func (w *walker) sedCommand(idx int, args []arg, dir string) {
	p := sedTable.parse(args)
	if p.has("--sandbox") {
		return
	}
	scripts := p.values("--expression")
	if len(scripts) == 0 && !p.has("--file") && len(p.operands) > 0 {
		scripts = p.operands[:1]
	}
	for _, sc := range scripts {
		if sc.dyn {
			w.markOpaque(idx, "sed runs a script only known at run time ("+sc.raw+")")
			continue
		}
		cmds, input, ok := sedExec(sc.val)
		if !ok && strings.Contains(sc.val, "e") {
			w.markOpaque(idx, "sed script that may run commands cannot be analysed ("+sc.raw+")")
			continue
		}
		if input {
			w.markOpaque(idx, "sed runs its input as commands (e)")
		}
		for _, c := range cmds {
			w.nestedScript(idx, arg{val: c, raw: sc.raw}, dir, "sed e")
		}
	}
}

// sedExec parses a sed script far enough to find the commands its e
// commands run, and whether it executes the pattern space (e without a
// command, s///e). ok is false when the script is not understood.
func sedExec(script string) (cmds []string, input, ok bool) {
	s := script
	i := 0
	toEOL := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		out := s[i : i+j]
		i += j
		return out
	}
	delimited := func(d byte) bool { // skips to the unescaped delimiter d
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '$' || s[i] == '+' || s[i] == '~'):
			i++
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for steps := 0; i < len(s); steps++ {
		if steps > 10000 {
			return nil, false, false
		}
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' {
			i++
			continue
		}
		if !address() {
			return nil, false, false
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
			if !address() {
				return nil, false, false
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			break
		}
		c = s[i]
		i++
		switch c {
		case '{', '}', ';', '\n':
		case '#':
			toEOL()
		case 'e':
			cmd := strings.TrimSpace(toEOL())
			if cmd == "" {
				input = true
			} else {
				cmds = append(cmds, cmd)
			}
		case 's', 'y':
			if i >= len(s) {
				return nil, false, false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return nil, false, false
			}
			for i < len(s) && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
				if s[i] == 'e' && c == 's' {
					input = true
				}
				if s[i] == 'w' {
					toEOL()
					break
				}
				i++
			}
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W', ':', 'b', 't', 'T':
			// Text, file name or label up to the end of the line (a label
			// also ends at ';').
			for i < len(s) && s[i] != '\n' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				if (c == 'b' || c == 't' || c == 'T') && s[i] == ';' {
					break
				}
				i++
			}
		case 'q', 'Q', 'l', 'L':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == ' ') {
				i++
			}
		case 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', '=', 'F':
		default:
			return nil, false, false
		}
	}
	return cmds, input, true
}

// scriptCommand handles script(1): -c runs a command, the operand is the
// typescript it writes.
func (w *walker) scriptCommand(idx int, args []arg, dir string) {
	opts, ops, _ := parseArgs(args, optSpec{short: "cEIOBTm", shortOpt: "t",
		long: []string{"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"}})
	if c, ok := optVal(opts, "-c", "--command"); ok {
		w.nestedScript(idx, c, dir, "script -c")
	} else {
		w.a.Segments[idx].spawns = true // an interactive shell
	}
	for _, o := range ops {
		w.addWrite(o, "script", idx, dir)
	}
}

// tmuxShellCommands are tmux commands whose operands are a shell command.
var tmuxShellCommands = map[string]bool{
	"new-session": true, "new": true, "new-window": true, "neww": true, "split-window": true, "splitw": true,
	"respawn-pane": true, "respawnp": true, "respawn-window": true, "respawnw": true, "run-shell": true, "run": true,
	"if-shell": true, "if": true, "display-popup": true, "popup": true, "pipe-pane": true, "pipep": true,
}

// tmuxQuiet are tmux commands that run nothing.
var tmuxQuiet = map[string]bool{
	"ls": true, "list-sessions": true, "list-windows": true, "lsw": true, "list-panes": true, "lsp": true,
	"list-clients": true, "lsc": true, "list-keys": true, "lsk": true, "list-buffers": true, "lsb": true,
	"kill-session": true, "kill-server": true, "kill-window": true, "killw": true, "kill-pane": true, "killp": true,
	"has-session": true, "has": true, "attach-session": true, "attach": true, "a": true, "detach-client": true,
	"detach": true, "display-message": true, "display": true, "capture-pane": true, "capturep": true,
	"select-window": true, "selectw": true, "select-pane": true, "selectp": true, "rename-session": true,
	"rename-window": true, "resize-pane": true, "show-options": true, "show": true, "show-buffer": true,
	"wait-for": true, "wait": true, "start-server": true, "start": true,
}

// tmuxCommand handles tmux: -c and the shell-command operands of commands
// that start programs are nested scripts; send-keys types into a shell and
// anything unknown is opaque.
func (w *walker) tmuxCommand(idx int, args []arg, dir string) {
	opts, ops, _ := parseArgs(args, optSpec{short: "cfLST", stopFirst: true})
	if c, ok := optVal(opts, "-c"); ok {
		w.nestedScript(idx, c, dir, "tmux -c")
	}
	if len(ops) == 0 {
		w.a.Segments[idx].spawns = true // a new session with the default shell
		return
	}
	for len(ops) > 0 {
		sub := ops[0]
		// Commands are separated by a ";" word.
		end := len(ops)
		for k := 1; k < len(ops); k++ {
			if ops[k].val == ";" || ops[k].val == "\\;" {
				end = k
				break
			}
		}
		words := ops[1:end]
		switch {
		case sub.dyn:
			w.markOpaque(idx, "tmux runs a command only known at run time")
		case tmuxQuiet[sub.val]:
		case tmuxShellCommands[sub.val]:
			_, cmd, _ := parseArgs(words, optSpec{short: "ceFflnstxy"})
			w.a.Segments[idx].spawns = true
			if len(cmd) > 0 {
				w.scriptFromWords(idx, cmd, dir, "tmux "+sub.val)
			}
		default:
			w.markOpaque(idx, "tmux "+sub.val+" can run or type commands that are not analysed")
		}
		if end >= len(ops) {
			break
		}
		ops = ops[end+1:]
	}
}

// atCommand handles at/batch: the job is read from standard input (or -f
// FILE); listing and removing jobs runs nothing.
func (w *walker) atCommand(idx int, args []arg) {
	opts, _, _ := parseArgs(args, optSpec{short: "qftM"})
	if hasOpt(opts, "-l", "-d", "-r", "-c", "-V") {
		return
	}
	if f, ok := optVal(opts, "-f"); ok {
		if w.scriptOperand(idx, f, "at -f") {
			w.a.Segments[idx].stdinScript = true
		}
		w.a.Segments[idx].spawns = true
		return
	}
	w.a.Segments[idx].spawns = true
	w.a.Segments[idx].stdinScript = true
}

// gdbCommand handles gdb: shell commands given with -ex/--eval-command
// ("shell cmd", "!cmd", "pipe … | cmd"), the program of --args, and
// command files.
func (w *walker) gdbCommand(idx int, args []arg, dir string) {
	for i := 0; i < len(args); i++ {
		v := args[i].val
		var cmd arg
		switch {
		case v == "--args" || v == "-args":
			if i+1 < len(args) {
				w.a.Segments[idx].spawns = true
				w.nestedArgv(args[i+1:], dir, false, "", w.a.Segments[idx].stdin)
			}
			return
		case v == "-ex" || v == "--ex" || v == "-eval-command" || v == "--eval-command" ||
			v == "-iex" || v == "--iex":
			if i+1 >= len(args) {
				return
			}
			i++
			cmd = args[i]
		case strings.HasPrefix(v, "--eval-command=") || strings.HasPrefix(v, "-eval-command="):
			_, c, _ := strings.Cut(v, "=")
			cmd = arg{val: c, raw: args[i].raw, dyn: args[i].dyn}
		case v == "-x" || v == "--command" || v == "-ix" || v == "--init-command" || v == "-command":
			w.a.Segments[idx].spawns = true // a command file
			i++
			continue
		default:
			continue
		}
		w.a.Segments[idx].spawns = true
		if cmd.dyn {
			w.markOpaque(idx, "gdb runs a command only known at run time ("+cmd.raw+")")
			continue
		}
		c := strings.TrimSpace(cmd.val)
		switch {
		case strings.HasPrefix(c, "!"):
			w.nestedScript(idx, arg{val: c[1:], raw: cmd.raw}, dir, "gdb !")
		case strings.HasPrefix(c, "shell ") || c == "shell":
			w.nestedScript(idx, arg{val: strings.TrimPrefix(c, "shell"), raw: cmd.raw}, dir, "gdb shell")
		case strings.HasPrefix(c, "pipe ") || strings.HasPrefix(c, "|"):
			if k := strings.LastIndexByte(c, '|'); k >= 0 {
				w.nestedScript(idx, arg{val: c[k+1:], raw: cmd.raw}, dir, "gdb pipe")
			}
		}
	}
}

// vimCommand handles ex commands given to vim (-c, +cmd, --cmd): "!cmd",
// ":r !cmd", ":w !cmd", ":terminal cmd" run shell commands; calls into
// other languages or system() are opaque.
func (w *walker) vimCommand(idx int, args []arg, dir string) {
	for i := 0; i < len(args); i++ {
		v := args[i].val
		var cmd arg
		switch {
		case (v == "-c" || v == "--cmd") && i+1 < len(args):
			i++
			cmd = args[i]
		case strings.HasPrefix(v, "+") && len(v) > 1:
			cmd = arg{val: v[1:], raw: args[i].raw, dyn: args[i].dyn}
		case v == "-S" || v == "-s" || v == "-u" || v == "-U" || v == "-e" || v == "-E" || v == "-es" || v == "-Es":
			w.a.Segments[idx].spawns = true // a script file, or ex commands from standard input
			continue
		default:
			continue
		}
		w.a.Segments[idx].spawns = true
		if cmd.dyn {
			w.markOpaque(idx, "vim runs a command only known at run time ("+cmd.raw+")")
			continue
		}
		for _, c := range strings.Split(cmd.val, "|") {
			c = strings.TrimLeft(c, ": \t")
			for _, pre := range []string{"silent!", "silent", "sil!", "sil", "exe", "execute"} {
				if rest, ok := strings.CutPrefix(c, pre); ok && (rest == "" || rest[0] == ' ' || rest[0] == '!') {
					c = strings.TrimLeft(rest, " \t")
					break
				}
			}
			switch {
			case strings.HasPrefix(c, "!"):
				w.nestedScript(idx, arg{val: c[1:], raw: cmd.raw}, dir, "vim !")
			case strings.HasPrefix(c, "r !") || strings.HasPrefix(c, "read !") || strings.HasPrefix(c, "r!") ||
				strings.HasPrefix(c, "w !") || strings.HasPrefix(c, "write !"):
				w.nestedScript(idx, arg{val: c[strings.IndexByte(c, '!')+1:], raw: cmd.raw}, dir, "vim !")
			case strings.HasPrefix(c, "term"):
				_, rest, _ := strings.Cut(c, " ")
				w.nestedScript(idx, arg{val: rest, raw: cmd.raw}, dir, "vim :terminal")
			case strings.Contains(c, "system") || strings.Contains(c, "!") || strings.HasPrefix(c, "py") ||
				strings.HasPrefix(c, "lua") || strings.HasPrefix(c, "perl") || strings.HasPrefix(c, "ruby") ||
				strings.HasPrefix(c, "call") || strings.HasPrefix(c, "so") || strings.HasPrefix(c, "exe") ||
				strings.HasPrefix(c, "norm"):
				w.markOpaque(idx, "vim runs ex commands that are not analysed ("+cmd.raw+")")
			}
		}
	}
}

// expectCommand handles expect -c: the spawn, exec and system commands of
// the Tcl text are nested scripts; other Tcl code counts like a script.
func (w *walker) expectCommand(idx int, args []arg, dir string) {
	w.a.Segments[idx].spawns = true
	for i := 0; i < len(args); i++ {
		if args[i].val != "-c" || i+1 >= len(args) {
			continue
		}
		i++
		code := args[i]
		if code.dyn {
			w.markOpaque(idx, "expect runs code only known at run time ("+code.raw+")")
			continue
		}
		for _, line := range strings.FieldsFunc(code.val, func(r rune) bool { return r == '\n' || r == ';' }) {
			line = strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "{}[]"))
			for _, kw := range []string{"spawn", "exec", "system"} {
				if rest, ok := strings.CutPrefix(line, kw+" "); ok {
					rest = strings.TrimSpace(rest)
					for strings.HasPrefix(rest, "-") && kw == "spawn" {
						_, rest, _ = strings.Cut(rest, " ")
					}
					w.nestedScript(idx, arg{val: rest, raw: code.raw}, dir, "expect "+kw)
				}
			}
			if strings.Contains(line, "open \"|") || strings.Contains(line, "open |") {
				w.markOpaque(idx, "expect opens a pipe to a command that is not analysed")
			}
		}
	}
}

// parallelCommand handles GNU parallel: the command template runs through
// a shell once per argument; arguments after ::: are known, those read
// from standard input or files are not. Without a template the arguments
// are the commands.
func (w *walker) parallelCommand(idx int, args []arg, dir string) {
	w.a.Segments[idx].spawns = true
	opts, ops, _ := parseArgs(args, optSpec{short: "jSaIdENnLlsCexXmkquvr", shortOpt: "i",
		long: []string{"--jobs", "--sshlogin", "--arg-file", "--colsep", "--delimiter", "--max-args", "--max-replace-args",
			"--halt", "--timeout", "--tag-string", "--joblog", "--results", "--tmpdir", "--workdir", "--env",
			"--basefile", "--return", "--transfer-file", "--retries", "--delay", "--load", "--memfree", "--shebang-wrap",
			"--replace", "--eof", "--sshloginfile", "--profile", "--rpl", "--tagstring", "--header", "--line-buffer"}, stopFirst: true})
	_ = opts
	var tmpl []arg
	var lists [][]arg
	k := 0
	for ; k < len(ops) && !strings.HasPrefix(ops[k].val, ":::"); k++ {
		tmpl = append(tmpl, ops[k])
	}
	for k < len(ops) {
		sep := ops[k].val
		k++
		var list []arg
		for ; k < len(ops) && !strings.HasPrefix(ops[k].val, ":::"); k++ {
			list = append(list, ops[k])
		}
		if strings.HasPrefix(sep, "::::") {
			w.markOpaque(idx, "parallel reads its arguments from a file")
			return
		}
		lists = append(lists, list)
	}
	if len(tmpl) == 0 {
		if len(lists) == 0 {
			w.markOpaque(idx, "parallel runs the commands it reads from standard input")
			return
		}
		for _, l := range lists {
			for _, c := range l {
				w.nestedScript(idx, c, dir, "parallel")
			}
		}
		return
	}
	for _, t := range tmpl {
		if t.dyn {
			w.markOpaque(idx, "parallel runs a command only known at run time ("+t.raw+")")
			return
		}
	}
	if len(lists) == 0 {
		// Arguments from standard input fill {} at run time.
		saved := w.runtime
		w.runtime = true
		w.scriptFromWords(idx, tmpl, dir, "parallel")
		w.runtime = saved
		return
	}
	n := 0
	for _, l := range lists {
		for _, v := range l {
			if n++; n > maxFindRoots {
				return
			}
			words := make([]arg, 0, len(tmpl)+1)
			replaced := false
			for _, t := range tmpl {
				if strings.Contains(t.val, "{}") {
					t.val = strings.ReplaceAll(t.val, "{}", v.val)
					t.dyn = t.dyn || v.dyn
					replaced = true
				}
				words = append(words, t)
			}
			if !replaced {
				words = append(words, v)
			}
			w.scriptFromWords(idx, words, dir, "parallel")
		}
	}
}

// fdCommand handles fd -x/--exec and -X/--exec-batch: the words after the
// option up to ";" are a command run for the results ({} stands for one).
func (w *walker) fdCommand(idx int, args []arg, dir string) {
	for i := 0; i < len(args); i++ {
		v := args[i].val
		if v != "-x" && v != "--exec" && v != "-X" && v != "--exec-batch" {
			continue
		}
		j := i + 1
		for j < len(args) && args[j].val != ";" {
			j++
		}
		if j > i+1 {
			w.a.Segments[idx].spawns = true
			w.nestedArgv(args[i+1:j], dir, true, "{}", nil)
		}
		i = j
	}
}

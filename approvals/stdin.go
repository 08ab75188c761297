package approvals

// Standard input as code (lesson 4: "heredocs fed to a shell").
//
// A shell that reads its script from standard input (sh, bash, zsh, dash,
// ksh, fish, ... without a script operand, or with -s, -, /dev/stdin; and
// source /dev/stdin) runs whatever flows in. The walker therefore tracks,
// top-down, what every command reads on standard input:
//
//   - its own redirects: a here-document, a here-string, `< file`, `<&N`,
//     `< <(cmd)` (the last one on descriptor 0 wins);
//   - otherwise the input of the statement it belongs to: a pipeline stage
//     reads the output of the stage before it, a compound command's input
//     redirect feeds every command of its body, `exec < x` feeds the rest of
//     the script, a nested script (sh -c, eval, xargs, find -exec, ...)
//     reads what the command starting it reads, commands in `>( )` read what
//     is written into the substitution;
//   - at the top the tool's own input, the null device: nothing.
//
// The script a shell gets this way is judged like the script of sh -c:
//
//   - statically known text — a here-document or here-string without
//     run-time expansions, the output of echo/printf with literal arguments,
//     cat (no files, or only -) or tee passing such text on — is analysed as
//     a nested layer (with the usual depth limit), so a known payload
//     produces its own dangerous ids (rm -rf / gives rm-rf-root);
//   - anything else — a file, a descriptor, a socket, a variable, the output
//     of another program (base64 -d, curl, sed, a group of commands), the data
//     written into >( ) — is opaque: DangerOpaque asks in every mode that
//     asks (full-auto included) and is refused where nobody can be asked.
//     Partly known text (placeholders stand for the run-time parts) is
//     analysed as well, so the known parts still produce their ids.
//
// Decisions on neighbouring shapes (see TestShellStdinDecisions):
//
//   - `bash script.sh`, a script file named statically, is an ordinary
//     program run like ./script.sh, make or npm test: not opaque, full-auto
//     runs it. The same file fed through standard input (`sh < script.sh`,
//     `cat script.sh | sh`) is opaque: standard input can be a socket
//     (/dev/tcp), a FIFO, a descriptor or another program's output, and the
//     rule "a shell's standard input is code" keeps no exception an evasion
//     could aim for. `bash < /dev/tcp/…` is pipe-to-shell as well.
//   - A script operand only known at run time (`bash "$f"`, `source $x`) is
//     opaque: it may be /dev/stdin, - or an option such as -c. A process
//     substitution as the script (`bash <(cmd)`, `source <(cmd)`) is judged
//     like cmd's output piped into the shell.
//   - `curl … | sh` keeps pipe-to-shell and is also opaque.
//   - `base64 -d <<<… | sh`, `xxd -r … | sh`: decoded data is opaque.
//   - xargs: `xargs sh -c` without a script runs xargs' input as the script,
//     `xargs sh` runs a script named by the input, and a script containing
//     xargs' -I string or find's {} is completed by the input: all opaque.
//     `xargs sh -c 'literal'` only passes the input as positional parameters
//     (data unless the script evals them, which is opaque in turn) and is
//     analysed as before.
//   - Interpreters (python3, node, perl, ruby, php) reading code from
//     standard input (`python3 - <<EOF`) or from -c/-e are treated like
//     running a project script (`python3 x.py`): their language is not
//     analysed and they are not opaque — full-auto runs them (its contract
//     is "everything except the dangerous list"), auto mode sends them to
//     the classifier, default asks. What they read is still checked by the
//     hard-deny rules (agent configuration) and `curl … | python3` is
//     pipe-to-shell.

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// stdinSrc is what flows into a command's standard input. A nil *stdinSrc
// means nothing to judge: the tool's null device at the top, or the rest of
// a script that is itself being analysed.
type stdinSrc struct {
	text  string // the data; in partly known data the source text stands for the run-time parts
	known bool   // text is exactly the data
	why   string // what the data is when it is not known (for the opaque reason)
	from  int    // > 0: the data is the output of segment from-1, judged when needed
	net   bool   // a network connection (bash's /dev/tcp, /dev/udp)
}

func unknownInput(why string) *stdinSrc { return &stdinSrc{why: why} }

// isStdinPath reports paths that name the standard input itself.
func isStdinPath(p string) bool {
	switch p {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0":
		return true
	}
	return false
}

// isFdPath reports paths that name an open descriptor (/dev/fd/3, ...).
func isFdPath(p string) bool {
	return strings.HasPrefix(p, "/dev/fd/") || (strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/fd/"))
}

// isNetPath reports bash's network redirect paths.
func isNetPath(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// redirFd is the descriptor a redirect applies to ("" for the default).
func redirFd(r *syntax.Redirect) string {
	if r.N == nil {
		return ""
	}
	return r.N.Value
}

// stdinRedirect is one redirect that feeds a command's input.
type stdinRedirect struct {
	src   *stdinSrc
	stdin bool // it applies to descriptor 0 (a here-document on another descriptor does not)
}

// inputRedirects judges the redirects of a command that feed it input:
// here-documents and here-strings (on any descriptor; a shell might read
// them through /dev/fd) and `<`, `<&`, `<>` on descriptor 0. segs holds the
// segments of each redirect's substitutions. Here-document text is kept on
// seg for the interpreter checks.
func (w *walker) inputRedirects(rs []*syntax.Redirect, segs [][]int, seg *Segment) []stdinRedirect {
	var out []stdinRedirect
	for k, r := range rs {
		fd := redirFd(r)
		stdin := fd == "" || fd == "0"
		var src *stdinSrc
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			text, dyn := w.heredocText(r)
			if seg != nil {
				keepStdin(seg, text)
			}
			src = &stdinSrc{text: text, known: !dyn, why: "a here-document that expands run-time values"}
		case syntax.WordHdoc:
			v := w.joinedValue(r.Word)
			// read F <<< ~/.ssh/id_rsa, mapfile -t L <<< ~/.netrc: the
			// text becomes a variable's value (Analysis.bound).
			w.a.bound = append(w.a.bound, boundWord{x: v, dir: w.dir})
			if seg != nil {
				keepStdin(seg, v.val)
			}
			src = &stdinSrc{text: v.val + "\n", known: !v.dyn, why: "a here-string only known at run time (" + v.raw + ")"}
		case syntax.RdrIn, syntax.RdrInOut:
			if !stdin {
				continue
			}
			if ps := loneProcSubst(r.Word); ps != nil && ps.Op == syntax.CmdIn && k < len(segs) {
				src = w.substOutput(segs[k])
				break
			}
			v := w.joinedValue(r.Word)
			switch {
			case v.dyn:
				src = unknownInput("a file only known at run time (" + v.raw + ")")
			case v.val == "/dev/null":
				src = &stdinSrc{known: true}
			case isStdinPath(v.val):
				continue // its own standard input: nothing changes
			case isNetPath(v.val):
				src = &stdinSrc{why: "a network connection (" + v.raw + ")", net: true}
			default:
				src = unknownInput("the file " + v.raw)
			}
		case syntax.DplIn:
			if !stdin {
				continue
			}
			v := w.joinedValue(r.Word)
			switch {
			case !v.dyn && (v.val == "0" || v.val == "0-"):
				continue
			case !v.dyn && v.val == "-":
				src = &stdinSrc{known: true} // closed
			default:
				src = unknownInput("descriptor " + v.raw)
			}
		default:
			continue
		}
		out = append(out, stdinRedirect{src: src, stdin: stdin})
	}
	return out
}

// keepStdin remembers (the start of) the text a here-document feeds to a
// command, for the checks on interpreters.
func keepStdin(s *Segment, text string) {
	const keep = 64 << 10
	if len(s.stdinText) < keep {
		s.stdinText += text[:min(len(text), keep)]
	}
}

// loneProcSubst returns the process substitution a word consists of.
func loneProcSubst(word *syntax.Word) *syntax.ProcSubst {
	if word == nil || len(word.Parts) != 1 {
		return nil
	}
	ps, _ := word.Parts[0].(*syntax.ProcSubst)
	return ps
}

// lastStdin is the input descriptor 0 ends up with (the last redirect
// wins), or nil when no redirect changes it.
func lastStdin(ins []stdinRedirect) *stdinSrc {
	for i := len(ins) - 1; i >= 0; i-- {
		if ins[i].stdin {
			return ins[i].src
		}
	}
	return nil
}

// substOutput is what a process substitution `<( )` produces: the output
// of its one command at the next substitution level, judged when needed.
func (w *walker) substOutput(segs []int) *stdinSrc {
	return w.outputAt(segs, w.subst+1, "a process substitution")
}

// stageOutput is what a pipeline stage writes into the pipe.
func (w *walker) stageOutput(stage []int) *stdinSrc {
	return w.outputAt(stage, w.subst, "a pipeline stage")
}

// outputAt returns the output of the one command among segs that runs at
// this layer and substitution level; several commands (a group, a loop
// with a condition) or none are not followed.
func (w *walker) outputAt(segs []int, level int, what string) *stdinSrc {
	one := -1
	for _, i := range segs {
		if s := &w.a.Segments[i]; s.Depth == w.depth && s.level == level {
			if one >= 0 {
				return unknownInput("the output of several commands in " + what)
			}
			one = i
		}
	}
	if one < 0 {
		return unknownInput("the output of " + what + " without a plain command")
	}
	return &stdinSrc{from: one + 1}
}

// resolve returns the data of an input, following the outputs of echo,
// printf, cat and tee back to their inputs.
func (a *Analysis) resolve(in *stdinSrc) stdinSrc {
	for hops := 0; in != nil && in.from > 0; hops++ {
		if hops > maxSegments {
			return stdinSrc{why: "a chain of commands too long to follow"}
		}
		s := &a.Segments[in.from-1]
		if !passesInput(s) {
			return printed(s)
		}
		in = s.stdin
	}
	if in == nil {
		return stdinSrc{known: true}
	}
	return *in
}

// passesInput reports cat and tee copying their standard input unchanged
// to their output: cat without options (but -u) and without files other
// than -, tee with any options and files.
func passesInput(s *Segment) bool {
	if s.opaque != "" || s.spawns {
		return false
	}
	switch s.Name {
	case "tee":
		return true
	case "cat":
		for _, x := range s.args {
			if x.dyn || (x.val != "-" && x.val != "-u" && x.val != "--") {
				return false
			}
		}
		return true
	}
	return false
}

// printed is what a command that does not copy its input prints: known for
// echo and printf with literal arguments, unknown for anything else.
func printed(s *Segment) stdinSrc {
	switch {
	case s.Name == "":
		return stdinSrc{why: "the output of a command only known at run time"}
	case s.opaque != "" || s.spawns:
		return stdinSrc{why: "the output of " + s.Name}
	}
	switch s.Name {
	case "echo":
		return echoed(s.args)
	case "printf":
		if s.Dynamic || len(s.Args) == 0 {
			return stdinSrc{text: strings.Join(s.Args, " "), why: "printf output that depends on run-time values"}
		}
		out, err := printfText(s.Args)
		if err != nil {
			return stdinSrc{text: strings.Join(s.Args, " "), why: "printf output that cannot be worked out statically"}
		}
		return stdinSrc{text: out, known: true}
	}
	return stdinSrc{why: "the output of " + s.Name}
}

// echoed is what echo prints. With -e (or xpg_echo, or an echo that always
// interprets escapes) backslash escapes are interpreted, so text with a
// backslash is only known exactly when -e or -E says which; otherwise the
// literal text (bash's default) is analysed and the output stays unknown.
func echoed(args []arg) stdinSrc {
	escapes, decided := false, false
	for len(args) > 0 && !args[0].dyn && len(args[0].val) > 1 && args[0].val[0] == '-' &&
		strings.Trim(args[0].val, "-neE") == "" && strings.Count(args[0].val, "-") == 1 {
		for _, c := range args[0].val[1:] {
			switch c {
			case 'e':
				escapes, decided = true, true
			case 'E':
				escapes, decided = false, true
			}
		}
		args = args[1:]
	}
	vals := make([]string, len(args))
	dyn := false
	for i, x := range args {
		vals[i] = x.val
		dyn = dyn || x.dyn
	}
	text := strings.Join(vals, " ") + "\n"
	src := stdinSrc{text: text, known: !dyn, why: "echo output that depends on run-time values"}
	if !strings.Contains(text, `\`) || (decided && !escapes) {
		return src
	}
	interp, _, err := expand.Format(&expand.Config{}, "%b", []string{text})
	switch {
	case err != nil:
		src.known, src.why = false, "echo output with escapes that cannot be worked out statically"
	case decided:
		src.text = interp
	default:
		src.known, src.why = false, "echo output whose escapes depend on the shell (xpg_echo)"
	}
	return src
}

// feedShell judges the script that a shell (or source) at segment seg reads
// from an input: known text becomes a nested layer, anything else makes the
// segment opaque. A network input is also pipe-to-shell.
func (w *walker) feedShell(seg int, in *stdinSrc, what string) {
	if in == nil {
		return
	}
	s := &w.a.Segments[seg]
	s.spawns = true
	src := w.a.resolve(in)
	if src.net {
		s.netIn = true
	}
	name, dir := s.Name, s.dir
	if strings.TrimSpace(src.text) != "" {
		w.nested(src.text, dir, nil)
	}
	if !src.known {
		w.markOpaque(seg, name+" runs "+what+" that is only known at run time: "+src.why)
	}
}

// procSubstArg returns the process substitution `<( )` an argument of the
// command being recorded consists of, and the segments found in it.
func (w *walker) procSubstArg(x arg) ([]int, bool) {
	if !x.dyn || !strings.HasPrefix(x.raw, "<(") {
		return nil, false
	}
	for _, p := range w.psubs {
		if p.raw == x.raw {
			return p.segs, true
		}
	}
	return nil, false
}

// psub is a command argument that is a process substitution `<( )`.
type psub struct {
	raw  string
	segs []int
}

// scriptOperand judges the script file operand of a shell or of source:
// standard input, a descriptor, a process substitution or a name only
// known at run time. It reports whether the script comes from standard
// input.
func (w *walker) scriptOperand(idx int, op arg, what string) (stdin bool) {
	s := &w.a.Segments[idx]
	switch {
	case !op.dyn && isStdinPath(op.val):
		return true
	case !op.dyn && isFdPath(op.val):
		// Descriptors are not matched to redirects: every input redirect
		// is analysed (stdin true) and the command stays opaque.
		w.markOpaque(idx, what+" runs a script read from a file descriptor ("+op.raw+")")
		return true
	case !op.dyn && isNetPath(op.val):
		s.netIn = true
		w.markOpaque(idx, what+" runs a script read from a network connection ("+op.raw+")")
	case op.dyn:
		if segs, ok := w.procSubstArg(op); ok {
			w.feedShell(idx, w.substOutput(segs), "a script from a process substitution")
			return false
		}
		w.markOpaque(idx, what+" runs a script whose name is only known at run time ("+op.raw+")")
	case w.repl != "" && s.virtual && strings.Contains(op.val, w.repl):
		w.markOpaque(idx, what+" runs a script named by run-time input ("+op.raw+")")
	}
	return false
}

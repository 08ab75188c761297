package approvals

// Simple commands: expansion of their words, wrapper stripping and the
// segment record.

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// addSegment appends a segment and registers it with the pipeline stages
// being collected.
func (w *walker) addSegment(s Segment) int {
	w.a.budget++
	i := len(w.a.Segments)
	w.a.Segments = append(w.a.Segments, s)
	for _, c := range w.collectors {
		*c = append(*c, i)
	}
	return i
}

// call handles a simple command.
func (w *walker) call(c *syntax.CallExpr, redirs []*syntax.Redirect) {
	var substSegs []int
	for _, as := range c.Assigns {
		substSegs = append(substSegs, w.substsIn(as)...)
	}
	var psubs []psub
	for _, word := range c.Args {
		segs := w.substsIn(word)
		substSegs = append(substSegs, segs...)
		if ps := loneProcSubst(word); ps != nil && ps.Op == syntax.CmdIn {
			psubs = append(psubs, psub{raw: w.source(word), segs: segs})
		}
	}
	var redirSegs [][]int
	for k, r := range redirs {
		segs := w.substsIn(r)
		substSegs = append(substSegs, segs...)
		if len(segs) > 0 {
			if redirSegs == nil {
				redirSegs = make([][]int, len(redirs))
			}
			redirSegs[k] = segs
		}
	}
	assigns := make([]string, 0, len(c.Assigns))
	dynAssign, dollarAssign := false, false
	for _, as := range c.Assigns {
		w.bind(as)
		s, dyn, dollar := w.assignText(as)
		assigns = append(assigns, s)
		dynAssign, dollarAssign = dynAssign || dyn, dollarAssign || dollar
	}
	argv := w.expandWords(c.Args)
	saved := w.psubs
	w.psubs = psubs
	w.simple(argv, assigns, w.segmentText(c, redirs), redirs, redirSegs, substSegs, func(s *Segment) {
		s.Dynamic = s.Dynamic || dynAssign
		s.dollar = s.dollar || dollarAssign
	})
	w.psubs = saved
}

// assignText renders an assignment as NAME=value (value expanded when
// possible) and reports whether the value is only known at run time and
// whether it uses any $-form.
func (w *walker) assignText(as *syntax.Assign) (text string, dyn, dollar bool) {
	name := ""
	if as.Name != nil {
		name = as.Name.Value
	}
	switch {
	case as.Array != nil:
		return name + "=" + w.source(as.Array), true, true
	case as.Value != nil:
		v := w.joinedValue(as.Value)
		return name + "=" + v.val, v.dyn, v.dollar
	case as.Naked:
		return name, false, false
	}
	return name + "=", false, false
}

// bind records the value of an assignment (each element of an array)
// as a bound word (Analysis.bound).
func (w *walker) bind(as *syntax.Assign) {
	switch {
	case as.Array != nil:
		for _, e := range as.Array.Elems {
			if e.Value != nil {
				w.bindWords([]*syntax.Word{e.Value})
			}
		}
	case as.Value != nil:
		w.bindWords([]*syntax.Word{as.Value})
	}
}

// bindWords records the expanded words as bound (for and select lists,
// assignment values).
func (w *walker) bindWords(words []*syntax.Word) {
	for _, x := range w.expandWords(words) {
		w.a.bound = append(w.a.bound, boundWord{x: x, dir: w.dir})
	}
}

// segmentText is the source of a simple command with its redirects
// (here-document bodies excluded), white space collapsed.
func (w *walker) segmentText(c *syntax.CallExpr, redirs []*syntax.Redirect) string {
	start, end := c.Pos().Offset(), c.End().Offset()
	for _, r := range redirs {
		start = min(start, r.Pos().Offset())
		if r.Word != nil {
			end = max(end, r.Word.End().Offset())
		}
	}
	if int(end) > len(w.src) || start > end {
		return ""
	}
	return collapseSpace(w.src[start:end])
}

// simple records one simple command given as expanded words: it strips
// wrappers, records the segment, its redirects and targets, judges what it
// reads on standard input when it runs a script from there, and analyses
// any nested layer it starts. redirSegs holds the segments found in each
// redirect's substitutions (nil when there are none).
func (w *walker) simple(argv []arg, assigns []string, text string, redirs []*syntax.Redirect,
	redirSegs [][]int, substSegs []int, adjust func(*Segment)) {
	seg := Segment{
		Text: text, Depth: w.depth, InSubst: w.subst > 0, Assigns: assigns,
		dir: w.dir, substSegs: substSegs, level: w.subst, runtimeArgs: w.runtime, stdin: w.in,
	}
	for _, x := range argv {
		seg.Dynamic = seg.Dynamic || x.dyn
		seg.dollar = seg.dollar || x.dollar
	}
	u := w.unwrap(&seg, argv)
	if u.idx < len(argv) {
		cmd := argv[u.idx]
		seg.Name = strings.ToLower(path.Base(cmd.val))
		seg.plainName = isPlainCommandWord(cmd.val)
		seg.args = argv[u.idx+1:]
		if w.selfSpawn(cmd.val) {
			w.a.forkBomb = true
		}
		switch {
		case cmd.dyn:
			seg.opaque = "the command name is only known at run time (" + cmd.raw + ")"
		case w.repl != "" && strings.Contains(cmd.val, w.repl):
			seg.opaque = "the command name is only known at run time (" + cmd.raw + ")"
		}
	} else if len(u.wrappers) > 0 {
		// Only a wrapper is left (`env`, `exec` with redirects).
		seg.Name = u.wrappers[len(u.wrappers)-1]
		seg.plainName = true
		seg.Wrappers = u.wrappers[:len(u.wrappers)-1]
		seg.args = u.rest
	}
	if seg.Wrappers == nil {
		seg.Wrappers = u.wrappers
	}
	seg.Assigns = append(seg.Assigns, u.assigns...)
	seg.Args = make([]string, len(seg.args))
	for i, x := range seg.args {
		seg.Args[i] = x.val
	}
	if adjust != nil {
		adjust(&seg)
	}
	seg.spawns = len(u.nested) > 0
	if seg.opaque == "" {
		seg.opaque = u.opaque
	}
	for _, r := range redirs {
		if isFileOutput(r) {
			seg.fileOut = true
		}
	}
	ins := w.inputRedirects(redirs, redirSegs, &seg)
	ownStdin := lastStdin(ins)
	if ownStdin != nil {
		seg.stdin = ownStdin
	}
	idx := w.addSegment(seg)
	for _, t := range u.writes {
		w.addWrite(t, u.wrappers[len(u.wrappers)-1], idx, seg.dir)
	}
	dirBefore := w.dir // redirects are opened before cd/pushd run
	w.command(idx)
	w.redirects(redirs, idx, dirBefore)
	if w.a.Segments[idx].stdinScript {
		// Every input is judged, also here-documents on other descriptors
		// and redirects a later one overrides: more than runs, never less.
		for _, in := range ins {
			w.feedShell(idx, in.src, "a script from standard input")
		}
		if ownStdin == nil {
			w.feedShell(idx, w.in, "a script from standard input")
		}
	}
	if s := &w.a.Segments[idx]; ownStdin != nil && s.Name == "exec" && len(s.args) == 0 {
		w.in = ownStdin // exec < x: the rest of the script reads x
	}
	for _, n := range u.nested {
		w.a.Segments[idx].spawns = true
		if n.argv != nil {
			w.nestedArgv(n.argv, n.dir, false, "", w.a.Segments[idx].stdin)
		} else {
			w.nested(n.script, n.dir, w.a.Segments[idx].stdin)
		}
	}
}

// isPlainCommandWord reports a command word that names a program the usual
// way: a bare lower-case name, or a path in a system bin directory.
func isPlainCommandWord(s string) bool {
	if s == "" || strings.ToLower(s) != s {
		return false
	}
	if !strings.Contains(s, "/") {
		return true
	}
	switch path.Dir(s) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/opt/homebrew/bin":
		return true
	}
	return false
}

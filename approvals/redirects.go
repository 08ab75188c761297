package approvals

// Redirects and the file targets of commands.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func isFileOutput(r *syntax.Redirect) bool {
	if r.Word != nil && isDeviceSink(r.Word.Lit()) {
		return false
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		return true
	case syntax.DplOut:
		return r.Word != nil && !isFdWord(r.Word.Lit())
	}
	return false
}

// isFdWord reports the targets of descriptor copies: a number, "-", or a
// number followed by "-" (move).
func isFdWord(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// redirects records the files redirects write or read. Here-documents and
// here-strings fed to a shell that reads its script from standard input are
// analysed as nested scripts.
func (w *walker) redirects(rs []*syntax.Redirect, seg int, shellStdin bool, dir string) {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
			syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
			w.addWrite(w.joinedValue(r.Word), r.Op.String(), seg, dir)
		case syntax.DplOut:
			v := w.joinedValue(r.Word)
			if !v.dyn && isFdWord(v.val) {
				continue
			}
			w.addWrite(v, ">&", seg, dir)
		case syntax.RdrIn, syntax.DplIn:
			v := w.joinedValue(r.Word)
			if r.Op == syntax.DplIn && !v.dyn && isFdWord(v.val) {
				continue
			}
			w.a.Inputs = append(w.a.Inputs, w.target(v, "<", seg, dir))
		case syntax.Hdoc, syntax.DashHdoc:
			text, _ := w.heredocText(r)
			w.keepStdin(seg, text)
			if shellStdin {
				w.markSpawn(seg)
				w.nested(text, dir)
			}
		case syntax.WordHdoc:
			w.keepStdin(seg, w.joinedValue(r.Word).val)
			if shellStdin {
				v := w.joinedValue(r.Word)
				w.markSpawn(seg)
				if v.dyn {
					w.markOpaque(seg, "the script fed to the shell is only known at run time")
				} else {
					w.nested(v.val, dir)
				}
			}
		}
	}
}

// keepStdin remembers (the start of) the text a here-document feeds to a
// command, for the checks on interpreters.
func (w *walker) keepStdin(seg int, text string) {
	if seg < 0 {
		return
	}
	const keep = 64 << 10
	if s := &w.a.Segments[seg]; len(s.stdinText) < keep {
		s.stdinText += text[:min(len(text), keep)]
	}
}

func (w *walker) markSpawn(seg int) {
	if seg >= 0 {
		w.a.Segments[seg].spawns = true
	}
}

func (w *walker) markOpaque(seg int, why string) {
	if seg >= 0 && w.a.Segments[seg].opaque == "" {
		w.a.Segments[seg].opaque = why
	}
}

// target resolves a path argument relative to dir.
func (w *walker) target(v arg, op string, seg int, dir string) Target {
	t := Target{Raw: v.raw, Op: op, Segment: seg}
	if v.dyn {
		t.Dynamic = true
		return t
	}
	p, ok := joinPath(dir, v.val)
	if !ok {
		t.Dynamic = true
		return t
	}
	t.Path = p
	return t
}

func (w *walker) addWrite(v arg, op string, seg int, dir string) {
	w.a.Writes = append(w.a.Writes, w.target(v, op, seg, dir))
}

func (w *walker) addDelete(v arg, op string, seg int, dir string) {
	w.a.Deletes = append(w.a.Deletes, w.target(v, op, seg, dir))
}

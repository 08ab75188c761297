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

// redirects records the files redirects write or read. What input
// redirects feed to the command is judged by inputRedirects.
func (w *walker) redirects(rs []*syntax.Redirect, seg int, dir string) {
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
		}
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
	t.Path, t.joined = p, joinRaw(dir, v.val)
	return t
}

func (w *walker) addWrite(v arg, op string, seg int, dir string) {
	w.a.Writes = append(w.a.Writes, w.target(v, op, seg, dir))
}

func (w *walker) addDelete(v arg, op string, seg int, dir string) {
	w.a.Deletes = append(w.a.Deletes, w.target(v, op, seg, dir))
}

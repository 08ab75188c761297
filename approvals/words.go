package approvals

import (
	"errors"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxFieldsPerWord caps brace expansion of one word ({1..99999}); a word
// that would expand further is treated as unresolved.
const maxFieldsPerWord = 256

// arg is one field of a command line after static expansion.
type arg struct {
	val string // value after quote removal and the expansions we can do; for unresolved words the source text stands in for the unknown parts
	raw string // the word as written
	// dyn marks values only known at run time: parameters other than a
	// plain $HOME/$PWD, command/process substitutions, arithmetic, ~user,
	// or anything relative to an unknown directory.
	dyn bool
	// dollar marks any $-form at all (also a resolved $HOME or $'..').
	dollar bool
	// prefix is, for dyn words, the expanded static text in front of the
	// first unknown part.
	prefix string
}

var errDynamic = errors.New("dynamic word")

// staticEnv is the environment the expander sees: only HOME and PWD are
// known. Looking up another user's home ("HOME name", used for ~name) yields
// the unexpanded ~name so that expand never consults the user database.
type staticEnv struct{ home, pwd string }

func (e staticEnv) Get(name string) expand.Variable {
	switch {
	case name == "HOME" && e.home != "":
		return expand.Variable{Set: true, Kind: expand.String, Str: e.home}
	case name == "PWD" && e.pwd != "":
		return expand.Variable{Set: true, Kind: expand.String, Str: e.pwd}
	case strings.HasPrefix(name, "HOME "):
		return expand.Variable{Set: true, Kind: expand.String, Str: "~" + name[len("HOME "):]}
	}
	return expand.Variable{}
}

func (staticEnv) Each(func(string, expand.Variable) bool) {}

// newExpandConfig returns a locked-down expander configuration: no
// environment beyond HOME/PWD, unset variables are errors, command and
// process substitutions are errors, no globbing. expand mutates its config,
// so every call gets a fresh one.
func newExpandConfig(home, pwd string) *expand.Config {
	return &expand.Config{
		Env:       staticEnv{home: home, pwd: pwd},
		NoUnset:   true,
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", errDynamic },
	}
}

// knownParam reports a plain $HOME/$PWD (or ${HOME}/${PWD}) whose value is
// known.
func knownParam(pe *syntax.ParamExp, home, pwd string) bool {
	if pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.IsSet || pe.Index != nil ||
		pe.Slice != nil || pe.Repl != nil || pe.Exp != nil || pe.Names != 0 ||
		pe.NestedParam != nil || len(pe.Modifiers) > 0 || pe.Flags != nil {
		return false
	}
	switch pe.Param.Value {
	case "HOME":
		return home != ""
	case "PWD":
		return pwd != ""
	}
	return false
}

// wordInfo inspects the parts of a word: whether any $-form occurs and
// whether all of them can be expanded statically.
func wordInfo(parts []syntax.WordPart, home, pwd string) (dollar, unresolved bool) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			dollar = dollar || p.Dollar
		case *syntax.DblQuoted:
			d, u := wordInfo(p.Parts, home, pwd)
			dollar = dollar || d || p.Dollar
			unresolved = unresolved || u
		case *syntax.ParamExp:
			dollar = true
			unresolved = unresolved || !knownParam(p, home, pwd)
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			dollar, unresolved = true, true
		}
	}
	return dollar, unresolved
}

// placeholderParts replaces every part that cannot be expanded statically
// with a literal holding its source text, so the rest of the word can still
// be expanded. It also returns the index of the first replaced top-level
// part (len(parts) if none).
func (w *walker) placeholderParts(parts []syntax.WordPart) ([]syntax.WordPart, int) {
	out := make([]syntax.WordPart, len(parts))
	first := len(parts)
	for i, p := range parts {
		switch q := p.(type) {
		case *syntax.ParamExp:
			if knownParam(q, w.a.Home, w.dir) {
				out[i] = p
				continue
			}
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
		case *syntax.DblQuoted:
			inner, f := w.placeholderParts(q.Parts)
			if f < len(q.Parts) && first == len(parts) {
				first = i
			}
			out[i] = &syntax.DblQuoted{Left: q.Left, Right: q.Right, Dollar: q.Dollar, Parts: inner}
			continue
		default:
			out[i] = p
			continue
		}
		if first == len(parts) {
			first = i
		}
		out[i] = &syntax.Lit{ValuePos: p.Pos(), ValueEnd: p.End(), Value: w.source(p)}
	}
	return out, first
}

// expandWord expands one word into its fields.
func (w *walker) expandWord(word *syntax.Word) []arg {
	raw := w.source(word)
	// Fast path: a plain literal needs no expansion.
	if len(word.Parts) == 1 {
		if lit, ok := word.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, "\\~{") {
			return []arg{{val: lit.Value, raw: raw}}
		}
	}
	dollar, unresolved := wordInfo(word.Parts, w.a.Home, w.dir)
	tilde := w.tildeState(word)
	parts := word.Parts
	prefix := ""
	if unresolved {
		var first int
		parts, first = w.placeholderParts(word.Parts)
		if first > 0 {
			if f, ok := w.expandParts(word.Parts[:first]); ok && len(f) == 1 {
				prefix = f[0]
			}
		}
	}
	fields, ok := w.expandParts(parts)
	if !ok {
		return []arg{{val: raw, raw: raw, dyn: true, dollar: dollar}}
	}
	out := make([]arg, len(fields))
	for i, f := range fields {
		out[i] = arg{val: f, raw: raw, dyn: unresolved || tilde == tildeUnresolved, dollar: dollar, prefix: prefix}
	}
	return out
}

// expandParts runs the static expander over some word parts.
func (w *walker) expandParts(parts []syntax.WordPart) ([]string, bool) {
	if len(parts) == 0 {
		return []string{""}, true
	}
	var fields []string
	cfg := newExpandConfig(w.a.Home, w.dir)
	for f, err := range expand.FieldsSeq(cfg, &syntax.Word{Parts: parts}) {
		if err != nil || len(fields) >= maxFieldsPerWord {
			return nil, false
		}
		fields = append(fields, f)
	}
	return fields, true
}

type tildeKind int

const (
	tildeNone tildeKind = iota
	tildeHome
	tildeUnresolved // ~name, or ~ without a known HOME
)

// tildeState reports whether the word starts with an unquoted tilde prefix
// that the shell expands.
func (w *walker) tildeState(word *syntax.Word) tildeKind {
	lit, ok := word.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(lit.Value, "~") {
		return tildeNone
	}
	name, _, hasSlash := strings.Cut(lit.Value[1:], "/")
	if !hasSlash && len(word.Parts) > 1 {
		return tildeNone // "~'x'" is not expanded
	}
	if name == "" && w.a.Home != "" {
		return tildeHome
	}
	if name == "+" || name == "-" {
		return tildeUnresolved // ~+ and ~- are $PWD/$OLDPWD
	}
	return tildeUnresolved
}

// expandWords expands a list of words (command arguments).
func (w *walker) expandWords(words []*syntax.Word) []arg {
	if w.a.words += len(words); w.a.words > maxWords {
		w.a.budget = maxSegments + 1 // too complex: fails closed
		return nil
	}
	out := make([]arg, 0, len(words))
	for _, word := range words {
		out = append(out, w.expandWord(word)...)
	}
	return out
}

// joinedValue expands a word that must yield a single string (redirect
// targets, assignment values); several fields are joined with spaces.
func (w *walker) joinedValue(word *syntax.Word) arg {
	if word == nil || len(word.Parts) == 0 {
		return arg{}
	}
	fields := w.expandWord(word)
	if len(fields) == 1 {
		return fields[0]
	}
	a := fields[0]
	vals := make([]string, len(fields))
	for i, f := range fields {
		vals[i] = f.val
		a.dyn = a.dyn || f.dyn
	}
	a.val = strings.Join(vals, " ")
	return a
}

// heredocText returns the text a here-document feeds to its command and
// whether it contains run-time expansions. With a quoted delimiter the body
// is literal; <<- removes the leading tabs of every line.
func (w *walker) heredocText(r *syntax.Redirect) (string, bool) {
	text, dyn := w.heredocBody(r)
	if r.Op == syntax.DashHdoc && (strings.HasPrefix(text, "\t") || strings.Contains(text, "\n\t")) {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		text = strings.Join(lines, "\n")
	}
	return text, dyn
}

func (w *walker) heredocBody(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", false
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				quoted = quoted || strings.Contains(p.Value, "\\")
			default:
				quoted = true
			}
		}
	}
	if quoted {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if lit, ok := p.(*syntax.Lit); ok {
				b.WriteString(lit.Value)
			}
		}
		return b.String(), false
	}
	_, unresolved := wordInfo(r.Hdoc.Parts, w.a.Home, w.dir)
	parts := r.Hdoc.Parts
	if unresolved {
		parts, _ = w.placeholderParts(parts)
	}
	doc, err := expand.Document(newExpandConfig(w.a.Home, w.dir), &syntax.Word{Parts: parts})
	if err != nil {
		return w.source(r.Hdoc), true
	}
	return doc, unresolved
}

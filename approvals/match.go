package approvals

import (
	"regexp"
	"strings"
)

// Size limits of the matchers (lesson 1). Inputs above MaxMatchInput are not
// examined: deny rules treat them as a hit and allow rules as a miss.
const (
	MaxPatternLen = 4096
	MaxMatchInput = 1 << 20
	// maxPathLen bounds a path handed to the glob matcher, whose run time
	// grows with pattern times path length.
	maxPathLen = 4096
)

// wildcard is a compiled command pattern: '*' matches any run of characters
// (spaces and '/' included), '?' exactly one character, everything else
// itself; the pattern is anchored at both ends.
//
// Hand-written on purpose: the pattern is translated into an RE2 regular
// expression. Go's regexp package guarantees run time linear in the input
// (no backtracking), which a naive recursive '*' matcher would not. Literal
// patterns skip the regexp entirely.
type wildcard struct {
	literal string         // pattern without wildcards
	exact   bool           // literal is the whole pattern
	re      *regexp.Regexp // case-sensitive
	fold    *regexp.Regexp // case-insensitive (deny rules)
}

func compileWildcard(pat string) (*wildcard, error) {
	w := &wildcard{}
	if !strings.ContainsAny(pat, "*?") {
		w.literal, w.exact = pat, true
		return w, nil
	}
	var b strings.Builder
	b.WriteString(`^`)
	for _, r := range pat {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	var err error
	if w.re, err = regexp.Compile(`(?s)` + b.String()); err != nil {
		return nil, err
	}
	if w.fold, err = regexp.Compile(`(?is)` + b.String()); err != nil {
		return nil, err
	}
	return w, nil
}

// match reports whether s matches. With fold the comparison ignores case.
func (w *wildcard) match(s string, fold bool) bool {
	if w.exact {
		if fold {
			return strings.EqualFold(w.literal, s)
		}
		return w.literal == s
	}
	if fold {
		return w.fold.MatchString(s)
	}
	return w.re.MatchString(s)
}

// wordPrefix reports whether text equals prefix or starts with prefix
// followed by a space (a match on whole words).
func wordPrefix(text, prefix string) bool {
	if prefix == "" {
		return false
	}
	return text == prefix || strings.HasPrefix(text, prefix+" ")
}

// collapseSpace removes line continuations and turns every run of white space
// into one space, trimming both ends.
func collapseSpace(s string) string {
	if strings.Contains(s, "\\\n") {
		s = strings.ReplaceAll(s, "\\\r\n", "")
		s = strings.ReplaceAll(s, "\\\n", "")
	}
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
			(c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ')) {
			simple = false
			break
		}
	}
	if simple {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

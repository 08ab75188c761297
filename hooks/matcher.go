package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Matcher selects the tool calls a PreToolUse/PostToolUse group applies to
// (spec §6). The zero value (and nil) matches every tool.
type Matcher struct {
	all  bool
	re   *regexp.Regexp
	alts []alt
}

type alt struct {
	name   string
	arg    string
	hasArg bool
}

// ParseMatcher compiles a matcher string. Only a /regex/ that does not
// compile (or carries an unknown flag) is an error.
func ParseMatcher(s string) (*Matcher, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "*" {
		return &Matcher{all: true}, nil
	}
	if re, ok, err := parseRegex(s); ok {
		if err != nil {
			return nil, err
		}
		return &Matcher{re: re}, nil
	}
	m := &Matcher{}
	for _, a := range splitAlternatives(s) {
		if i := strings.IndexByte(a, '('); i > 0 && strings.HasSuffix(a, ")") {
			m.alts = append(m.alts, alt{name: strings.TrimSpace(a[:i]), arg: a[i+1 : len(a)-1], hasArg: true})
			continue
		}
		m.alts = append(m.alts, alt{name: a})
	}
	if len(m.alts) == 0 {
		m.all = true
	}
	return m, nil
}

// parseRegex recognises the /source/flags form. JavaScript flags map to Go
// inline flags; g and y (stateful in JS) are dropped.
func parseRegex(s string) (*regexp.Regexp, bool, error) {
	if len(s) < 2 || s[0] != '/' {
		return nil, false, nil
	}
	end := strings.LastIndexByte(s, '/')
	if end == 0 {
		return nil, false, nil
	}
	src, flags := s[1:end], s[end+1:]
	inline := ""
	for _, f := range flags {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(inline, f) {
				inline += string(f)
			}
		case 'g', 'y', 'u':
		default:
			return nil, true, fmt.Errorf("invalid regular expression flags %q", flags)
		}
	}
	if inline != "" {
		src = "(?" + inline + ")" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, true, fmt.Errorf("invalid regular expression %s: %w", s, err)
	}
	return re, true, nil
}

// splitAlternatives splits on | outside parentheses, trimming each part and
// dropping empty ones.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	add := func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case '|':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// MayMatch reports whether the matcher could match a call of tool,
// looking at the name only (argument patterns count as maybe).
func (m *Matcher) MayMatch(tool string) bool {
	switch {
	case m == nil || m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(tool)
	}
	for _, a := range m.alts {
		if glob(a.name, tool) {
			return true
		}
	}
	return false
}

// Match reports whether the matcher matches a call of tool with input.
func (m *Matcher) Match(tool string, input json.RawMessage) bool {
	switch {
	case m == nil || m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(tool)
	}
	arg, argDone := "", false
	for _, a := range m.alts {
		if !glob(a.name, tool) {
			continue
		}
		if !a.hasArg {
			return true
		}
		if !argDone {
			arg, argDone = ArgumentText(tool, input), true
		}
		if glob(a.arg, arg) {
			return true
		}
	}
	return false
}

// ArgumentText is the text an argument pattern is matched against: bash's
// command, else the first string among path, file_path and pattern, a
// string input itself, else the input's compact JSON.
func ArgumentText(tool string, input json.RawMessage) string {
	var str string
	if json.Unmarshal(input, &str) == nil {
		return str
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) == nil {
		keys := []string{"path", "file_path", "pattern"}
		if tool == "bash" {
			keys = append([]string{"command"}, keys...)
		}
		for _, k := range keys {
			if raw, ok := obj[k]; ok && json.Unmarshal(raw, &str) == nil {
				return str
			}
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, input) == nil {
		return b.String()
	}
	return string(input)
}

// glob matches s against pattern, anchored: * is any run of characters
// (including /), ? one character, everything else literal. Written here
// because path globs (doublestar, path.Match) treat / and [ specially,
// which the hook grammar does not.
func glob(pattern, s string) bool {
	p, n := []rune(pattern), []rune(s)
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || (p[pi] != '*' && p[pi] == n[ni])):
			pi++
			ni++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

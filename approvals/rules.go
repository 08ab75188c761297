package approvals

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrInvalidRule is wrapped by ParseRule for malformed rules.
var ErrInvalidRule = errors.New("invalid permission rule")

// BuiltinDeny are the deny rules enabled by default in every mode. They
// apply to the file tools only, not to bash.
var BuiltinDeny = []string{
	"write(**/.git/**)",
	"edit(**/.git/**)",
	"read(**/.ssh/**)",
	"write(**/.ssh/**)",
	"edit(**/.ssh/**)",
}

// maxGlobBraces bounds brace groups in a path pattern (each group
// multiplies the work of the glob matcher).
const maxGlobBraces = 16

// Rule is a parsed permission rule, `tool` or `tool(pattern)`.
//
// The tool part is a glob over tool names (letters, digits, '_', '-', '.',
// ':', '*', '?'), compared without regard to case. For bash the pattern is a
// wildcard over a command text; for tools with a path argument it is a path
// glob (doublestar syntax: **, *, ?, [..], {a,b}); for the memory tool it is
// a command name or a glob over the logical memory path.
//
// A malformed rule still yields a Rule (together with the error): used as a
// deny rule it matches every call of its tool, or every call at all when
// even the tool part is unusable; used as an allow rule it matches nothing.
type Rule struct {
	text    string
	tool    string
	pattern string
	hasPat  bool
	err     error
	badTool bool
	toolW   *wildcard
	cmdW    *wildcard // the pattern as a command wildcard (white space collapsed)
	pathOK  bool      // the pattern is a valid path glob
}

// ParseRule parses one rule.
func ParseRule(s string) (Rule, error) {
	r := Rule{text: strings.TrimSpace(s)}
	fail := func(why string) (Rule, error) {
		r.err = fmt.Errorf("%w %q: %s", ErrInvalidRule, r.text, why)
		return r, r.err
	}
	if r.text == "" {
		r.badTool = true
		return fail("empty")
	}
	name, rest, paren := strings.Cut(r.text, "(")
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "@"))
	if !validToolGlob(name) {
		r.badTool = true
		return fail("the tool name may only hold letters, digits, _ - . : * ?")
	}
	r.tool = name
	w, err := compileWildcard(name)
	if err != nil {
		r.badTool = true
		return fail(err.Error())
	}
	r.toolW = w
	if !paren {
		return r, nil
	}
	pat, ok := strings.CutSuffix(rest, ")")
	switch {
	case !ok:
		return fail("unbalanced parentheses")
	case !balanced(pat):
		return fail("unbalanced parentheses")
	case strings.TrimSpace(pat) == "":
		return fail("empty pattern")
	case len(pat) > MaxPatternLen:
		return fail(fmt.Sprintf("pattern longer than %d characters", MaxPatternLen))
	}
	r.pattern, r.hasPat = strings.TrimSpace(pat), true
	if r.cmdW, err = compileWildcard(collapseSpace(r.pattern)); err != nil {
		return fail(err.Error())
	}
	r.pathOK = doublestar.ValidatePattern(r.pattern) && strings.Count(r.pattern, "{") <= maxGlobBraces
	if !r.pathOK && r.tool != "bash" && r.tool != "memory" {
		return fail("invalid path glob")
	}
	return r, nil
}

func validToolGlob(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_-.:*?", c) >= 0) {
			return false
		}
	}
	return true
}

func balanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// String returns the rule as written.
func (r Rule) String() string { return r.text }

// Tool returns the tool-name glob (lower case), "" when unparsable.
func (r Rule) Tool() string { return r.tool }

// Pattern returns the pattern and whether the rule has one.
func (r Rule) Pattern() (string, bool) { return r.pattern, r.hasPat }

// Err returns why the rule is malformed, or nil.
func (r Rule) Err() error { return r.err }

// forTool reports whether the rule's tool glob names the tool.
func (r *Rule) forTool(tool string) bool {
	return r.unusable() || r.toolW.match(tool, true)
}

// unusable reports a rule whose tool part cannot be used, including the
// zero Rule.
func (r *Rule) unusable() bool { return r.badTool || r.toolW == nil }

// denyMatch reports whether the rule, used as a deny rule, hits the call.
// It fails closed: malformed rules, oversized input, unresolvable paths and
// commands that cannot be analysed count as hits.
func (r *Rule) denyMatch(c *callCtx) bool {
	if !r.forTool(c.tool) {
		return false
	}
	if r.unusable() || r.err != nil || !r.hasPat {
		return true
	}
	switch {
	case c.isBash:
		return r.denyBash(c)
	case c.isMemory:
		return r.memoryMatch(c, true)
	case c.hasPath:
		if !c.pathOK || len(c.path) > maxPathLen || !r.pathOK {
			return true
		}
		for _, sp := range c.spells { // any name of the path
			if len(sp.path) > maxPathLen || pathRuleMatch(r.pattern, sp.path, sp.cwd, sp.home, true) {
				return true
			}
		}
		return false
	}
	// A pattern has nothing to match on a tool without a path (an MCP or
	// host tool): ama lets such a deny rule match nothing, which fails open
	// for a user who wrote mcp__srv__drop(prod*). Here it fails closed: the
	// rule hits every call of the tools it names (deny and ask alike).
	return true
}

func (r *Rule) denyBash(c *callCtx) bool {
	if c.bgQuery {
		return false
	}
	a := c.bash
	if a == nil || a.Err != nil || len(c.command) > MaxMatchInput {
		return true
	}
	hit := func(t string) bool {
		return t != "" && (r.cmdW.match(t, true) || r.cmdW.match(t+" ", true))
	}
	if hit(a.collapsed) {
		return true
	}
	for _, t := range a.layerTexts {
		if hit(t) {
			return true
		}
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		if hit(s.Text) || hit(strippedText(s)) {
			return true
		}
		if len(s.Wrappers) > 0 || len(s.Assigns) > 0 {
			if hit(strings.Join(append(append([]string{}, s.Wrappers...), strippedText(s)), " ")) {
				return true
			}
		}
	}
	return false
}

// allowMatch reports whether the rule, used as an allow rule, covers a
// non-bash call. Malformed rules never match.
func (r *Rule) allowMatch(c *callCtx) bool {
	if r.unusable() || r.err != nil || !r.toolW.match(c.tool, true) {
		return false
	}
	if !r.hasPat {
		return true
	}
	switch {
	case c.isBash:
		return false // see bashCovered
	case c.isMemory:
		return r.memoryMatch(c, false)
	case c.hasPath:
		if !c.pathOK || len(c.path) > maxPathLen || !r.pathOK {
			return false
		}
		for _, sp := range c.spells { // a name of the file really touched
			if sp.real && len(sp.path) <= maxPathLen && pathRuleMatch(r.pattern, sp.path, sp.cwd, sp.home, false) {
				return true
			}
		}
		return false
	}
	return false
}

// memoryMatch matches the memory tool: "*"/"**" for everything, a command
// name, or a glob over the logical memory paths (never real paths).
func (r *Rule) memoryMatch(c *callCtx, deny bool) bool {
	p := r.pattern
	if p == "*" || p == "**" || p == c.memCmd {
		return true
	}
	if len(c.memPaths) == 0 || !r.pathOK {
		return false
	}
	for _, mp := range c.memPaths {
		ok, _ := doublestar.Match(p, mp)
		if deny && ok {
			return true
		}
		if !deny && !ok {
			return false
		}
	}
	return !deny
}

// bashCovered reports whether allow rules cover a bash command: a bare bash
// rule covers everything that could be analysed; otherwise every segment of
// every layer must be matched by a pattern rule, there must be no
// substitution, no compound structure and no excessive nesting, and an output
// redirect into a file must be written in the pattern.
func bashCovered(rules []Rule, a *Analysis) (*Rule, bool) {
	if a == nil || a.Err != nil || a.TooDeep {
		return nil, false
	}
	var patterned []*Rule
	for i := range rules {
		r := &rules[i]
		if r.unusable() || r.err != nil || !r.toolW.match("bash", true) {
			continue
		}
		if !r.hasPat {
			return r, true
		}
		patterned = append(patterned, r)
	}
	if len(patterned) == 0 || a.Subst || a.Compound || len(a.Segments) == 0 || len(a.Command) > MaxMatchInput {
		return nil, false
	}
	var first *Rule
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.opaque != "" {
			return nil, false
		}
		covered := false
		for _, r := range patterned {
			if r.cmdW.match(s.Text, false) && (!s.fileOut || strings.Contains(r.pattern, ">")) {
				covered = true
				if first == nil {
					first = r
				}
				break
			}
		}
		if !covered {
			return nil, false
		}
	}
	return first, true
}

// pathRuleMatch matches a path glob against an absolute path. Patterns
// starting with / or ~ (or $HOME) are matched against the absolute path;
// relative patterns against the path relative to cwd (only for paths inside
// it); patterns starting with ** also against the absolute path. "**", "*"
// and "." also match cwd itself. With fold, case is ignored (deny rules).
func pathRuleMatch(pat, abs, cwd, home string, fold bool) bool {
	if fold {
		pat, abs, cwd, home = strings.ToLower(pat), strings.ToLower(abs), strings.ToLower(cwd), strings.ToLower(home)
	}
	for _, pre := range [...]string{"~", "$home", "${home}", "$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(pat, pre); ok && (rest == "" || rest[0] == '/') {
			if home == "" {
				return false
			}
			pat = home + rest
			break
		}
	}
	if strings.HasPrefix(pat, "/") {
		return globMatch(pat, abs)
	}
	if cwd = cleanDir(cwd); cwd != "" && within(abs, cwd) {
		rel := strings.TrimPrefix(abs[len(cwd):], "/")
		if rel == "" {
			if pat == "**" || pat == "*" || pat == "." || pat == "./" {
				return true
			}
		} else if globMatch(strings.TrimPrefix(pat, "./"), rel) {
			return true
		}
	}
	if strings.HasPrefix(pat, "**") {
		return globMatch(pat, abs) || globMatch(pat, strings.TrimPrefix(abs, "/"))
	}
	return false
}

func globMatch(pat, name string) bool {
	ok, err := doublestar.Match(pat, name)
	return err == nil && ok
}

package templates

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`a "b c" 'd e' f\ g "x\"y" ''`, []string{"a", "b c", "d e", "f g", `x"y`, ""}},
		{"  \t\n ", nil},
		{"", nil},
		{`pre"fix"'ed' x`, []string{"prefixed", "x"}},
		{`"a\\b" "c\d"`, []string{`a\b`, `c\d`}},
		{"one\ntwo", []string{"one", "two"}},
		{`'open quote`, []string{"open quote"}},
		{`tail\`, []string{`tail\`}},
		{`""`, []string{""}},
	} {
		if got := SplitArgs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	three := []string{"one", "two", "three"}
	for _, c := range []struct {
		body string
		args []string
		want string
	}{
		{"$1 and $2", three, "one and two"},
		{"${4:-dflt}", three, "dflt"},
		{"${2:-dflt}", []string{"a", ""}, "dflt"},
		{"${@:2}", three, "two three"},
		{"${@:2:1}", three, "two"},
		{"${@:0}", three, "one two three"},
		{"${@:9}", three, ""},
		{"${@:2:99}", three, "two three"},
		{"${@:99999999999999999999999}", three, ""},
		{"$9|", three, "|"},
		{"$0|", three, "|"},
		{"cost \\$5 for $1", three, "cost $5 for one"},
		{"x ${@:-none}", nil, "x none"},
		{"x ${@:-none}", three, "x one two three"},
		{"$@ / $ARGUMENTS / ${@}", three, "one two three / one two three / one two three"},
		{"${ARGUMENTS}", three, "${ARGUMENTS}\n\none two three"},
		{"${1}${2}", three, "onetwo"},
		{"${2:5}", three, "two"},
		{"$$1", three, "$one"},
		{"end $", three, "end $\n\none two three"},
		{"${1", three, "${1\n\none two three"},
		{"Summarize.\n", []string{"focus", "tests"}, "Summarize.\n\nfocus tests"},
		{"Summarize.\n", nil, "Summarize.\n"},
		{"only \\$ escaped", nil, "only \\$ escaped"},
		{"only \\$ escaped", []string{"x"}, "only \\$ escaped\n\nx"},
		{"$1 ${1:-d}", []string{"$2"}, "$2 $2"}, // never rescanned
		{"Fix issue $1 in ${2:-the whole repo}. All: $@\n", []string{"42", "auth module"}, "Fix issue 42 in auth module. All: 42 auth module\n"},
		{"Fix issue $1 in ${2:-the whole repo}. All: $@\n", []string{"7"}, "Fix issue 7 in the whole repo. All: 7\n"},
		{"Ship ${@:2} to $1\n", []string{"prod", "a", "b"}, "Ship a b to prod\n"},
	} {
		if got := Expand(c.body, c.args); got != c.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", c.body, c.args, got, c.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		in, name, args string
		ok             bool
	}{
		{"/fix", "fix", "", true},
		{"  /fix 42 \"a b\"  ", "fix", `42 "a b"`, true},
		{"/fix\t\tx\ny", "fix", "x\ny", true},
		{"/fix\nmore", "", "", false},
		{"/skill:x", "", "", false},
		{"/_x", "", "", false},
		{"fix", "", "", false},
		{"/", "", "", false},
		{"/Up-2_x a", "Up-2_x", "a", true},
	} {
		name, args, ok := Match(c.in)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("Match(%q) = %q %q %v, want %q %q %v", c.in, name, args, ok, c.name, c.args, c.ok)
		}
	}
}

func TestFrontMatter(t *testing.T) {
	for _, c := range []struct {
		text     string
		meta     map[string]string
		wantBody string
	}{
		{"---\ndescription: Fix an issue\nargument-hint: \"<issue> [area]\"\n---\nbody\n", map[string]string{"description": "Fix an issue", "argument-hint": "<issue> [area]"}, "body\n"},
		{" --- \ndescription: 'it''s' # c\n...\nb", map[string]string{"description": "it's"}, "b"},
		{"---\ndescription: no close\nbody", map[string]string{}, "---\ndescription: no close\nbody"},
		{"---\nn: 12\nb: true\nz: ~\narr: [a, b]\nblock:\n  - x\nmap: {a: 1}\nlit: |\n  text\ns: bare # comment\nq: \"a\\u00e9\" x\n---\n", map[string]string{"s": "bare"}, ""},
	} {
		front, body, _ := SplitFrontMatter(normalize(c.text))
		if got := Strings(front); !reflect.DeepEqual(got, c.meta) {
			t.Errorf("%q: meta %q, want %q", c.text, got, c.meta)
		}
		if body != c.wantBody {
			t.Errorf("%q: body %q, want %q", c.text, body, c.wantBody)
		}
	}
}

func TestFirstLineCut(t *testing.T) {
	if got := firstLine("\n\n  # Title  \nmore"); got != "# Title" {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("é", 79) + "😀x"
	if got := firstLine(long); got != strings.Repeat("é", 79) {
		t.Errorf("cut inside a surrogate pair: %q", got)
	}
}

// FuzzParse: the front matter parser and the expander never panic, keep
// valid UTF-8 valid, and return the body unchanged when no argument is
// given and no placeholder expands.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\ndescription: \"x\\\"y\"\n---\nFix $1 ${2:-d} $@",
		"${@:2:1} \\$ ${@:-n} $ARGUMENTS ${",
		"---\n- a\n  b: c\n'x': 'y\n...\n",
	} {
		f.Add(s, `a "b c" '' d\ e`)
	}
	f.Fuzz(func(t *testing.T, text, argText string) {
		front, body, _ := SplitFrontMatter(normalize(text))
		meta := Strings(front)
		if utf8.ValidString(text) {
			for k, v := range meta {
				if !utf8.ValidString(k) || !utf8.ValidString(v) {
					t.Fatalf("invalid UTF-8 out of valid input: %q: %q", k, v)
				}
			}
		}
		args := SplitArgs(argText)
		out := Expand(body, args)
		if utf8.ValidString(body) && utf8.ValidString(argText) && !utf8.ValidString(out) {
			t.Fatalf("Expand made invalid UTF-8: %q", out)
		}
		if len(args) == 0 && !strings.Contains(body, "$") && out != body {
			t.Fatalf("no $ and no args: %q became %q", body, out)
		}
		Match(text)
	})
}

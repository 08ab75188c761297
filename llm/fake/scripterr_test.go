package fake

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad script keeps the parser's reason: the file, the position and what
// was expected.
func TestLoadScriptKeepsReason(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ body, want string }{
		{"{\"version\":1,\n \"responses\":[{\"text\":\"a\"},\n  {\"steps\":[{\"text\":1}]}]}", "line 3, column 22: responses.steps.text must be string, not JSON number"},
		{"[{\"text\":\"a\"},\n {\"text\":\"b\",}]", "line 2, column 15: invalid character '}'"},
		{`[{"steps":[{"text":"a","delayMs":5}]}]`, "responses[0].steps[0] must have exactly one of"},
		{`{"version":2,"responses":[]}`, "unsupported version 2"},
		{`[{"text":"a"}`, "unexpected end of the script"},
		{"[{\"text\":\"a\"},\n {\"steps\":[{\"txt\":\"b\"}]}]", `line 2, column 13: unknown field "txt"`},
	}
	for i, c := range cases {
		p := filepath.Join(dir, "s.json")
		if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadScript(p)
		if !errors.Is(err, ErrInvalidScript) {
			t.Fatalf("case %d: %v is not ErrInvalidScript", i, err)
		}
		if msg := err.Error(); !strings.Contains(msg, p) || !strings.Contains(msg, c.want) || strings.Count(msg, "invalid fake script") != 1 {
			t.Errorf("case %d: %q lacks %q (or repeats the prefix)", i, msg, c.want)
		}
	}
}

package plan_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/plan"
)

func lines(ls ...string) string { return strings.Join(ls, "\n") }

func TestExtract(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
		ok   bool
	}{
		{"none", "just prose", "", false},
		{"empty", "", "", false},
		{"simple", lines("intro", "<proposed_plan>", "# T", "- [ ] S1 a", "</proposed_plan>", "outro"), "# T\n- [ ] S1 a", true},
		{"reference reply", lines("<proposed_plan>", "# Add greeting", "## Steps", "- [ ] S1 Read src/hello.ts", "</proposed_plan>"), "# Add greeting\n## Steps\n- [ ] S1 Read src/hello.ts", true},
		{"unclosed", lines("<proposed_plan>", "# T"), "", false},
		{"unclosed after complete", lines("<proposed_plan>", "A", "</proposed_plan>", "<proposed_plan>", "B"), "A", true},
		{"close without open", lines("</proposed_plan>", "A"), "", false},
		{"several blocks last wins", lines("<proposed_plan>", "A", "</proposed_plan>", "x", "<proposed_plan>", "B", "</proposed_plan>"), "B", true},
		{"crlf", "<proposed_plan>\r\n# T\r\n\r\nbody\r\n</proposed_plan>\r\n", "# T\n\nbody", true},
		{"tags with surrounding spaces", lines("  <proposed_plan>\t", "A", " \t</proposed_plan>  "), "A", true},
		{"open tag not alone", lines("Here: <proposed_plan>", "A", "</proposed_plan>"), "", false},
		{"close tag not alone", lines("<proposed_plan>", "A", "</proposed_plan> done"), "", false},
		{"one line", "<proposed_plan>A</proposed_plan>", "", false},
		{"tag with different case", lines("<PROPOSED_PLAN>", "A", "</PROPOSED_PLAN>"), "", false},
		{"blank lines trimmed", lines("<proposed_plan>", "", "  ", "A", "", "B", "\t", "</proposed_plan>"), "A\n\nB", true},
		{"all blank", lines("<proposed_plan>", "", "   ", "</proposed_plan>"), "", false},
		{"empty block", lines("<proposed_plan>", "</proposed_plan>"), "", false},
		{"blank last block hides earlier", lines("<proposed_plan>", "A", "</proposed_plan>", "<proposed_plan>", " ", "</proposed_plan>"), "", false},
		{"backtick fence hides tags", lines("```", "<proposed_plan>", "A", "</proposed_plan>", "```"), "", false},
		{"tilde fence hides tags", lines("~~~md", "<proposed_plan>", "A", "</proposed_plan>", "~~~"), "", false},
		{"block after fence", lines("```", "<proposed_plan>", "A", "</proposed_plan>", "```", "<proposed_plan>", "B", "</proposed_plan>"), "B", true},
		{"indented fence", lines("   ```go", "<proposed_plan>", "A", "</proposed_plan>", "  ```"), "", false},
		{"other marker does not close", lines("~~~", "```", "<proposed_plan>", "A", "</proposed_plan>", "~~~"), "", false},
		{"unclosed fence hides the rest", lines("```", "<proposed_plan>", "A", "</proposed_plan>"), "", false},
		{"fence inside block kept", lines("<proposed_plan>", "A", "```", "</proposed_plan>", "```", "B", "</proposed_plan>"), "A\n```\n</proposed_plan>\n```\nB", true},
		{"nested looking", lines("<proposed_plan>", "A", "<proposed_plan>", "B", "</proposed_plan>", "</proposed_plan>"), "B", true},
		{"lone CR kept", "<proposed_plan>\na\rb\n</proposed_plan>", "a\rb", true},
		{"full-width space around tag", "\u3000<proposed_plan>\u3000\nA\n</proposed_plan>", "A", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := plan.Extract(tt.text)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Extract(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestFromEdited(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"tagged", lines("Edited:", "<proposed_plan>", "# New", "</proposed_plan>"), "# New"},
		{"plain", "\n\n  # New\n- [ ] S1 a\n\n", "# New\n- [ ] S1 a"},
		{"blank tagged block is plain text", lines("<proposed_plan>", "", "</proposed_plan>"), "<proposed_plan>\n\n</proposed_plan>"},
		{"empty", "  ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plan.FromEdited(tt.text); got != tt.want {
				t.Errorf("FromEdited(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

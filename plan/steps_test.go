package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/plan"
)

// st builds a step; deps and agent are optional.
func st(id, text string, deps ...string) plan.Step {
	return plan.Step{ID: id, Text: text, DependsOn: deps}
}

func TestParseSteps(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want []plan.Step
	}{
		{"empty", "", []plan.Step{}},
		{"no lists", "# Title\nprose only\n- bullet", []plan.Step{}},
		{"reference plan", lines("# Add greeting", "## Steps", "- [ ] S1 Read src/hello.ts", "- [ ] S2 Add the greeting [depends: S1]", "## Verification", "- pnpm test"),
			[]plan.Step{st("S1", "Read src/hello.ts"), st("S2", "Add the greeting", "S1")}},

		// Checkbox items.
		{"checkbox positions", lines("- [ ] first", "* [x] second", "+ [~] third", "- [X] fourth"),
			[]plan.Step{st("S1", "first"), st("S2", "second"), st("S3", "third"), st("S4", "fourth")}},
		{"checkbox one leading space", " - [ ] a", []plan.Step{st("S1", "a")}},
		{"checkbox two leading spaces ignored", lines("- [ ] a", "  - [ ] nested"), []plan.Step{st("S1", "a")}},
		{"checkbox needs text", lines("- [ ]", "- [ ] a"), []plan.Step{st("S1", "a")}},
		{"checkbox bad mark", lines("- [y] no", "- [] no", "- [ ] yes"), []plan.Step{st("S1", "yes")}},
		{"checkbox anywhere wins over numbered", lines("## Steps", "1. numbered", "## Notes", "- [ ] box"), []plan.Step{st("S1", "box")}},
		{"checkbox full-width spaces", "-\u3000[ ]\u3000task", []plan.Step{st("S1", "task")}},
		{"checkbox crlf", "- [ ] a\r\n- [ ] b\r\n", []plan.Step{st("S1", "a"), st("S2", "b")}},
		{"checkbox in fences ignored", lines("```", "- [ ] fenced", "```", "~~~", "- [ ] tilde", "~~~", "- [ ] real"), []plan.Step{st("S1", "real")}},
		{"checkbox in unclosed fence ignored", lines("- [ ] real", "```", "- [ ] fenced"), []plan.Step{st("S1", "real")}},

		// Numbered items.
		{"numbered anywhere", lines("intro", "1. a", "text", "3) b"), []plan.Step{st("S1", "a"), st("S3", "b")}},
		{"numbered leading space", lines(" 1. a", "  2. nested"), []plan.Step{st("S1", "a")}},
		{"numbered four digits ignored", lines("1000. x", "7. y"), []plan.Step{st("S7", "y")}},
		{"numbered keeps digits", "01. a", []plan.Step{st("S01", "a")}},
		{"steps heading scopes", lines("## Context", "1. ctx", "## Steps", "1. a", "2. b", "### Details", "3. c", "## Verification", "1. v"),
			[]plan.Step{st("S1", "a"), st("S2", "b"), st("S3", "c")}},
		{"higher level heading ends", lines("## Implementation", "1. a", "# Next", "2. b"), []plan.Step{st("S1", "a")}},
		{"same level heading ends", lines("### Steps", "1. a", "#### Sub", "2. b", "### Other", "3. c"), []plan.Step{st("S1", "a"), st("S2", "b")}},
		{"heading case-insensitive", lines("1. before", "## STEPS", "2. a"), []plan.Step{st("S2", "a")}},
		{"heading chinese", lines("1. 背景", "## 实施步骤", "1. 改代码", "## 验证", "2. 测试"), []plan.Step{st("S1", "改代码")}},
		{"heading 执行", lines("# 执行", "1. a"), []plan.Step{st("S1", "a")}},
		{"heading word inside text", lines("1. x", "## Next steps to take", "2. a"), []plan.Step{st("S2", "a")}},
		{"only first steps heading", lines("## Steps", "1. a", "## More steps", "2. b"), []plan.Step{st("S1", "a")}},
		{"steps heading without items", lines("1. outside", "## Steps", "prose", "## Other", "2. also outside"), []plan.Step{}},
		{"indented heading counts", lines("1. x", "  ## Steps", "2. a"), []plan.Step{st("S2", "a")}},
		{"seven hashes is not a heading", lines("1. x", "####### Steps", "2. a"), []plan.Step{st("S1", "x"), st("S2", "a")}},
		{"heading needs space", lines("1. x", "##Steps", "2. a"), []plan.Step{st("S1", "x"), st("S2", "a")}},
		{"heading in fence ignored", lines("1. x", "```", "## Steps", "```", "2. a"), []plan.Step{st("S1", "x"), st("S2", "a")}},
		{"numbered in fence ignored", lines("## Steps", "```", "1. fenced", "```", "2. a"), []plan.Step{st("S2", "a")}},

		// Ids.
		{"id tokens", lines("1. S3. dot", "2. S4: colon", "3. S5) paren", "4. S6 plain"),
			[]plan.Step{st("S3", "dot"), st("S4", "colon"), st("S5", "paren"), st("S6", "plain")}},
		{"checkbox id tokens", lines("- [ ] S10: ten", "- [ ] S2.two"), []plan.Step{st("S10", "ten"), st("S2", "two")}},
		{"not an id", lines("- [ ] S1234 big", "- [ ] S12abc word", "- [ ] s3 lower", "- [ ] Step 4"),
			[]plan.Step{st("S1", "S1234 big"), st("S2", "S12abc word"), st("S3", "s3 lower"), st("S4", "Step 4")}},
		{"id followed by dash", "- [ ] S7-later", []plan.Step{st("S7", "-later")}},
		{"duplicate becomes position", lines("- [ ] S1 a", "- [ ] S1 b", "- [ ] S9 c"), []plan.Step{st("S1", "a"), st("S2", "b"), st("S9", "c")}},
		{"duplicate position taken gets prime", lines("- [ ] S2 a", "- [ ] S2 b"), []plan.Step{st("S2", "a"), st("S2'", "b")}},
		{"quote after id token stays in text", lines("- [ ] S2 a", "- [ ] S2' b", "- [ ] S2 c", "- [ ] S3 d"),
			[]plan.Step{st("S2", "a"), st("S2'", "' b"), st("S3", "c"), st("S4", "d")}}, // "S2'" is id S2 + text "' b"
		{"prime after position fallback", lines("- [ ] S3 a", "- [ ] b", "- [ ] S2 c", "- [ ] S3 d"),
			[]plan.Step{st("S3", "a"), st("S2", "b"), st("S3'", "c"), st("S4", "d")}},
		{"numbered duplicates", lines("2. a", "2. b", "2. c"), []plan.Step{st("S2", "a"), st("S2'", "b"), st("S3", "c")}},
		{"implicit id collides", lines("- [ ] S2 a", "- [ ] b"), []plan.Step{st("S2", "a"), st("S2'", "b")}},

		// Annotations and text.
		{"depends separators", "- [ ] S3 c [depends: S1，S2 S4,,S5]", []plan.Step{st("S3", "c", "S1", "S2", "S4", "S5")}},
		{"depends full-width comma and spaces", "- [ ] c [depends:S1 ， S2]", []plan.Step{st("S1", "c", "S1", "S2")}},
		{"annotation keys case-insensitive", "- [ ] S2 build [Depends: S1] [AGENT: codex]", []plan.Step{{ID: "S2", Text: "build", DependsOn: []string{"S1"}, Agent: "codex"}}},
		{"agent only", "- [ ] run tests [agent: explore ] now", []plan.Step{{ID: "S1", Text: "run tests now", Agent: "explore"}}},
		{"empty annotations removed", "- [ ] a [depends: ] [agent:] b", []plan.Step{st("S1", "a b")}},
		{"later annotation wins", "- [ ] a [depends: S1] [depends: S2] [agent: x] [agent: ]", []plan.Step{{ID: "S1", Text: "a", DependsOn: []string{"S2"}, Agent: "x"}}},
		{"other brackets kept", "- [ ] edit [file] a.go", []plan.Step{st("S1", "edit [file] a.go")}},
		{"whitespace runs collapsed", "- [ ] a   b\t\tc  [depends: S0]  d", []plan.Step{st("S1", "a b c d", "S0")}},
		{"empty text is id", lines("- [ ] S1 [depends: S0]", "- [ ] [agent: x]", "1. ignored"), []plan.Step{st("S1", "S1", "S0"), {ID: "S2", Text: "S2", Agent: "x"}}},
		{"only id", "- [ ] S5", []plan.Step{st("S5", "S5")}},
		{"numbered annotations", lines("## Steps", "1. S1 read", "2. write [depends: S1]"), []plan.Step{st("S1", "read"), st("S2", "write", "S1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := plan.ParseSteps(tt.md)
			if got == nil {
				t.Fatal("ParseSteps returned nil steps")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSteps(%q) mismatch (-want +got):\n%s", tt.md, diff)
			}
			if len(warnings) != 0 {
				t.Errorf("unexpected warnings %q", warnings)
			}
		})
	}
}

func TestParseStepsCap(t *testing.T) {
	items := func(n int, format string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, format+"\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name     string
		md       string
		want     int
		warnings int
	}{
		{"30 checkbox", items(30, "- [ ] task %d"), 30, 0},
		{"35 checkbox", items(35, "- [ ] task %d"), 30, 1},
		{"31 numbered", items(31, "%d. task"), 30, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, warnings := plan.ParseSteps(tt.md)
			if len(steps) != tt.want || len(warnings) != tt.warnings {
				t.Fatalf("got %d steps, warnings %q; want %d steps, %d warnings", len(steps), warnings, tt.want, tt.warnings)
			}
			if last := steps[len(steps)-1]; last.ID != "S30" {
				t.Errorf("last step id = %q, want S30", last.ID)
			}
		})
	}
}

package plan_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/plan"
)

func TestReminderFor(t *testing.T) {
	full := map[int]bool{1: true, 26: true, 51: true}
	for n := -1; n <= 60; n++ {
		got, ok := plan.ReminderFor(n)
		var want string
		switch {
		case n < 1 || (n-1)%5 != 0:
		case full[n]:
			want = plan.ReminderFull()
		default:
			want = plan.ReminderBrief()
		}
		if ok != (want != "") || got != want {
			t.Errorf("ReminderFor(%d) = %.30q, %v; want %.30q", n, got, ok, want)
		}
	}
}

func TestReminderAfterCompaction(t *testing.T) {
	for _, n := range []int{2, 6, 26} {
		if got, ok := plan.Reminder(n, true); !ok || got != plan.ReminderFull() {
			t.Errorf("Reminder(%d, true) = %.30q, %v; want the full text", n, got, ok)
		}
		want, wantOK := plan.ReminderFor(n)
		if got, ok := plan.Reminder(n, false); got != want || ok != wantOK {
			t.Errorf("Reminder(%d, false) differs from ReminderFor", n)
		}
	}
}

func TestReminderTexts(t *testing.T) {
	full, brief := plan.ReminderFull(), plan.ReminderBrief()
	for _, part := range []string{"\n<proposed_plan>\n", "\n</proposed_plan>\n", "## Background", "## Steps", "- [ ] S1 ", "[depends: S1]", "[agent: ", "## Verification", "## Assumptions and risks", "todo"} {
		if !strings.Contains(full, part) {
			t.Errorf("full reminder lacks %q", part)
		}
	}
	if !strings.Contains(brief, plan.OpenTag) || len(brief) >= len(full)/4 {
		t.Errorf("brief reminder should name %s and be short: %q", plan.OpenTag, brief)
	}
	for name, s := range map[string]string{"exit": plan.ExitNote(), "todo denied": plan.TodoDeniedHint(), "blocked": plan.BlockedHint("write")} {
		if s == "" || strings.TrimSpace(s) != s {
			t.Errorf("%s text is empty or padded: %q", name, s)
		}
	}
	if !strings.Contains(plan.TodoDeniedHint(), plan.OpenTag) || !strings.Contains(plan.BlockedHint("bash"), "bash") {
		t.Error("hints must point at the plan block and name the tool")
	}
	if plan.ApprovedUserText != "The plan is approved. Go ahead." {
		t.Errorf("ApprovedUserText changed: %q", plan.ApprovedUserText)
	}
}

func TestHandoffs(t *testing.T) {
	const md = "# Add greeting\n## Steps\n- [ ] S1 Read src/hello.ts"
	block := "\n\n<approved_plan>\n" + md + "\n</approved_plan>"
	type variant struct {
		name           string
		file           string
		steps, todo    bool
		progress       []string // substrings of line 2; nil = no progress line
		wantFileLine   bool
		wantLineCount  int
		firstLineWords []string
	}
	tests := []variant{
		{name: "done convention", file: "/p/s-v1.md", steps: true, progress: []string{"`[DONE:<step id>]`", "`[DONE:S1]`"}, wantFileLine: true, wantLineCount: 3},
		{name: "todo tool", file: "/p/s-v1.md", steps: true, todo: true, progress: []string{"todo update"}, wantFileLine: true, wantLineCount: 3},
		{name: "no steps", file: "/p/s-v1.md", todo: true, wantFileLine: true, wantLineCount: 2},
		{name: "no file", steps: true, progress: []string{"[DONE:S1]"}, wantLineCount: 2},
		{name: "bare", wantLineCount: 1},
	}
	for _, kind := range []struct {
		name string
		fn   func(string, string, bool, bool) string
		lead []string
	}{
		{"approved", plan.ApprovedHandoff, []string{"approved", "plan mode"}},
		{"fresh", plan.FreshHandoff, []string{"carry out", "approved plan"}},
	} {
		for _, tt := range tests {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				got := kind.fn(md, tt.file, tt.steps, tt.todo)
				head, ok := strings.CutSuffix(got, block)
				if !ok {
					t.Fatalf("text does not end with a blank line and the <approved_plan> block:\n%s", got)
				}
				ls := strings.Split(head, "\n")
				if len(ls) != tt.wantLineCount {
					t.Fatalf("got %d lines before the block, want %d:\n%s", len(ls), tt.wantLineCount, head)
				}
				for _, w := range kind.lead {
					if !strings.Contains(strings.ToLower(ls[0]), w) {
						t.Errorf("first line %q lacks %q", ls[0], w)
					}
				}
				if tt.progress != nil {
					for _, w := range tt.progress {
						if !strings.Contains(ls[1], w) {
							t.Errorf("progress line %q lacks %q", ls[1], w)
						}
					}
				}
				if last := ls[len(ls)-1]; tt.wantFileLine != (last == "Plan file: "+tt.file) {
					t.Errorf("last line %q, want plan file line: %v", last, tt.wantFileLine)
				}
			})
		}
	}
}

// TestHandoffShape compares the approve hand-off with the structure of the
// reference golden (plan.out.jsonl): everything but the wording of the
// first two lines.
func TestHandoffShape(t *testing.T) {
	const md = "# Add greeting\n## Steps\n- [ ] S1 Read src/hello.ts\n- [ ] S2 Add the greeting [depends: S1]\n## Verification\n- pnpm test"
	got := plan.ApprovedHandoff(md, "<root>/plans/<uuid>-v1.md", true, false)
	ls := strings.Split(got, "\n")
	want := append([]string{"", "", "Plan file: <root>/plans/<uuid>-v1.md", "", "<approved_plan>"}, strings.Split(md, "\n")...)
	want = append(want, "</approved_plan>")
	if len(ls) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(ls), len(want), got)
	}
	for i := 2; i < len(want); i++ {
		if ls[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, ls[i], want[i])
		}
	}
}

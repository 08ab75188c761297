package acp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The titles as they were computed before they stopped reading whole
// prompts (splitting into lines, counting and converting every rune).
func oldFirstLine(s string, max int) string {
	line, rest, _ := strings.Cut(s, "\n")
	cut := rest != ""
	if utf8.RuneCountInString(line) > max {
		line = string([]rune(line)[:max])
		cut = true
	}
	if cut {
		line += "…"
	}
	return line
}

func oldTitleFrom(prompt string) string {
	for _, line := range strings.Split(prompt, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return oldFirstLine(line, maxTitle)
		}
	}
	return ""
}

func FuzzTitle(f *testing.F) {
	long := strings.Repeat("é", maxTitle)
	for _, s := range []string{"", "\n\n  hi  \nthere", "abc\n", "abc\r\n", long, long + "x", long + "   ", long + "  x", " \t" + long + "\n", "a\nb", "\xff\xfe", "x\u2028y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := titleFrom(s), oldTitleFrom(s); got != want && utf8.ValidString(s) {
			t.Fatalf("titleFrom(%q) = %q, want %q", s, got, want)
		}
		for _, max := range []int{1, 3, 80} {
			if got, want := firstLine(s, max), oldFirstLine(s, max); got != want && utf8.ValidString(s) {
				t.Fatalf("firstLine(%q, %d) = %q, want %q", s, max, got, want)
			}
		}
	})
}

// A 40 MiB one-line prompt is titled without reading it all.
func TestTitleOfAHugePrompt(t *testing.T) {
	huge := strings.Repeat("abc ", 10<<20)
	allocs := testing.AllocsPerRun(3, func() { _ = titleFrom(huge) })
	if got := titleFrom(huge); utf8.RuneCountInString(got) != maxTitle+1 || !strings.HasSuffix(got, "…") {
		t.Fatalf("title %q", got)
	}
	if allocs > 2 {
		t.Fatalf("%v allocations for a title", allocs)
	}
}

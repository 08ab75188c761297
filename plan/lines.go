package plan

import (
	"iter"
	"strings"
	"unicode"
)

// The reference implementation is JavaScript, whose \s, trim() and "."
// differ from Go's. These helpers reproduce the JavaScript behaviour where
// it matters for plan texts (full-width spaces in Chinese plans, NBSP).

// space is the JavaScript \s character class, for use inside regexps.
const space = `[\t\n\v\f\r\p{Zs}\x{2028}\x{2029}\x{FEFF}]`

// notEOL is the JavaScript "." (anything but a line terminator).
const notEOL = `[^\n\r\x{2028}\x{2029}]`

// isSpace reports whether r is whitespace for JavaScript's \s and trim().
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\u2028', '\u2029', '\uFEFF':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// trim removes leading and trailing JavaScript whitespace.
func trim(s string) string { return strings.TrimFunc(s, isSpace) }

// splitLines splits text on "\n" or "\r\n" (JavaScript /\r?\n/); a lone
// "\r" stays part of its line.
func splitLines(text string) []string {
	lines := strings.Split(text, "\n")
	for i := range len(lines) - 1 {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	return lines
}

// fenceMarker returns "```" or "~~~" when line opens or closes a fenced
// code block (the marker after optional leading whitespace), else "".
func fenceMarker(line string) string {
	s := strings.TrimLeftFunc(line, isSpace)
	for _, m := range [...]string{"```", "~~~"} {
		if strings.HasPrefix(s, m) {
			return m
		}
	}
	return ""
}

// unfenced yields the index and text of every line outside fenced code
// blocks. Fence lines themselves are not yielded; a fence is closed only by
// the marker that opened it, and an unclosed fence runs to the end.
func unfenced(lines []string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		open := ""
		for i, line := range lines {
			if m := fenceMarker(line); m != "" {
				switch open {
				case "":
					open = m
				case m:
					open = ""
				}
				continue
			}
			if open != "" {
				continue
			}
			if !yield(i, line) {
				return
			}
		}
	}
}

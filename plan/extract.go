package plan

import "strings"

// The tags that delimit a plan in an assistant reply. Each must be alone on
// its line (surrounding whitespace allowed).
const (
	OpenTag  = "<proposed_plan>"
	CloseTag = "</proposed_plan>"
)

// Extract returns the markdown of the last complete <proposed_plan> block
// in text (section 7.2). Tag lines inside fenced code blocks (``` or ~~~)
// do not count, an opening tag without a closing tag is ignored, and a
// second opening tag before a close restarts the block. Blank lines at the
// start and end of the block are dropped and the remaining lines are joined
// with "\n". ok is false when there is no block or the block is blank.
func Extract(text string) (markdown string, ok bool) {
	lines := splitLines(text)
	open, from, to := -1, -1, -1
	for i, line := range unfenced(lines) {
		switch trim(line) {
		case OpenTag:
			open = i
		case CloseTag:
			if open >= 0 {
				from, to, open = open+1, i, -1
			}
		}
	}
	if from < 0 {
		return "", false
	}
	inner := trimBlankLines(lines[from:to])
	if len(inner) == 0 {
		return "", false
	}
	return strings.Join(inner, "\n"), true
}

// FromEdited returns the plan markdown of a client-edited plan
// (plan_response editedMarkdown): the tagged block when text has one,
// otherwise the whole text trimmed.
func FromEdited(text string) string {
	if md, ok := Extract(text); ok {
		return md
	}
	return trim(text)
}

func trimBlankLines(lines []string) []string {
	from, to := 0, len(lines)
	for from < to && trim(lines[from]) == "" {
		from++
	}
	for to > from && trim(lines[to-1]) == "" {
		to--
	}
	return lines[from:to]
}

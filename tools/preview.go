package tools

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Preview severities.
const (
	SeverityInfo   = "info"
	SeverityWarn   = "warn"
	SeverityDanger = "danger"
)

// Preview bounds.
const (
	// MaxPreviewLines is the most lines a preview has; longer previews end
	// with "… N more lines".
	MaxPreviewLines = 200
	// maxPreviewLineChars cuts single preview lines.
	maxPreviewLineChars = 400
	// maxDiffBytes is the largest content (old or new) a preview diffs.
	maxDiffBytes = 1 << 20
)

// affectedFile describes a write/edit target.
func affectedFile(st fileState) Affected {
	a := Affected{Path: st.shown, Exists: st.exists}
	if st.exists {
		size := st.size
		a.Bytes = &size
	}
	return a
}

// readForDiff reads an existing target when it is small enough to diff.
func readForDiff(st fileState) (string, bool) {
	if st.size > maxDiffBytes {
		return "", false
	}
	f, _, _, err := openReal(st.root, st.abs, openRead)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDiffBytes+1))
	if err != nil || len(b) > maxDiffBytes {
		return "", false
	}
	return string(b), true
}

// fileDiff is the change of st from old (nil: a new file) to new for
// clients that render diffs: nil when a text is too large or not UTF-8.
func fileDiff(st fileState, old *string, new string) *FileDiff {
	if len(new) > maxDiffBytes || old != nil && (len(*old) > maxDiffBytes || !utf8.ValidString(*old)) || !utf8.ValidString(new) {
		return nil
	}
	return &FileDiff{Path: st.abs, OldText: old, NewText: new}
}

// unifiedDiff returns the unified diff of a change to the file shown as
// name ("" when nothing changes). A new file is diffed against /dev/null.
func unifiedDiff(name, old, new string, existed bool) string {
	from := name
	if !existed {
		from = "/dev/null"
	}
	return udiff.Unified(from, name, old, new)
}

// diffLines returns the diff as lines without the trailing empty one.
func diffLines(name, old, new string, existed bool) []string {
	d := unifiedDiff(name, old, new, existed)
	if d == "" {
		return []string{name + ": no changes"}
	}
	return strings.Split(strings.TrimSuffix(d, "\n"), "\n")
}

// boundLines caps the number of lines (the last kept line says how many
// were left out) and the length of each line.
func boundLines(lines []string, max int) []string {
	out := make([]string, 0, min(len(lines), max))
	for i, l := range lines {
		if i == max-1 && len(lines) > max {
			out = append(out, fmt.Sprintf("… %d more lines", len(lines)-i))
			break
		}
		if utf8.RuneCountInString(l) > maxPreviewLineChars {
			l = headRunesExact(l, maxPreviewLineChars) + " …"
		}
		out = append(out, l)
	}
	return out
}

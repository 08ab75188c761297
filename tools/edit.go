package tools

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/armadra/ama-rpc/llm"
)

// EditTool changes files by exact, unique text replacement.
type EditTool struct{}

// EditDetails is the Details of a successful edit.
type EditDetails struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Diff         string `json:"diff"`
}

func (EditTool) Decl() llm.ToolDecl { return decl(NameEdit, editSchema) }
func (EditTool) Permission() string { return PermWrite }

type editArgs struct {
	Path       string        `json:"path"`
	Edits      []replacement `json:"edits"`
	ReplaceAll bool          `json:"replaceAll"`
}

type replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// span is one replacement at a byte range of the original content.
type span struct {
	start, end int
	text       string
	edit       int // index into edits
}

// applyEdits applies all edits to the original content, all or nothing.
// It returns the new content and the number of replacements, or a message
// for the model explaining which edit failed.
func applyEdits(content, shown string, edits []replacement, replaceAll bool) (string, int, string) {
	if len(edits) == 0 {
		return "", 0, "edits is empty; give at least one {oldText, newText}"
	}
	crlf := strings.Contains(content, "\r\n")
	var spans []span
	for i, e := range edits {
		if e.OldText == "" {
			return "", 0, fmt.Sprintf("edits[%d]: oldText is empty; use write to create a file or include existing text to anchor the insertion", i)
		}
		if e.OldText == e.NewText {
			return "", 0, fmt.Sprintf("edits[%d]: oldText and newText are identical", i)
		}
		old, repl := e.OldText, e.NewText
		idx := findAll(content, old)
		if len(idx) == 0 && crlf && !strings.Contains(old, "\r") && strings.Contains(old, "\n") {
			// The file uses CRLF line ends and the model wrote LF.
			old = strings.ReplaceAll(old, "\n", "\r\n")
			repl = strings.ReplaceAll(repl, "\r\n", "\n")
			repl = strings.ReplaceAll(repl, "\n", "\r\n")
			idx = findAll(content, old)
		}
		switch {
		case len(idx) == 0:
			return "", 0, fmt.Sprintf("edits[%d]: oldText was not found in %s. It must match the current file exactly, including whitespace and indentation; read the file again if unsure.", i, shown)
		case len(idx) > 1 && !replaceAll:
			return "", 0, fmt.Sprintf("edits[%d]: oldText occurs %d times in %s (at lines %s); add surrounding text to make it unique, or set replaceAll to change every occurrence.", i, len(idx), shown, lineList(content, idx, 10))
		}
		for _, at := range idx {
			spans = append(spans, span{start: at, end: at + len(old), text: repl, edit: i})
		}
	}
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	for k := 1; k < len(spans); k++ {
		if spans[k].start < spans[k-1].end {
			a, b := spans[k-1].edit, spans[k].edit
			if a > b {
				a, b = b, a
			}
			if a == b {
				return "", 0, fmt.Sprintf("edits[%d]: occurrences of oldText overlap each other", a)
			}
			return "", 0, fmt.Sprintf("edits[%d] and edits[%d] overlap in %s; combine them into one edit", a, b, shown)
		}
	}
	var out strings.Builder
	out.Grow(len(content))
	prev := 0
	for _, s := range spans {
		out.WriteString(content[prev:s.start])
		out.WriteString(s.text)
		prev = s.end
	}
	out.WriteString(content[prev:])
	return out.String(), len(spans), ""
}

// findAll returns the start offsets of the non-overlapping occurrences of
// sub in s.
func findAll(s, sub string) []int {
	var idx []int
	for from := 0; from <= len(s)-len(sub); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			break
		}
		idx = append(idx, from+i)
		from += i + len(sub)
	}
	return idx
}

// lineList renders the line numbers of byte offsets, at most max of them.
func lineList(content string, offsets []int, max int) string {
	var parts []string
	line, pos := 1, 0
	for i, off := range offsets {
		if i == max {
			parts = append(parts, "…")
			break
		}
		line += strings.Count(content[pos:off], "\n")
		pos = off
		parts = append(parts, itoa(line))
	}
	return strings.Join(parts, ", ")
}

// EditMaxFileBytes is the largest file edit changes.
const EditMaxFileBytes = 16 << 20

// prepareEdit loads the target through f (opened by openReal) and computes
// the new content without changing anything.
func prepareEdit(f *os.File, st fileState, a editArgs) (old, new string, n int, bad *Result) {
	b, more, err := readBounded(f, EditMaxFileBytes)
	switch {
	case err != nil:
		return "", "", 0, errorf("Cannot read %s: %v", st.shown, unwrapPathError(err))
	case more:
		return "", "", 0, errorf("%s is too large to edit (more than %s); use bash for files this size", st.shown, formatBytes(EditMaxFileBytes))
	}
	old = string(b)
	new, n, msg := applyEdits(old, st.shown, a.Edits, a.ReplaceAll)
	if msg != "" {
		return old, "", 0, ErrorResult(msg + "\nNo edit was applied.")
	}
	return old, new, n, nil
}

// openEditTarget checks and opens the target of an edit (openUpdate to
// change it, openRead for the preview).
func openEditTarget(env *Env, r *Resolved, kind openKind) (*os.File, fileState, *Result) {
	st, bad := statTarget(env, r)
	if bad != nil {
		return nil, st, bad
	}
	if !st.exists {
		return nil, st, errorf("File not found: %s (use write to create a file)", st.shown)
	}
	f, _, _, err := openReal(st.root, st.abs, kind)
	if err != nil {
		return nil, st, errorf("Cannot read %s: %v", st.shown, describeOpenError(err))
	}
	return f, st, nil
}

func (EditTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a editArgs
	if r := decodeArgs(NameEdit, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	r := call.resolution(NameEdit)
	if r.Err == nil && !env.Reads.Has(r.Real) {
		if _, err := os.Lstat(r.Real); err == nil {
			return notReadResult(env.Rel(r.Path)), nil
		}
	}
	f, st, bad := openEditTarget(env, r, openUpdate)
	if bad != nil {
		return bad, nil
	}
	defer f.Close()
	old, new, n, bad := prepareEdit(f, st, a)
	if bad != nil {
		return bad, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if env != nil && env.BeforeChange != nil {
		env.BeforeChange(st.abs)
	}
	err := writeAll(f, []byte(new), true)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errorf("Cannot write %s: %v", st.shown, unwrapPathError(err)), nil
	}
	env.Reads.Mark(st.abs)
	diff := unifiedDiff(st.shown, old, new, true)
	added, removed := diffStat(diff)
	return &Result{
		Content: []llm.Content{llm.Text(fmt.Sprintf("Edited %s: %s, %s (+%d -%d lines).",
			st.shown, plural(len(a.Edits), "edit"), plural(n, "replacement"), added, removed))},
		Details: EditDetails{Path: st.shown, Replacements: n, Diff: diff},
		Diff:    fileDiff(st, &old, new),
	}, nil
}

// diffStat counts added and removed lines of a unified diff.
func diffStat(diff string) (added, removed int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

func (EditTool) Preview(ctx context.Context, call *Call) *Preview {
	var a editArgs
	if decodeArgs(NameEdit, call, &a) != nil {
		return nil
	}
	f, st, bad := openEditTarget(call.env(), call.resolution(NameEdit), openRead)
	if bad != nil {
		return nil // the call fails before it changes anything
	}
	defer f.Close()
	p := &Preview{Kind: "edit", Severity: SeverityInfo, Affected: []Affected{affectedFile(st)}}
	if st.size > maxDiffBytes {
		p.Lines = []string{fmt.Sprintf("%s: %s to a %s file (too large to diff)", st.shown, plural(len(a.Edits), "edit"), formatBytes(st.size))}
		return p
	}
	old, new, _, bad := prepareEdit(f, st, a)
	if bad != nil {
		// The call will fail; say why instead of showing a diff.
		p.Lines = boundLines(strings.Split(llm.JoinText(bad.Content, "\n"), "\n"), MaxPreviewLines)
		return p
	}
	p.Lines = boundLines(diffLines(st.shown, old, new, true), MaxPreviewLines)
	p.Diff = fileDiff(st, &old, new)
	return p
}

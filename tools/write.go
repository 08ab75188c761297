package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/armadra/ama-rpc/llm"
)

// WriteTool creates or overwrites whole files.
type WriteTool struct{}

// WriteDetails is the Details of a successful write.
type WriteDetails struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
	Bytes   int    `json:"bytes"`
}

func (WriteTool) Decl() llm.ToolDecl { return decl(NameWrite, writeSchema) }
func (WriteTool) Permission() string { return PermWrite }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// fileState is what write and edit learn about their target before acting.
type fileState struct {
	abs, shown string // abs: the real path (Resolved.Real)
	root       string // the real project root (Resolved.RealRoot)
	exists     bool
	mode       fs.FileMode
	size       int64
}

// statTarget looks at the resolved target of write/edit (lstat: the real
// path has no symlinks left). The result is an error result when the path
// cannot be a regular file.
func statTarget(env *Env, r *Resolved) (fileState, *Result) {
	st := fileState{abs: r.Real, root: r.RealRoot, shown: env.Rel(r.Path), mode: 0o644}
	if r.Err != nil {
		return st, errorf("Cannot access %s: %v", st.shown, r.Err)
	}
	fi, err := os.Lstat(st.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return st, nil
	case err != nil:
		return st, errorf("Cannot access %s: %v", st.shown, unwrapPathError(err))
	case fi.IsDir():
		return st, errorf("%s is a directory", st.shown)
	case !fi.Mode().IsRegular():
		return st, errorf("%s is not a regular file", st.shown)
	}
	st.exists, st.mode, st.size = true, fi.Mode().Perm(), fi.Size()
	return st, nil
}

// notReadResult is the refusal for changing a file the session has not
// read.
func notReadResult(shown string) *Result {
	return errorf("%s already exists and has not been read in this session. Read it first, so that no content you have not seen is lost.", shown)
}

func (WriteTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a writeArgs
	if r := decodeArgs(NameWrite, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	st, bad := statTarget(env, call.resolution(NameWrite))
	if bad != nil {
		return bad, nil
	}
	if st.exists && !env.Reads.Has(st.abs) {
		return notReadResult(st.shown), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var old *string // the text replaced, for Result.Diff (nil: none or too large)
	if st.exists {
		if text, ok := readForDiff(st); ok {
			old = &text
		}
	}
	if env != nil && env.BeforeChange != nil {
		env.BeforeChange(st.abs)
	}
	f, _, created, err := openReal(st.root, st.abs, openCreate)
	if err != nil {
		return errorf("Cannot write %s: %v", st.shown, describeOpenError(err)), nil
	}
	err = writeAll(f, []byte(a.Content), !created)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errorf("Cannot write %s: %v", st.shown, unwrapPathError(err)), nil
	}
	st.exists = !created
	env.Reads.Mark(st.abs)
	var diff *FileDiff
	switch {
	case created: // nothing was replaced, whatever the stat before saw
		diff = fileDiff(st, nil, a.Content)
	case old != nil:
		diff = fileDiff(st, old, a.Content)
	}
	verb := "Updated"
	if !st.exists {
		verb = "Created"
	}
	return &Result{
		Content: []llm.Content{llm.Text(fmt.Sprintf("%s %s (%s, %s).", verb, st.shown,
			plural(len(a.Content), "byte"), plural(countLines(a.Content), "line")))},
		Details: WriteDetails{Path: st.shown, Created: !st.exists, Bytes: len(a.Content)},
		Diff:    diff,
	}, nil
}

// writeAll replaces the content of the opened file (truncating it first
// when it existed).
func writeAll(f *os.File, data []byte, truncate bool) error {
	if truncate {
		if err := f.Truncate(0); err != nil {
			return err
		}
	}
	_, err := f.WriteAt(data, 0)
	return err
}

// countLines counts lines the way an editor shows them ("a\nb" and
// "a\nb\n" both have 2).
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
		}
	}
	if s[len(s)-1] != '\n' {
		n++
	}
	return n
}

func (WriteTool) Preview(ctx context.Context, call *Call) *Preview {
	var a writeArgs
	if decodeArgs(NameWrite, call, &a) != nil {
		return nil
	}
	st, bad := statTarget(call.env(), call.resolution(NameWrite))
	if bad != nil {
		return nil
	}
	p := &Preview{Kind: "write", Severity: SeverityInfo, Affected: []Affected{affectedFile(st)}}
	old := ""
	if st.exists {
		// Replacing a whole existing file is worth a second look.
		p.Severity = SeverityWarn
		var ok bool
		old, ok = readForDiff(st)
		if !ok {
			p.Lines = []string{fmt.Sprintf("%s: replaces a %s file (too large to diff)", st.shown, formatBytes(st.size))}
			return p
		}
	}
	if len(a.Content) > maxDiffBytes {
		p.Lines = []string{fmt.Sprintf("%s: writes %s (too large to diff)", st.shown, formatBytes(int64(len(a.Content))))}
		return p
	}
	p.Lines = boundLines(diffLines(st.shown, old, a.Content, st.exists), MaxPreviewLines)
	var replaced *string
	if st.exists {
		replaced = &old
	}
	p.Diff = fileDiff(st, replaced, a.Content)
	return p
}

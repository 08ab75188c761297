package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/armadra/ama-rpc/llm"
)

// LsDefaultLimit is the number of entries ls shows when no limit is given.
const LsDefaultLimit = 500

// LsTool lists a directory. Nothing is skipped: hidden entries and ignored
// files are shown. Directories get a trailing "/", symlinks "-> target".
type LsTool struct{}

// LsDetails is the Details of an ls.
type LsDetails struct {
	Path      string `json:"path"`
	Entries   int    `json:"entries"`
	Truncated bool   `json:"truncated,omitempty"`
}

func (LsTool) Decl() llm.ToolDecl { return decl(NameLs, lsSchema) }
func (LsTool) Permission() string { return PermRead }

type lsArgs struct {
	Path  string `json:"path"`
	Limit intArg `json:"limit"`
}

func (LsTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a lsArgs
	if r := decodeArgs(NameLs, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	limit := a.Limit.or(LsDefaultLimit)
	r := call.resolution(NameLs)
	abs, shown := r.Real, env.Rel(r.Path)
	if r.Err != nil {
		return errorf("Cannot list %s: %v", shown, r.Err), nil
	}
	if secretPath(env, abs) {
		// Like the grep and glob walks: a credential store (or ama's
		// private data) is not listed.
		return errorf("%s holds credentials or other sessions' data; it is not listed", shown), nil
	}
	f, fi, _, err := openReal(r.RealRoot, abs, openAny)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("Directory not found: %s", shown), nil
	case err != nil:
		return errorf("Cannot list %s: %v", shown, describeOpenError(err)), nil
	}
	defer f.Close()
	if !fi.IsDir() {
		return errorf("%s is a file (%s), not a directory; use read to see it", shown, formatBytes(fi.Size())), nil
	}
	entries, err := readDirCtx(ctx, f) // sorted by name
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	if err != nil {
		return errorf("Cannot list %s: %v", shown, unwrapPathError(err)), nil
	}
	d := LsDetails{Path: shown, Entries: len(entries)}
	if len(entries) == 0 {
		return &Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is empty.", shown))}, Details: d}, nil
	}
	if len(entries) > limit {
		entries, d.Truncated = entries[:limit], true
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(lsName(abs, e))
		b.WriteByte('\n')
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if d.Truncated {
		out += fmt.Sprintf("\n\n[Showing %d of %d entries; raise limit to see more.]", limit, d.Entries)
	}
	return &Result{Content: []llm.Content{llm.Text(LimitText(env, NameLs, out, false, call.Limit()))}, Details: d}, nil
}

func lsName(dir string, e fs.DirEntry) string {
	name := e.Name()
	switch {
	case e.IsDir():
		return name + "/"
	case e.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil {
			return name + " -> ?"
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
			return name + "/ -> " + target
		}
		return name + " -> " + target
	}
	return name
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Bounds of the bash preview.
const (
	maxPreviewCommandLines = 40
	maxAffectedPaths       = 50
	// maxAffectedWalk bounds the entries counted below one affected
	// directory.
	maxAffectedWalk = 10000
)

// Preview shows the command (bounded), the danger the inspector found in
// words, and the paths it would touch with their current size. Severity is
// danger when the inspector reported danger, warn when an affected path
// exists, else info.
func (b *BashTool) Preview(ctx context.Context, call *Call) *Preview {
	var a bashArgs
	if decodeArgs(NameBash, call, &a) != nil {
		return nil
	}
	env := call.env()
	if a.Command == "" && a.Job != "" {
		return &Preview{Kind: "bash", Lines: []string{fmt.Sprintf("job %s: %s", a.Job, cmpOr(a.Action, "output"))}, Severity: SeverityInfo}
	}
	p := &Preview{Kind: "bash", Severity: SeverityInfo}
	lines := strings.Split(strings.TrimRight(a.Command, "\n"), "\n")
	p.Lines = boundLines(lines, maxPreviewCommandLines)
	r := call.resolution(NameBash)
	if a.Cwd != "" {
		p.Lines = append(p.Lines, "in "+env.Rel(r.DirPath))
		if r.Dir != r.DirPath && r.Dir != "" {
			p.Lines[len(p.Lines)-1] += " (" + r.Dir + ")"
		}
	}
	if a.Background {
		p.Lines = append(p.Lines, "runs in the background")
	}
	// The danger and the paths come from the analysis the verdict used
	// (resolved cwd and targets) unless an inspector replaces it.
	var danger, paths []string
	dir := cmpOr(r.Dir, env.cwd())
	switch {
	case b.Inspect != nil:
		danger, paths = b.Inspect(a.Command, dir)
	case r.Shell != nil:
		for _, d := range r.Shell.Danger() {
			danger = append(danger, d.Reason)
		}
		paths = r.Changes
	default:
		return p
	}
	for _, d := range danger {
		p.Lines = append(p.Lines, "danger: "+d)
	}
	if len(danger) > 0 {
		p.Severity = SeverityDanger
	}
	seen := map[string]bool{}
	for _, path := range paths {
		if len(p.Affected) == maxAffectedPaths {
			p.Lines = append(p.Lines, fmt.Sprintf("… and %d more paths", len(paths)-maxAffectedPaths))
			break
		}
		abs := resolveFrom(dir, path)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		af, note := describePath(ctx, env, abs)
		p.Affected = append(p.Affected, af)
		if note != "" {
			p.Lines = append(p.Lines, note)
		}
		if af.Exists && p.Severity == SeverityInfo {
			p.Severity = SeverityWarn
		}
	}
	return p
}

// resolveFrom resolves p like Env.Abs, relative to dir.
func resolveFrom(dir, p string) string {
	return (&Env{Cwd: dir}).Abs(p)
}

// describePath stats an affected path: files get bytes, directories the
// number of files below them and their total bytes (walk bounded by
// maxAffectedWalk; note says when the count is partial). Directory paths
// end with "/".
func describePath(ctx context.Context, env *Env, abs string) (Affected, string) {
	shown := env.Rel(abs)
	fi, err := os.Lstat(abs)
	if err != nil {
		return Affected{Path: shown, Exists: false}, ""
	}
	if !fi.IsDir() {
		size := fi.Size()
		return Affected{Path: shown, Exists: true, Bytes: &size}, ""
	}
	if !strings.HasSuffix(shown, "/") {
		shown += "/"
	}
	var (
		files   int
		total   int64
		entries int
	)
	errLimit := errors.New("limit")
	err = filepath.WalkDir(abs, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		entries++
		if entries > maxAffectedWalk || ctx.Err() != nil {
			return errLimit
		}
		if d.IsDir() {
			return nil
		}
		files++
		if info, err := d.Info(); err == nil {
			total += info.Size()
		}
		return nil
	})
	a := Affected{Path: shown, Exists: true, Files: &files, Bytes: &total}
	if err != nil {
		return a, fmt.Sprintf("%s: more than %d entries (counted partly)", shown, maxAffectedWalk)
	}
	return a, ""
}

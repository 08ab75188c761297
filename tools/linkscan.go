package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/approvals"
)

// Bounds of the link scans of one command (approvals.LinkScans): a scan
// that reaches them reports itself incomplete, and the verdict then
// treats the walk as reaching what it could not be shown not to.
const (
	maxLinkScanEntries = 50000 // directory entries looked at, over all scans of a command
	maxGlobMatches     = 10000 // names one glob may expand to
)

// scanLinks does the I/O of the scans a command's verdict needs: it expands
// each glob as bash would (filepath.Glob, without the names bash leaves
// out: bashMatches), resolves every match, and for a walk that follows links looks at
// every link below each match, following those that lead out of the tree
// into the trees they lead to. It only reads (readdir, lstat, readlink).
func scanLinks(scans []approvals.LinkScan) map[approvals.LinkScan]approvals.LinkReach {
	out := make(map[approvals.LinkScan]approvals.LinkReach, len(scans))
	budget := maxLinkScanEntries
	for _, sc := range scans {
		out[sc] = scanOne(sc, &budget)
	}
	return out
}

func scanOne(sc approvals.LinkScan, budget *int) approvals.LinkReach {
	var lr approvals.LinkReach
	add := func(p string) {
		if !slices.Contains(lr.Targets, p) {
			lr.Targets = append(lr.Targets, p)
		}
	}
	matches := []string{sc.Path}
	if strings.ContainsAny(sc.Path, "*?[") {
		// A trailing slash (./*/) matches the directories among the names
		// (links to them too); Glob would match nothing.
		pattern := strings.TrimRight(sc.Path, "/")
		m, err := filepath.Glob(strings.ReplaceAll(pattern, "[!", "[^"))
		switch {
		case err != nil: // bash takes a malformed pattern literally
		case len(m) > maxGlobMatches:
			lr.Incomplete = true
			return lr
		default:
			matches = bashMatches(pattern, m)
		}
	}
	visited := map[string]bool{}
	dirs := map[string]string{} // a match's directory, resolved once for all its matches
	for _, m := range matches {
		rp, err := resolveMatch(m, dirs)
		if err != nil {
			lr.Incomplete = true
			continue
		}
		if rp != filepath.Clean(m) {
			add(rp)
		}
		if !sc.Tree {
			continue
		}
		queue := []string{rp}
		for len(queue) > 0 && !lr.Incomplete {
			dir := queue[0]
			queue = queue[1:]
			if visited[dir] {
				continue
			}
			visited[dir] = true
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil // unreadable: the command cannot read it either
				}
				if *budget--; *budget < 0 {
					lr.Incomplete = true
					return filepath.SkipAll
				}
				if d.Type()&fs.ModeSymlink == 0 {
					return nil
				}
				t, err := realPath(p)
				if err != nil {
					lr.Incomplete = true
					return filepath.SkipAll
				}
				if t == dir || strings.HasPrefix(t, dir+"/") || dir == "/" {
					return nil
				}
				add(t)
				if fi, err := os.Stat(t); err == nil && fi.IsDir() {
					queue = append(queue, t)
				}
				return nil
			})
		}
	}
	return lr
}

// bashMatches drops the matches bash would not make: a wildcard component
// that does not start with a dot matches no name that does (dotglob off).
func bashMatches(pattern string, matches []string) []string {
	pc := strings.Split(pattern, "/")
	var out []string
	for _, m := range matches {
		mc := strings.Split(m, "/")
		keep := len(mc) == len(pc)
		for i := 0; keep && i < len(pc); i++ {
			if strings.ContainsAny(pc[i], "*?[") && !strings.HasPrefix(pc[i], ".") && strings.HasPrefix(mc[i], ".") {
				keep = false
			}
		}
		if keep || len(mc) != len(pc) {
			out = append(out, m)
		}
	}
	return out
}

// resolveMatch is realPath(m) with the directory's resolution shared by
// the matches of one directory: only the last component is looked at
// (one lstat) unless it is a link.
func resolveMatch(m string, dirs map[string]string) (string, error) {
	dir, base := filepath.Split(m)
	if base == "" || base == "." || base == ".." {
		return realPath(m)
	}
	rd, ok := dirs[dir]
	if !ok {
		var err error
		if rd, err = realPath(dir); err != nil {
			return "", err
		}
		dirs[dir] = rd
	}
	fi, err := os.Lstat(filepath.Join(rd, base))
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return realPath(m)
	}
	return filepath.Join(rd, base), nil
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/armadra/ama-rpc/llm"
)

// GlobDefaultLimit is the number of files glob lists when no limit is
// given.
const GlobDefaultLimit = 200

// GlobTool finds files by name pattern.
//
// The pattern argument is a list of doublestar patterns separated by
// unescaped whitespace (write a literal space as `\ ` or `[ ]`; commas are
// not separators because braces use them). Patterns starting with `!`
// exclude; when there are only excludes, every file is a candidate. A
// pattern without `/` is matched against base names at any depth, one with
// `/` against the path relative to the search directory. An exclude that
// matches a directory prunes it. A single include pattern that is absolute
// or climbs out with `..` moves the search to its literal prefix.
type GlobTool struct{}

// GlobDetails is the Details of a glob.
type GlobDetails struct {
	Count     int  `json:"count"`
	Truncated bool `json:"truncated,omitempty"`
}

func (GlobTool) Decl() llm.ToolDecl { return decl(NameGlob, globSchema) }
func (GlobTool) Permission() string { return PermRead }

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Limit   intArg `json:"limit"`
}

// splitPatterns splits at unescaped whitespace outside brackets.
func splitPatterns(s string) []string {
	var (
		out   []string
		cur   strings.Builder
		depth int // inside [...] or {...}
	)
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			// Keep the escape: doublestar reads "\ " as a literal space.
			cur.WriteByte(c)
			i++
			cur.WriteByte(s[i])
			continue
		case c == '[' || c == '{':
			depth++
		case (c == ']' || c == '}') && depth > 0:
			depth--
		case (c == ' ' || c == '\t' || c == '\n') && depth == 0:
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

type globPattern struct {
	pat      string
	basename bool // no "/": match base names
}

func (p globPattern) match(root, abs string) bool {
	if p.basename {
		return doublestar.MatchUnvalidated(p.pat, filepath.Base(abs))
	}
	rel, ok := relInside(root, abs)
	if !ok {
		return false
	}
	return doublestar.MatchUnvalidated(p.pat, rel)
}

// basenameGlob turns "**/X" with X free of "/" into the base-name pattern
// X: "**/" matches zero or more directories, so both match exactly the
// paths whose last component matches X, and the base name is what the
// walk has at hand (no path relative to the root to build per entry).
func basenameGlob(p globPattern) globPattern {
	if rest, ok := strings.CutPrefix(p.pat, "**/"); ok && !p.basename && rest != "" && !strings.Contains(rest, "/") {
		return globPattern{pat: rest, basename: true}
	}
	return p
}

func newGlobPattern(p string) globPattern {
	p = strings.TrimPrefix(p, "./")
	return globPattern{pat: p, basename: !strings.Contains(p, "/")}
}

func (GlobTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a globArgs
	if r := decodeArgs(NameGlob, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	limit := a.Limit.or(GlobDefaultLimit)
	r := call.resolution(NameGlob)
	root := r.Path
	var includes, excludes []string
	for _, p := range splitPatterns(a.Pattern) {
		if strings.HasPrefix(p, "!") {
			if p = p[1:]; p != "" {
				excludes = append(excludes, p)
			}
			continue
		}
		includes = append(includes, p)
	}
	if len(includes) == 0 && len(excludes) == 0 {
		return ErrorResult("pattern is empty"), nil
	}
	for _, p := range append(append([]string(nil), includes...), excludes...) {
		if !doublestar.ValidatePattern(p) {
			return errorf("Invalid glob pattern %q", p), nil
		}
	}
	// Absolute patterns and patterns leaving the root.
	for i, p := range includes {
		if !filepath.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../") {
			continue
		}
		full := p
		if !filepath.IsAbs(full) {
			full = filepath.Join(root, p)
		}
		if rel, ok := relInside(root, full); ok && rel != "." {
			includes[i] = rel
			continue
		}
		if len(includes) > 1 {
			return errorf("Pattern %q lies outside %s; give it on its own or set path", p, env.Rel(root)), nil
		}
		base, rest := doublestar.SplitPattern(filepath.ToSlash(full))
		root, includes[i] = filepath.FromSlash(base), rest
		if rest == "" {
			includes[i] = "*"
		}
	}
	// The walk follows the real directory (what the verdict judged when
	// the root is the path argument); results keep the name given.
	shownRoot, realRoot := root, r.Real
	if root != r.Path || r.Err != nil {
		realRoot = realOr(root)
	}
	if fi, err := os.Stat(realRoot); err != nil {
		return errorf("Directory not found: %s", env.Rel(root)), nil
	} else if !fi.IsDir() {
		return errorf("%s is a file, not a directory", env.Rel(root)), nil
	}
	root = realRoot
	shown := func(abs string) string { return env.Rel(underName(shownRoot, root, abs)) }
	var inc, exc []globPattern
	for _, p := range includes {
		inc = append(inc, basenameGlob(newGlobPattern(p)))
	}
	if len(inc) == 0 {
		inc = []globPattern{{pat: "**"}}
	}
	for _, p := range excludes {
		exc = append(exc, newGlobPattern(p))
	}
	excluded := func(abs string) bool {
		for _, p := range exc {
			if p.match(root, abs) {
				return true
			}
		}
		return false
	}

	type hit struct {
		abs, shown string
		mtime      time.Time
		ok         bool
	}
	// The modification times order the list: one stat per hit (the
	// directory entry has no time), done by a few goroutines while the
	// walk goes on, in batches that each fill their own part of hits.
	const batch = 128
	var (
		hits    []hit
		batches = make(chan []hit, 64)
		wg      sync.WaitGroup
		done    [][]hit
		mu      sync.Mutex
	)
	for range grepWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				for i := range b {
					if fi, err := os.Stat(b[i].abs); err == nil {
						b[i].mtime, b[i].ok = fi.ModTime(), true
					}
				}
				mu.Lock()
				done = append(done, b)
				mu.Unlock()
			}
		}()
	}
	cur := make([]hit, 0, batch)
	err := walkFiles(ctx, env, root, excluded, func(abs string, d fs.DirEntry) error {
		matched := false
		for _, p := range inc {
			if p.match(root, abs) {
				matched = true
				break
			}
		}
		if !matched || excluded(abs) {
			return nil
		}
		if cur = append(cur, hit{abs: abs}); len(cur) == batch {
			batches <- cur
			cur = make([]hit, 0, batch)
		}
		return nil
	})
	batches <- cur
	close(batches)
	wg.Wait()
	for _, b := range done {
		for _, h := range b {
			if h.ok {
				h.shown = shown(h.abs)
				hits = append(hits, h)
			}
		}
	}
	walkCut := errors.Is(err, errWalkLimit)
	if err != nil && !walkCut {
		return nil, err
	}
	if len(hits) == 0 {
		return &Result{Content: []llm.Content{llm.Text(fmt.Sprintf("No files match %q in %s", a.Pattern, env.Rel(shownRoot)))},
			Details: GlobDetails{}}, nil
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mtime.Equal(hits[j].mtime) {
			return hits[i].mtime.After(hits[j].mtime)
		}
		return hits[i].shown < hits[j].shown
	})
	d := GlobDetails{Count: len(hits)}
	if len(hits) > limit {
		hits, d.Truncated = hits[:limit], true
	}
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(h.shown)
		b.WriteByte('\n')
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if d.Truncated {
		out += fmt.Sprintf("\n\n[Showing the %d most recently modified of %d files; narrow the pattern or raise limit.]", limit, d.Count)
	}
	if walkCut {
		out += fmt.Sprintf("\n\n[Stopped after looking at %d entries; search a narrower path.]", maxWalkEntries)
	}
	return &Result{Content: []llm.Content{llm.Text(LimitText(env, NameGlob, out, false, call.Limit()))}, Details: d}, nil
}

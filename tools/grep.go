package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/armadra/ama-rpc/llm"
)

// Limits of the grep tool.
const (
	// GrepDefaultLimit is the number of matching lines grep reports when no
	// limit is given.
	GrepDefaultLimit = 100
	// GrepMaxFileBytes is the size above which grep skips a file.
	GrepMaxFileBytes = 2 << 20
	// GrepMaxContext is the most context lines grep shows around a match.
	GrepMaxContext = 5
	// grepMaxLineChars cuts long lines in grep output.
	grepMaxLineChars = 500
	// binarySniffBytes is how much of a file is checked for a NUL byte.
	binarySniffBytes = 8192
)

// GrepTool searches file contents.
type GrepTool struct{}

// GrepDetails is the Details of a grep.
type GrepDetails struct {
	Matches      int  `json:"matches"`
	Files        int  `json:"files"`
	LimitReached bool `json:"limitReached,omitempty"`
	SkippedLarge int  `json:"skippedLarge,omitempty"`
	SkippedBin   int  `json:"skippedBinary,omitempty"`
}

func (GrepTool) Decl() llm.ToolDecl { return decl(NameGrep, grepSchema) }
func (GrepTool) Permission() string { return PermRead }

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignoreCase"`
	Literal    bool   `json:"literal"`
	Context    intArg `json:"context"`
	Limit      intArg `json:"limit"`
	FilesOnly  bool   `json:"filesOnly"`
}

func (GrepTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a grepArgs
	if r := decodeArgs(NameGrep, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	if a.Pattern == "" {
		return ErrorResult("pattern is empty"), nil
	}
	expr := a.Pattern
	if a.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("Invalid regular expression (Go RE2 syntax; no lookaround or backreferences): %v. Set literal:true to search for the text as written.", unwrapRegexpError(err)), nil
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return errorf("Invalid glob %q", a.Glob), nil
	}
	limit := a.Limit.or(GrepDefaultLimit)
	ctxLines := min(max(int(a.Context), 0), GrepMaxContext)

	r := call.resolution(NameGrep)
	root := r.Real // the walk follows what was judged, not the name
	if r.Err != nil {
		return errorf("Cannot search %s: %v", env.Rel(r.Path), r.Err), nil
	}
	f, fi, _, err := openReal(r.RealRoot, root, openAny)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("Path not found: %s", env.Rel(r.Path)), nil
	case err != nil:
		return errorf("Cannot search %s: %v", env.Rel(r.Path), describeOpenError(err)), nil
	}
	g := &grepRun{match: newLineMatcher(re, expr), limit: limit, context: ctxLines, filesOnly: a.FilesOnly}
	shown := func(abs string) func() string {
		return func() string { return env.Rel(underName(r.Path, root, abs)) }
	}
	var walkCut bool
	if !fi.IsDir() {
		s := grepSearcher{g: g}
		res := s.search(ctx, f, fi.Size(), shown(root))
		f.Close()
		if res.aborted {
			return nil, ctx.Err()
		}
		g.add(res)
	} else {
		f.Close()
		walkCut, err = g.walk(ctx, env, root, a.Glob, r.RealRoot, shown)
		if err != nil {
			return nil, err
		}
	}

	d := GrepDetails{Matches: g.matches, Files: g.files, LimitReached: g.limitHit, SkippedLarge: g.large, SkippedBin: g.binary}
	if g.matches == 0 {
		text := fmt.Sprintf("No matches for %q in %s", a.Pattern, env.Rel(r.Path))
		if g.large > 0 {
			text += fmt.Sprintf(" (%s over 2 MB skipped)", plural(g.large, "file"))
		}
		return &Result{Content: []llm.Content{llm.Text(text)}, Details: d}, nil
	}
	out := strings.TrimSuffix(g.out.String(), "\n")
	var notes []string
	if g.limitHit {
		what := "matches"
		if a.FilesOnly {
			what = "files"
		}
		notes = append(notes, fmt.Sprintf("Stopped after %d %s; narrow the search or raise limit.", limit, what))
	}
	if g.large > 0 {
		notes = append(notes, fmt.Sprintf("Skipped %s over 2 MB.", plural(g.large, "file")))
	}
	if walkCut {
		notes = append(notes, fmt.Sprintf("Stopped after looking at %d entries; search a narrower path.", maxWalkEntries))
	}
	if len(notes) > 0 {
		out += "\n\n[" + strings.Join(notes, " ") + "]"
	}
	return &Result{Content: []llm.Content{llm.Text(LimitText(env, NameGrep, out, false, call.Limit()))}, Details: d}, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// globMatches applies a file filter glob: patterns without "/" match the
// base name, others the path relative to the search root.
func globMatches(pattern, root, abs string) bool {
	if !strings.Contains(pattern, "/") {
		return doublestar.MatchUnvalidated(pattern, filepath.Base(abs))
	}
	rel, ok := relInside(root, abs)
	if !ok {
		return false
	}
	return doublestar.MatchUnvalidated(strings.TrimPrefix(pattern, "./"), rel)
}

// grepRun is one grep call: the searchers' settings and the result
// assembled in walk order.
type grepRun struct {
	match     *lineMatcher
	limit     int
	context   int
	filesOnly bool

	out      strings.Builder
	matches  int // matching lines (or files with filesOnly)
	files    int // files with a match
	limitHit bool
	large    int
	binary   int
}

// grepJob is one file of the walk for a worker: open is what to open
// (follow: it is a symlink's resolved target), abs how it is named.
type grepJob struct {
	seq       int
	open, abs string
	follow    bool
}

type grepDone struct {
	seq int
	res grepFile
}

// grepWorkers is the size of the pool that reads and searches files while
// the walk goes on.
func grepWorkers() int { return min(max(runtime.GOMAXPROCS(0), 2), 8) }

// walk searches the files below root on a bounded pool of workers (each
// with its own reused buffer) and adds their results in walk order, so the
// output is the one a sequential search gives; once the limit is hit the
// walk and the workers stop. walkCut reports the entry limit of the walk.
func (g *grepRun) walk(ctx context.Context, env *Env, root, glob, realRoot string, shown func(abs string) func() string) (walkCut bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan grepJob, 256)
	done := make(chan grepDone, 256)
	var walkErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		seq := 0
		walkErr = walkFiles(wctx, env, root, nil, func(abs string, d fs.DirEntry) error {
			if glob != "" && !globMatches(glob, root, abs) {
				return nil
			}
			job := grepJob{seq: seq, open: abs, abs: abs}
			if d.Type()&fs.ModeSymlink != 0 {
				// A link is searched only when its file lies in the project
				// or below the search root: a link to ~/.ssh/id_rsa in the
				// tree must not be read by a search that was judged by its
				// root.
				rp, err := realPath(abs)
				if err != nil || !(within(rp, realRoot) || within(rp, root)) || secretPath(env, rp) {
					return nil
				}
				job.open, job.follow = rp, true
			} else if d.Type() != 0 {
				return nil // devices, FIFOs, sockets
			}
			seq++
			select {
			case jobs <- job:
				return nil
			case <-wctx.Done():
				return wctx.Err()
			}
		})
	}()
	var workers sync.WaitGroup
	for range grepWorkers() {
		workers.Add(1)
		go func() {
			defer workers.Done()
			s := grepSearcher{g: g}
			for j := range jobs {
				var res grepFile
				if wctx.Err() != nil {
					res.aborted = true
				} else if f, size, err := openWalkFile(j.open, j.follow); err == nil {
					res = s.search(wctx, f, size, shown(j.abs))
					f.Close()
				} else if wctx.Err() != nil {
					res.aborted = true
				}
				done <- grepDone{seq: j.seq, res: res}
			}
		}()
	}
	go func() {
		workers.Wait()
		close(done)
	}()
	pending := map[int]grepFile{}
	next, stopped, aborted := 0, false, false
	for d := range done {
		if stopped {
			continue // drain: the workers end once the walk has
		}
		pending[d.seq] = d.res
		for !stopped {
			res, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			switch {
			case res.aborted:
				aborted, stopped = true, true
			case g.add(res):
				stopped = true
			}
		}
		if stopped {
			cancel()
		}
	}
	wg.Wait()
	switch {
	case aborted:
		return false, ctx.Err()
	case g.limitHit:
		return false, nil
	case errors.Is(walkErr, errWalkLimit):
		return true, nil
	}
	return false, walkErr
}

// add adds the result of the next file in walk order; it reports that the
// limit was hit (the search ends).
func (g *grepRun) add(f grepFile) (stop bool) {
	switch {
	case f.large:
		g.large++
		return false
	case f.binary:
		g.binary++
		return false
	case f.n == 0:
		return false
	}
	rem := g.limit - g.matches
	if rem == 0 {
		g.limitHit = true
		return true
	}
	g.files++
	if g.filesOnly {
		g.matches++
		g.out.Write(f.out) // the name (see grepRun.searchData)
		return false
	}
	if g.context > 0 && g.out.Len() > 0 {
		g.out.WriteString("--\n")
	}
	if f.n <= rem {
		g.matches += f.n
		g.out.Write(f.out)
		return false
	}
	g.matches += rem
	g.out.Write(f.out[:f.cuts[rem]])
	g.limitHit = true
	return true
}

// unwrapRegexpError keeps the regexp error text without the "error
// parsing regexp:" prefix.
func unwrapRegexpError(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

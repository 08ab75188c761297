package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

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
	limit := int(a.Limit)
	if limit <= 0 {
		limit = GrepDefaultLimit
	}
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
	g := &grepRun{env: env, re: re, limit: limit, context: ctxLines, filesOnly: a.FilesOnly,
		shown: func(abs string) string { return env.Rel(underName(r.Path, root, abs)) }}
	// Matching the whole file first is a cheap filter, valid only when
	// the pattern has no anchors (they mean line ends here).
	g.prefilter = !strings.ContainsAny(expr, "^$") && !strings.Contains(expr, `\A`) && !strings.Contains(expr, `\z`)
	if !fi.IsDir() {
		err = g.search(ctx, f, root, fi.Size())
		f.Close()
	} else {
		f.Close()
		err = walkFiles(ctx, env, root, nil, func(abs string, d fs.DirEntry) error {
			if a.Glob != "" && !globMatches(a.Glob, root, abs) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// A link is searched only when its file lies in the project
				// or below the search root: a link to ~/.ssh/id_rsa in the
				// tree must not be read by a search that was judged by its
				// root.
				rp, err := realPath(abs)
				if err != nil || !(within(rp, r.RealRoot) || within(rp, root)) {
					return nil
				}
				return g.file(ctx, rp, abs)
			}
			if d.Type() != 0 {
				return nil // devices, FIFOs, sockets
			}
			return g.file(ctx, abs, abs)
		})
	}
	walkCut := errors.Is(err, errWalkLimit)
	if err != nil && !errors.Is(err, errStopWalk) && !walkCut {
		return nil, err
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
	return &Result{Content: []llm.Content{llm.Text(LimitText(env, NameGrep, out, false))}, Details: d}, nil
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

type grepRun struct {
	env       *Env
	shown     func(abs string) string // how results name a file
	re        *regexp.Regexp
	limit     int
	context   int
	filesOnly bool
	prefilter bool

	out      strings.Builder
	matches  int // matching lines (or files with filesOnly)
	files    int // files with a match
	limitHit bool
	large    int
	binary   int
}

// file opens and searches one file found by the walk (open: what to open,
// abs: how it is named); anything that is not a regular file on the opened
// descriptor is skipped.
func (g *grepRun) file(ctx context.Context, open, abs string) error {
	f, fi, err := openRegular(open)
	if err != nil {
		return nil
	}
	defer f.Close()
	return g.search(ctx, f, abs, fi.Size())
}

// search searches one opened regular file; it returns errStopWalk once the
// limit is hit.
func (g *grepRun) search(ctx context.Context, f *os.File, abs string, size int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if size > GrepMaxFileBytes {
		g.large++
		return nil
	}
	data, more, err := readBounded(f, GrepMaxFileBytes)
	if err != nil {
		return nil
	}
	if more { // grew since fstat
		g.large++
		return nil
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		g.binary++
		return nil
	}
	if g.prefilter && !g.re.Match(data) {
		return nil
	}
	shown := g.shown(abs)
	if g.filesOnly {
		if !g.anyLine(data) {
			return nil
		}
		if g.matches == g.limit {
			g.limitHit = true
			return errStopWalk
		}
		g.files++
		g.matches++
		g.out.WriteString(shown + "\n")
		return nil
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	lastPrinted := -1 // index of the last line printed for this file
	for i, line := range lines {
		if !g.re.MatchString(strings.TrimSuffix(line, "\r")) {
			continue
		}
		if g.matches == g.limit {
			g.limitHit = true
			return errStopWalk
		}
		if lastPrinted < 0 {
			g.files++
		}
		g.matches++
		from := max(i-g.context, lastPrinted+1)
		if g.context > 0 && g.out.Len() > 0 && (lastPrinted < 0 || from > lastPrinted+1) {
			g.out.WriteString("--\n") // a new group of lines
		}
		for j := from; j < i; j++ {
			g.writeLine(shown, j, '-', lines[j])
		}
		g.writeLine(shown, i, ':', line)
		lastPrinted = i
		// Trailing context is printed up to the next match, which prints
		// its own line.
		for j := i + 1; j <= min(i+g.context, len(lines)-1); j++ {
			if g.re.MatchString(strings.TrimSuffix(lines[j], "\r")) {
				break
			}
			g.writeLine(shown, j, '-', lines[j])
			lastPrinted = j
		}
	}
	return nil
}

// anyLine reports whether a line of data matches.
func (g *grepRun) anyLine(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if g.re.MatchString(strings.TrimSuffix(line, "\r")) {
			return true
		}
	}
	return false
}

// writeLine prints path:N: text for matches and path-N- text for context.
func (g *grepRun) writeLine(shown string, idx int, sep byte, line string) {
	line = strings.ToValidUTF8(strings.TrimSuffix(line, "\r"), "\uFFFD")
	if utf8.RuneCountInString(line) > grepMaxLineChars {
		line = headRunesExact(line, grepMaxLineChars) + " …"
	}
	fmt.Fprintf(&g.out, "%s%c%d%c %s\n", shown, sep, idx+1, sep, line)
}

// unwrapRegexpError keeps the regexp error text without the "error
// parsing regexp:" prefix.
func unwrapRegexpError(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

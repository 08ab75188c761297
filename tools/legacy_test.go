package tools

// The grep, glob and read tools (and the walk under them) as they were
// before issue 19 made them fast, kept verbatim (identifiers prefixed with
// legacy) so that the differential test can compare old and new output;
// the one change: legacyReadText takes the scan bound as a parameter.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	ignore "github.com/sabhiram/go-gitignore"

	"github.com/armadra/ama-rpc/llm"
)

type legacyGrepTool struct{}
type legacyGlobTool struct{}
type legacyReadTool struct{}

func (legacyGrepTool) Decl() llm.ToolDecl { return GrepTool{}.Decl() }
func (legacyGrepTool) Permission() string { return PermRead }
func (legacyGlobTool) Decl() llm.ToolDecl { return GlobTool{}.Decl() }
func (legacyGlobTool) Permission() string { return PermRead }
func (legacyReadTool) Decl() llm.ToolDecl { return ReadTool{}.Decl() }
func (legacyReadTool) Permission() string { return PermRead }

func (legacyGrepTool) Execute(ctx context.Context, call *Call) (*Result, error) {
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
	g := &legacyGrepRun{env: env, re: re, limit: limit, context: ctxLines, filesOnly: a.FilesOnly,
		shown: func(abs string) string { return env.Rel(underName(r.Path, root, abs)) }}
	// Matching the whole file first is a cheap filter, valid only when
	// the pattern has no anchors (they mean line ends here).
	g.prefilter = !strings.ContainsAny(expr, "^$") && !strings.Contains(expr, `\A`) && !strings.Contains(expr, `\z`)
	if !fi.IsDir() {
		err = g.search(ctx, f, root, fi.Size())
		f.Close()
	} else {
		f.Close()
		err = legacyWalkFiles(ctx, env, root, nil, func(abs string, d fs.DirEntry) error {
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

type legacyGrepRun struct {
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
func (g *legacyGrepRun) file(ctx context.Context, open, abs string) error {
	f, fi, err := openRegular(open)
	if err != nil {
		return nil
	}
	defer f.Close()
	return g.search(ctx, f, abs, fi.Size())
}

// search searches one opened regular file; it returns errStopWalk once the
// limit is hit.
func (g *legacyGrepRun) search(ctx context.Context, f *os.File, abs string, size int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if size > GrepMaxFileBytes {
		g.large++
		return nil
	}
	data, more, err := legacyReadBounded(f, GrepMaxFileBytes)
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
func (g *legacyGrepRun) anyLine(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if g.re.MatchString(strings.TrimSuffix(line, "\r")) {
			return true
		}
	}
	return false
}

// writeLine prints path:N: text for matches and path-N- text for context.
func (g *legacyGrepRun) writeLine(shown string, idx int, sep byte, line string) {
	line = strings.ToValidUTF8(strings.TrimSuffix(line, "\r"), "\uFFFD")
	if utf8.RuneCountInString(line) > grepMaxLineChars {
		line = headRunesExact(line, grepMaxLineChars) + " …"
	}
	fmt.Fprintf(&g.out, "%s%c%d%c %s\n", shown, sep, idx+1, sep, line)
}

func (legacyGlobTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a globArgs
	if r := decodeArgs(NameGlob, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	limit := int(a.Limit)
	if limit <= 0 {
		limit = GlobDefaultLimit
	}
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
		inc = append(inc, newGlobPattern(p))
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
		shown string
		mtime time.Time
	}
	var hits []hit
	err := legacyWalkFiles(ctx, env, root, excluded, func(abs string, d fs.DirEntry) error {
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
		fi, err := os.Stat(abs)
		if err != nil {
			return nil
		}
		hits = append(hits, hit{shown: shown(abs), mtime: fi.ModTime()})
		return nil
	})
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
	return &Result{Content: []llm.Content{llm.Text(LimitText(env, NameGlob, out, false))}, Details: d}, nil
}

func (legacyReadTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a readArgs
	if r := decodeArgs(NameRead, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	r := call.resolution(NameRead)
	abs, shown := r.Real, env.Rel(r.Path)
	if r.Err != nil {
		return errorf("Cannot read %s: %v", shown, r.Err), nil
	}
	f, st, _, err := openReal(r.RealRoot, abs, openRead)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("File not found: %s", shown), nil
	case errors.Is(err, errIsDir):
		return errorf("%s is a directory; use ls to list it", shown), nil
	case err != nil:
		return errorf("Cannot read %s: %v", shown, describeOpenError(err)), nil
	}
	defer f.Close()

	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return errorf("Cannot read %s: %v", shown, unwrapPathError(err)), nil
	}
	head = head[:n]
	if mime := imageMIME(head); mime != "" {
		return readImage(env, f, abs, shown, mime, st.Size())
	}
	if ext := strings.ToLower(filepath.Ext(abs)); imageExts[ext] {
		return errorf("%s has an image extension but its content is not a PNG, JPEG, GIF or WebP image", shown), nil
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return errorf("%s is a binary file (%s); read shows only text files and images", shown, formatBytes(st.Size())), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return errorf("Cannot read %s: %v", shown, err), nil
	}
	res, err := legacyReadText(ctx, f, shown, int(a.Offset), int(a.Limit), ReadMaxScanBytes)
	if err != nil {
		return nil, err
	}
	if !res.IsError {
		env.Reads.Mark(abs)
	}
	return res, nil
}

// legacyReadText formats lines [offset, offset+limit) cat -n style, staying under
// MaxResultChars, and counts the remaining lines.
func legacyReadText(ctx context.Context, r io.Reader, shown string, offset, limit int, maxScan int64) (*Result, error) {
	if offset < 1 {
		offset = 1
	}
	if limit <= 0 {
		limit = ReadDefaultLimit
	}
	lr := &io.LimitedReader{R: r, N: maxScan}
	br := bufio.NewReaderSize(lr, 64*1024)
	var (
		out       strings.Builder
		lineNo    int
		lastShown int
		longCut   bool
		budgetHit bool
		scanCut   bool
	)
	for {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lr.N <= 0 && br.Buffered() == 0 {
			scanCut = true // the rest of the file is not looked at
			break
		}
		text, ok, err := readLine(br, ReadMaxLineChars)
		if err != nil {
			return errorf("Cannot read %s: %v", shown, err), nil
		}
		if !ok {
			break
		}
		lineNo++
		if lineNo < offset || lineNo >= offset+limit || budgetHit {
			continue
		}
		if text.cut {
			longCut = true
		}
		line := fmt.Sprintf("%6d\t%s\n", lineNo, text.s)
		if out.Len()+len(line) > MaxResultChars-300 && lastShown >= offset {
			budgetHit = true
			continue
		}
		out.WriteString(line)
		lastShown = lineNo
	}
	total := lineNo
	switch {
	case total == 0:
		return &Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is empty.", shown))},
			Details: ReadDetails{Path: shown}}, nil
	case offset > total && scanCut:
		return errorf("Offset %d is beyond the part of %s that read looks at (the first %s, %s)", offset, shown, formatBytes(ReadMaxScanBytes), plural(total, "line")), nil
	case offset > total:
		return errorf("Offset %d is past the end of %s (%s)", offset, shown, plural(total, "line")), nil
	}
	body := strings.TrimSuffix(out.String(), "\n")
	d := ReadDetails{Path: shown, StartLine: offset, EndLine: lastShown, TotalLines: total}
	var notes []string
	if longCut {
		notes = append(notes, fmt.Sprintf("Lines longer than %d characters were cut.", ReadMaxLineChars))
	}
	if scanCut {
		notes = append(notes, fmt.Sprintf("Only the first %s of the file were looked at; line counts stop there.", formatBytes(ReadMaxScanBytes)))
	}
	if lastShown < total {
		d.NextOffset = lastShown + 1
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d of %d; continue with offset=%d.", offset, lastShown, total, lastShown+1))
	}
	if len(notes) > 0 {
		body += "\n\n[" + strings.Join(notes, " ") + "]"
	}
	return &Result{Content: []llm.Content{llm.Text(body)}, Details: d}, nil
}

// legacyIgnoreLayer is the combined .gitignore and .ignore of one directory; its
// patterns apply to paths below dir.
type legacyIgnoreLayer struct {
	dir string
	gi  *ignore.GitIgnore
}

func (l legacyIgnoreLayer) ignores(abs string, isDir bool) bool {
	rel, ok := relInside(l.dir, abs)
	if !ok || rel == "." {
		return false
	}
	if isDir {
		rel += "/"
	}
	return l.gi.MatchesPath(rel)
}

// legacyLoadIgnores reads dir/.gitignore then dir/.ignore (so that .ignore can
// re-include with "!"); ok is false when neither exists.
func legacyLoadIgnores(dir string) (legacyIgnoreLayer, bool) {
	var lines []string
	for _, name := range []string{".gitignore", ".ignore"} {
		b, _, err := legacyReadRegularFile(filepath.Join(dir, name), maxIgnoreFileBytes)
		if err != nil {
			continue
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	if len(lines) == 0 {
		return legacyIgnoreLayer{}, false
	}
	return legacyIgnoreLayer{dir: dir, gi: ignore.CompileIgnoreLines(lines...)}, true
}

func legacyIgnored(layers []legacyIgnoreLayer, abs string, isDir bool) bool {
	for _, l := range layers {
		if l.ignores(abs, isDir) {
			return true
		}
	}
	return false
}

// legacyWalkFiles visits the files below root (a real path) in lexical order, depth first,
// calling visit with each file's absolute path and entry. It skips .git,
// files and directories matched by the .gitignore/.ignore files of root,
// of its subdirectories and of root's ancestors up to the session cwd, and
// symlinks to directories (symlinked files are visited). A root that the
// ancestors' rules would ignore is walked anyway (it was asked for), with
// only the ignore files inside it applied. skipDir, when not nil, prunes
// further directories. visit may return errStopWalk.
// The walk ends with errWalkLimit after maxWalkEntries entries and with
// ctx's error when ctx ends.
func legacyWalkFiles(ctx context.Context, env *Env, root string, skipDir func(abs string) bool, visit func(abs string, d fs.DirEntry) error) error {
	layers := legacyAncestorIgnores(realOr(env.cwd()), root)
	if legacyIgnored(layers, root, true) {
		layers = nil
	}
	seen := 0
	var walkDir func(dir string, layers []legacyIgnoreLayer) error
	walkDir = func(dir string, layers []legacyIgnoreLayer) error {
		if l, ok := legacyLoadIgnores(dir); ok {
			layers = append(layers[:len(layers):len(layers)], l)
		}
		entries, err := legacyReadDir(ctx, dir) // never blocks on a FIFO put in a directory's place
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil // unreadable directories are skipped
		}
		for _, d := range entries {
			seen++
			if seen > maxWalkEntries {
				return errWalkLimit
			}
			if seen%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if d.Name() == ".git" {
				continue
			}
			abs := filepath.Join(dir, d.Name())
			isDir := d.IsDir()
			if d.Type()&fs.ModeSymlink != 0 {
				fi, err := os.Stat(abs)
				if err != nil || fi.IsDir() {
					continue // broken link or link to a directory
				}
			}
			if legacyIgnored(layers, abs, isDir) {
				continue
			}
			if isDir {
				if skipDir != nil && skipDir(abs) {
					continue
				}
				if err := walkDir(abs, layers); err != nil {
					return err
				}
				continue
			}
			if err := visit(abs, d); err != nil {
				return err
			}
		}
		return nil
	}
	return walkDir(root, layers)
}

// legacyAncestorIgnores loads the ignore files of the directories from cwd down
// to root's parent, when root is below cwd.
func legacyAncestorIgnores(cwd, root string) []legacyIgnoreLayer {
	rel, ok := relInside(cwd, root)
	if !ok || rel == "." {
		return nil
	}
	var layers []legacyIgnoreLayer
	dir := cwd
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts); i++ {
		if l, ok := legacyLoadIgnores(dir); ok {
			layers = append(layers, l)
		}
		dir = filepath.Join(dir, parts[i])
	}
	return layers
}

// legacyReadDir lists a directory opened without blocking, sorted by name
// (like os.ReadDir).
func legacyReadDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|openExtraFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: errNotDir}
	}
	return legacyReadDirCtx(ctx, f)
}

// legacyReadDirCtx lists an open directory sorted by name, in chunks, ending
// with ctx's error when ctx ends (huge directories).
func legacyReadDirCtx(ctx context.Context, f *os.File) ([]fs.DirEntry, error) {
	var all []fs.DirEntry
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk, err := f.ReadDir(4096)
		all = append(all, chunk...)
		if errors.Is(err, io.EOF) || (err == nil && len(chunk) == 0) {
			break
		}
		if err != nil {
			sortEntries(all)
			return all, err
		}
	}
	sortEntries(all)
	return all, nil
}

// legacyReadBounded reads at most max bytes of f; more reports false.
func legacyReadBounded(f *os.File, max int64) (data []byte, more bool, err error) {
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if int64(len(data)) > max {
		return data[:max], true, err
	}
	return data, false, err
}

// legacyReadRegularFile reads a whole regular file of at most max bytes (ignore
// files, grep targets); larger files report more.
func legacyReadRegularFile(p string, max int64) ([]byte, bool, error) {
	f, _, err := openRegular(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return legacyReadBounded(f, max)
}

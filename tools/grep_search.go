package tools

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lineMatcher finds the lines of a file that a grep pattern matches, with
// the semantics of matching the regexp against each line on its own (the
// file split at "\n", one trailing "\r" removed), but without splitting
// the file into strings. A literal pattern is found with bytes.Index over
// the whole file, jumping from hit to hit. Other patterns are first
// searched once over the whole file from the start (when they have no
// anchors: ^ $ \A \z mean line ends here, and a hit in a line is then a
// hit in the file at or after that line's start); lines before the first
// hit cannot match, and from its line on each line is matched on its own.
// Jumping from regexp hit to hit is not done: a search may scan far past
// the hit it returns (a greedy (?s).* in an optional group), which would
// make a file with many hits quadratic.
type lineMatcher struct {
	re *regexp.Regexp
	// lit is the pattern when it is a plain case-sensitive literal
	// without "\n", "\r" or U+FFFD (which the regexp matches against
	// invalid UTF-8); nil otherwise.
	lit []byte
	// whole: the pattern has no anchors (see above).
	whole bool
	// fold is set for a case-insensitive literal: the longest run of its
	// runes whose case variants are all ASCII, in lower case. Every match
	// holds it (up to ASCII case), so the lines holding it are the only
	// candidates; each is checked with the regexp (exact semantics).
	fold     []byte
	foldRare int // the index in fold of its rarest byte, searched first
}

func newLineMatcher(re *regexp.Regexp, expr string) *lineMatcher {
	m := &lineMatcher{re: re,
		whole: !strings.ContainsAny(expr, "^$") && !strings.Contains(expr, `\A`) && !strings.Contains(expr, `\z`)}
	if p, err := syntax.Parse(expr, syntax.Perl); err == nil { // the flags regexp.Compile uses
		p = p.Simplify()
		if p.Op == syntax.OpLiteral && p.Flags&syntax.FoldCase == 0 {
			s := string(p.Rune)
			if s != "" && !strings.ContainsAny(s, "\n\r\uFFFD") {
				m.lit = []byte(s)
			}
		}
		if p.Op == syntax.OpLiteral && p.Flags&syntax.FoldCase != 0 && !slices.Contains(p.Rune, '\n') {
			m.fold = asciiFoldRun(p.Rune)
			m.foldRare = rarestByte(m.fold)
		}
	}
	return m
}

// asciiFoldRun returns the longest run of runes whose simple case folding
// orbit is all ASCII ('k' is not: the Kelvin sign folds to it), lowered.
func asciiFoldRun(runes []rune) []byte {
	var best, cur []byte
	for _, r := range runes {
		ok := r < utf8.RuneSelf
		for f := unicode.SimpleFold(r); ok && f != r; f = unicode.SimpleFold(f) {
			ok = f < utf8.RuneSelf
		}
		if !ok {
			cur = cur[:0]
			continue
		}
		cur = append(cur, byte(unicode.ToLower(r)))
		if len(cur) > len(best) {
			best = append(best[:0], cur...)
		}
	}
	return best
}

// rarestByte picks the byte of an ASCII needle to look for first: not a
// letter when there is one, else the rarest letter in English text.
func rarestByte(needle []byte) int {
	const byRarity = "zqxjkvbpygfwmucldrhsnioate"
	best, rank := 0, 1<<30
	for i, c := range needle {
		r := strings.IndexByte(byRarity, c)
		if c < 'a' || c > 'z' {
			r = -1
		}
		if r < rank {
			best, rank = i, r
		}
	}
	return best
}

// indexFoldASCII returns the index of the first occurrence of needle (ASCII,
// lower case) in data ignoring ASCII case, or -1. It looks for the byte at
// rare in both cases with bytes.IndexByte and compares around each hit.
func indexFoldASCII(data, needle []byte, rare int) int {
	lo := needle[rare]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -2, -2 // -2: not searched yet, -1: none left
	for start := rare; start < len(data); {
		if nextLo != -1 && nextLo < start {
			nextLo = indexByteFrom(data, lo, start)
		}
		if up == lo {
			nextUp = -1
		} else if nextUp != -1 && nextUp < start {
			nextUp = indexByteFrom(data, up, start)
		}
		c := nextLo
		if c < 0 || (nextUp >= 0 && nextUp < c) {
			c = nextUp
		}
		if c < 0 {
			return -1
		}
		if s := c - rare; s+len(needle) <= len(data) && equalFoldASCII(data[s:s+len(needle)], needle) {
			return s
		}
		start = c + 1
	}
	return -1
}

func indexByteFrom(b []byte, c byte, from int) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// equalFoldASCII compares b with the lower-case ASCII needle, ignoring the
// case of ASCII letters in b.
func equalFoldASCII(b, needle []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != needle[i] {
			return false
		}
	}
	return true
}

// line reports whether one line (without its "\n") matches.
func (m *lineMatcher) line(b []byte) bool {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if m.lit != nil {
		return bytes.Contains(b, m.lit)
	}
	return m.re.Match(b)
}

// first returns the start of the first line that may match: for literals
// and patterns without anchors the line of the first hit in the whole
// file (-1: none), else 0.
func (m *lineMatcher) first(data []byte) int {
	var hit int
	switch {
	case m.lit != nil:
		hit = bytes.Index(data, m.lit)
	case len(m.fold) > 0:
		hit = indexFoldASCII(data, m.fold, m.foldRare)
	case m.whole:
		loc := m.re.FindIndex(data)
		if loc == nil {
			return -1
		}
		hit = loc[0]
	default:
		return 0
	}
	if hit < 0 {
		return -1
	}
	return bytes.LastIndexByte(data[:hit], '\n') + 1
}

// next returns the first matching line at or after pos (a line start):
// its start and end (the index of its "\n" or len(data)); start is -1
// when no line matches.
func (m *lineMatcher) next(data []byte, pos int) (start, end int) {
	for pos < len(data) {
		if m.lit != nil || len(m.fold) > 0 {
			var i int
			if m.lit != nil {
				i = bytes.Index(data[pos:], m.lit)
			} else {
				i = indexFoldASCII(data[pos:], m.fold, m.foldRare)
			}
			if i < 0 {
				return -1, -1
			}
			pos += bytes.LastIndexByte(data[pos:pos+i], '\n') + 1
		}
		end := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			end = pos + i
		}
		if m.line(data[pos:end]) {
			return pos, end
		}
		pos = end + 1
	}
	return -1, -1
}

// grepFile is what the search of one file found, before the limit and
// the files searched before it are applied (grepRun.add does that, in
// walk order).
type grepFile struct {
	aborted bool // ctx ended before the file was searched
	large   bool
	binary  bool
	// n is the number of matching lines found, at most limit+1 (the
	// search stops there; with filesOnly 0 or 1).
	n int
	// out holds the formatted lines of the matches and their context,
	// without the "--" that separates the file's first group from the
	// output before it.
	out []byte
	// cuts[k] is len(out) before the k-th match (0-based) was written:
	// where the output stops when the limit allows only k matches.
	cuts []int
}

// grepSearcher searches files one at a time; one per worker, with its
// buffer reused for every file.
type grepSearcher struct {
	g   *grepRun
	buf []byte
}

// search reads and searches one opened regular file of fstat size size;
// shown names it in results.
func (s *grepSearcher) search(ctx context.Context, r io.Reader, size int64, shown func() string) grepFile {
	if ctx.Err() != nil {
		return grepFile{aborted: true}
	}
	if size > GrepMaxFileBytes {
		return grepFile{large: true}
	}
	data, err := fillBuffer(r, s.buf, size, GrepMaxFileBytes)
	s.buf = data[:0]
	switch {
	case err == errTooLarge: // grew since fstat
		return grepFile{large: true}
	case err != nil:
		return grepFile{} // unreadable: skipped
	case bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0:
		return grepFile{binary: true}
	}
	return s.g.searchData(data, shown)
}

// searchData finds the matching lines of data.
func (g *grepRun) searchData(data []byte, shownFn func() string) grepFile {
	var r grepFile
	m := g.match
	if g.filesOnly {
		start := m.first(data)
		if start >= 0 {
			start, _ = m.next(data, start)
		}
		// As before, filesOnly also tries the empty "line" after a final
		// "\n" (and the one of an empty file): "^$" lists such files.
		if start >= 0 || ((len(data) == 0 || data[len(data)-1] == '\n') && m.line(nil)) {
			r.n, r.out = 1, append([]byte(shownFn()), '\n')
		}
		return r
	}
	var (
		shown       string
		lineNo      int // the line index of linePos
		linePos     int
		lastPrinted = -1 // index of the last line printed for this file
		pos         = m.first(data)
	)
	if pos < 0 {
		return r
	}
	for {
		start, end := m.next(data, pos)
		if start < 0 {
			return r
		}
		i := lineNo + bytes.Count(data[linePos:start], newline)
		lineNo, linePos = i, start
		r.cuts = append(r.cuts, len(r.out))
		if r.n++; r.n > g.limit {
			return r // only this match's existence matters: the limit is hit
		}
		if shown == "" {
			shown = shownFn()
		}
		from := max(i-g.context, lastPrinted+1)
		if g.context > 0 && lastPrinted >= 0 && from > lastPrinted+1 {
			r.out = append(r.out, "--\n"...) // a new group of lines
		}
		if from < i {
			p := start
			for k := from; k < i; k++ { // back to the start of line from
				p = bytes.LastIndexByte(data[:p-1], '\n') + 1
			}
			for j := from; j < i; j++ {
				e := p + bytes.IndexByte(data[p:], '\n')
				r.out = appendGrepLine(r.out, shown, j, '-', data[p:e])
				p = e + 1
			}
		}
		r.out = appendGrepLine(r.out, shown, i, ':', data[start:end])
		lastPrinted = i
		// Trailing context is printed up to the next match, which prints
		// its own line.
		p := end + 1
		for j := i + 1; j <= i+g.context && p < len(data); j++ {
			e := len(data)
			if k := bytes.IndexByte(data[p:], '\n'); k >= 0 {
				e = p + k
			}
			if m.line(data[p:e]) {
				break
			}
			r.out = appendGrepLine(r.out, shown, j, '-', data[p:e])
			lastPrinted = j
			p = e + 1
		}
		pos = p
	}
}

var newline = []byte{'\n'}

// appendGrepLine appends path:N: text for matches and path-N- text for
// context (idx is 0-based); lines are cut at grepMaxLineChars runes.
func appendGrepLine(out []byte, shown string, idx int, sep byte, line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	cut := false
	if len(line) > grepMaxLineChars && utf8.RuneCount(line) > grepMaxLineChars {
		line, cut = headRunesBytes(line, grepMaxLineChars), true
	}
	out = append(out, shown...)
	out = append(out, sep)
	out = strconv.AppendInt(out, int64(idx+1), 10)
	out = append(out, sep, ' ')
	out = append(out, line...)
	if cut {
		out = append(out, " …"...)
	}
	return append(out, '\n')
}

// headRunesBytes returns the first n runes of b.
func headRunesBytes(b []byte, n int) []byte {
	i := 0
	for k := 0; k < n && i < len(b); k++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}

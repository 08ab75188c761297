package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/armadra/ama-rpc/internal/jsonobj"
)

// leafType is the "type" of a leaf line (§5.5); leaf lines are not entries.
const leafType = "leaf"

// Snapshot is the parsed content of a session file. It is not modified
// after it is returned and may be shared.
type Snapshot struct {
	Path    string
	Header  Header
	Entries []*Entry // in file order; leaf lines are not entries
	// LeafID is the active leaf per §5.5: the id of the last leaf line if no
	// entry follows it and it names an existing entry (nil for
	// {"id":null}, the empty branch); otherwise the last entry (nil when
	// there are no entries).
	LeafID *string
	// Name is the session name: the name of the last session_info entry
	// ("" if there is none or it has no name).
	Name string
	// RepairedTail: the last line was half written (no final LF, invalid
	// JSON) and was ignored; Open truncated it away.
	RepairedTail bool
	// MissingNewline: the last line was complete but lacked its LF; Open
	// appended it.
	MissingNewline bool
	// Fallback: lines the fast parser failed on and encoding/json read
	// (nil normally; the opener logs it, see fallback.go).
	Fallback *Fallback
}

// Tree returns a tree over the snapshot's entries with its leaf.
func (s *Snapshot) Tree() *Tree { return NewTree(s.Entries, s.LeafID) }

// ReadSnapshot reads and validates a session file without locking or
// repairing it (the rules of read-only scanners in §5.3).
func ReadSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	snap, _, err := readSnapshot(f, path)
	return snap, err
}

// bufferSize picks the line reader's initial buffer for a file: its size
// (plus one byte, to see EOF in one read) up to readChunk.
func bufferSize(f *os.File) int {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		return int(min(max(st.Size()+1, 512), readChunk))
	}
	return readChunk
}

func openError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, path)
	}
	return fmt.Errorf("%w: cannot read session file %s: %w", ErrNotFound, path, err)
}

// tail describes the end of the file as the reader found it.
type tail struct {
	size         int64 // bytes read
	truncateAt   int64 // RepairedTail: offset of the half line
	repaired     bool  // the half line was dropped
	unterminated bool  // the last line lacks '\n'
}

// readSnapshot parses a whole session file.
func readSnapshot(r io.Reader, path string) (*Snapshot, tail, error) {
	p := parser{path: path, keep: true, bufSize: readChunk}
	if f, ok := r.(*os.File); ok && runtime.GOMAXPROCS(0) > 1 {
		if snap, t, ok := readSplit(f, path); ok {
			return snap, t, nil
		}
		// Small, unsplittable or failing: read from the start in one
		// pass, which also reports the first error exactly.
		p.bufSize = bufferSize(f)
		r = io.NewSectionReader(f, 0, math.MaxInt64)
	}
	switch r := r.(type) {
	case *os.File:
		p.bufSize = bufferSize(r)
	case interface{ Len() int }: // bytes.Reader, strings.Reader
		p.bufSize = min(max(r.Len()+1, 512), readChunk)
	}
	p.b.bulk = true
	if err := p.run(r); err != nil {
		return nil, p.tail, err
	}
	snap := &Snapshot{
		Path: path, Header: p.header, Entries: p.entries, Name: p.name,
		RepairedTail: p.tail.repaired, MissingNewline: p.tail.unterminated && !p.tail.repaired,
		Fallback: p.fallback,
	}
	snap.LeafID = resolveLeaf(p.entries, p.leafSet, p.leaf)
	return snap, p.tail, nil
}

// resolveLeaf applies §5.5: a trailing leaf line wins unless it names an
// unknown entry; otherwise the last entry.
func resolveLeaf(entries []*Entry, leafSet bool, leaf *string) *string {
	var last *string
	if n := len(entries); n > 0 {
		last = &entries[n-1].ID
	}
	if !leafSet {
		return last
	}
	if leaf == nil {
		return nil
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].ID == *leaf {
			return &entries[i].ID
		}
	}
	return last
}

// parser implements §5.2/§5.3 over a stream of lines. With keep it builds
// entries; otherwise it only calls visit for each entry line.
type parser struct {
	path    string
	bufSize int // initial line buffer
	keep    bool
	visit   func(text []byte, fields []jsonobj.Member, p entryParts)

	sc     jsonobj.Scanner
	b      builder
	parsed int // non-blank lines parsed so far

	header  Header
	entries []*Entry
	leafSet bool    // a leaf line follows the last entry
	leaf    *string // its id
	name    string
	hasName bool // a session_info entry was read (name is its name)
	tail    tail

	fallback *Fallback // lines the standard decoder read (fallback.go)

	rest  bool // the input starts after the header (readSplit's second half)
	lines int  // physical lines read (at the end of run)
}

func (p *parser) run(r io.Reader) error {
	if p.keep { // entries are made: record their messages' members
		p.sc.Nests = messageNests
	}
	lr := newLineReader(r, p.bufSize)
	for {
		l, ok := lr.next()
		if !ok {
			break
		}
		if l.last {
			p.tail.unterminated = true
		}
		if isBlank(l.text) {
			continue
		}
		kind := p.sc.Scan(l.text)
		if kind == jsonobj.Invalid {
			if json.Valid(l.text) { // the scanner is wrong: see fallback.go
				if err := p.slow(l.text, l.num, "the fast scanner rejected a valid line"); err != nil {
					return err
				}
				continue
			}
			if l.last {
				p.tail.repaired = true
				p.tail.truncateAt = l.offset
				break
			}
			return corrupt(p.path, l.num, ReasonInvalidJSON)
		}
		if err := p.safeLine(l, kind); err != nil {
			return err
		}
	}
	p.tail.size = lr.off + int64(lr.end)
	p.lines = lr.num
	if lr.err != nil {
		return fmt.Errorf("%w: cannot read session file %s: %w", ErrNotFound, p.path, lr.err)
	}
	if p.parsed == 0 && !p.rest {
		return corrupt(p.path, 0, ReasonMissingHeader)
	}
	return nil
}

// safeLine is line, with the standard decoder taking over the line when
// the fast path panics (fallback.go): no file content may crash a reader.
func (p *parser) safeLine(l line, kind jsonobj.Kind) (err error) {
	parsed, n := p.parsed, len(p.entries)
	defer func() {
		if r := recover(); r != nil {
			p.parsed, p.entries = parsed, p.entries[:n]
			p.b = builder{bulk: p.b.bulk} // its chunks may be half carved
			err = p.slow(l.text, l.num, fmt.Sprintf("the fast parser panicked: %v", r))
		}
	}()
	if breakFast != nil && breakFast(l.text) {
		panic("injected fast-path failure")
	}
	return p.line(l.text, kind)
}

// breakFast, set by tests, makes the fast path fail on the lines it
// returns true for.
var breakFast func(line []byte) bool

// slow reads one non-blank line with encoding/json alone (fallback.go).
func (p *parser) slow(text []byte, num int, reason string) error {
	if p.fallback == nil {
		p.fallback = &Fallback{Line: num, Reason: reason}
	}
	p.fallback.Count++
	p.parsed++
	if p.parsed == 1 && !p.rest {
		return p.slowHeader(text)
	}
	e, leaf, leafID, err := stdLine(text)
	if err != nil {
		if reason := stdReason(err); reason != ReasonInvalidJSON {
			return corrupt(p.path, p.parsed, reason)
		}
		return corrupt(p.path, num, ReasonInvalidJSON)
	}
	if leaf {
		p.leafSet, p.leaf = true, leafID
		return nil
	}
	p.leafSet, p.leaf = false, nil
	if p.visit != nil {
		p.slowVisit(e)
	}
	if !p.keep {
		return nil
	}
	p.entries = append(p.entries, e)
	if e.Type == TypeSessionInfo {
		p.name, p.hasName = e.sessionName(), true
	}
	return nil
}

// slowVisit hands visit the line as this package writes it; a visitor
// that fails on it is skipped for this line.
func (p *parser) slowVisit(e *Entry) {
	defer func() { _ = recover() }()
	var sc jsonobj.Scanner
	canon := e.AppendJSON(nil)
	if sc.Scan(canon) == jsonobj.Object {
		p.visit(canon, sc.Members(0), classify(canon, sc.Members(0)))
	}
}

// slowHeader parses the header from its members as encoding/json reads
// them, rewritten compactly.
func (p *parser) slowHeader(text []byte) (err error) {
	defer func() {
		if recover() != nil {
			err = corrupt(p.path, 1, ReasonMalformedHeader)
		}
	}()
	ms, err := stdMembers(text)
	if err != nil {
		if errors.Is(err, ErrMalformedEntry) {
			return corrupt(p.path, 1, ReasonMalformedHeader)
		}
		return corrupt(p.path, 1, ReasonInvalidJSON)
	}
	canon := appendObject(nil, ms)
	var sc jsonobj.Scanner
	kind := sc.Scan(canon)
	h, err := parseHeader(p.path, canon, kind, sc.Members(0))
	p.header = h
	return err
}

// line handles one parsed non-blank line.
func (p *parser) line(text []byte, kind jsonobj.Kind) error {
	p.parsed++
	fields := p.sc.Members(0)
	if p.parsed == 1 && !p.rest {
		h, err := parseHeader(p.path, text, kind, fields)
		p.header = h
		return err
	}
	if kind != jsonobj.Object {
		return corrupt(p.path, p.parsed, ReasonMalformedEntry)
	}
	parts := classify(text, fields)
	typeIsString := parts.typ != nil && parts.typ.IsString(text)
	if typeIsString && parts.typ.StrIs(text, leafType) {
		switch {
		case parts.id != nil && parts.id.IsNull(text):
			p.leaf = nil
		case parts.id != nil && parts.id.IsString(text):
			id := parts.id.Str(text)
			p.leaf = &id
		default:
			return corrupt(p.path, p.parsed, ReasonMalformedLeaf)
		}
		p.leafSet = true
		return nil
	}
	if !typeIsString || parts.id == nil || !parts.id.IsString(text) {
		return corrupt(p.path, p.parsed, ReasonMalformedEntry)
	}
	if parts.typ.StrIs(text, HeaderType) {
		return corrupt(p.path, p.parsed, ReasonDuplicateHeader)
	}
	p.leafSet, p.leaf = false, nil
	if p.visit != nil {
		p.visit(text, fields, parts)
	}
	if !p.keep {
		return nil
	}
	e := p.b.entry()
	p.b.fill(e, text, &p.sc, &parts)
	p.entries = append(p.entries, e)
	if e.Type == TypeSessionInfo {
		p.name, p.hasName = e.sessionName(), true
	}
	return nil
}

// splitMin is the smallest file readSplit parses in two halves (a
// variable for tests).
var splitMin int64 = 4 << 20

// readSplit parses a large file in two halves at once, split at the first
// line boundary after the middle: the first half (header included) on the
// calling goroutine, the rest on another, then joins them as one pass would
// have. It only returns a result when both halves parse without error; a
// file that fails (or is small, or has no line boundary to split at) is
// read again in one pass by the caller, so error reports (the first bad
// line and its number) stay exactly those of the sequential read. The
// halves are read with ReadAt, so f's offset is not used.
func readSplit(f *os.File, path string) (*Snapshot, tail, bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < splitMin {
		return nil, tail{}, false
	}
	split := lineAfter(f, st.Size()/2)
	if split < 0 {
		return nil, tail{}, false
	}
	return readSplitAt(f, path, split)
}

// readSplitAt is readSplit with the second half starting at split, the
// offset of a line start.
func readSplitAt(f *os.File, path string, split int64) (*Snapshot, tail, bool) {
	a := parser{path: path, keep: true, bufSize: readChunk}
	b := parser{path: path, keep: true, bufSize: readChunk, rest: true}
	a.b.bulk, b.b.bulk = true, true
	var errB error
	var wg sync.WaitGroup
	wg.Go(func() {
		// To the end of the file, however long it is by now, as the
		// sequential read would.
		errB = b.run(io.NewSectionReader(f, split, math.MaxInt64-split))
	})
	errA := a.run(io.NewSectionReader(f, 0, split))
	wg.Wait()
	if errA != nil || errB != nil || a.parsed == 0 {
		return nil, tail{}, false
	}
	entries := make([]*Entry, 0, len(a.entries)+len(b.entries))
	entries = append(append(entries, a.entries...), b.entries...)
	leafSet, leaf := a.leafSet, a.leaf
	switch {
	case b.leafSet:
		leafSet, leaf = true, b.leaf
	case len(b.entries) > 0:
		leafSet, leaf = false, nil
	}
	name := a.name
	if b.hasName {
		name = b.name
	}
	t := b.tail // the end of the file is the second half's
	t.size += split
	if t.repaired {
		t.truncateAt += split
	}
	snap := &Snapshot{
		Path: path, Header: a.header, Entries: entries, Name: name,
		RepairedTail: t.repaired, MissingNewline: t.unterminated && !t.repaired,
		Fallback: a.fallback,
	}
	if snap.Fallback == nil {
		snap.Fallback = b.fallback
	} else if b.fallback != nil {
		snap.Fallback.Count += b.fallback.Count
	}
	snap.LeafID = resolveLeaf(entries, leafSet, leaf)
	return snap, t, true
}

// lineAfter returns the offset just after the first '\n' at or after off
// (-1 if there is none).
func lineAfter(f *os.File, off int64) int64 {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1
		}
		if err != nil {
			return -1
		}
		off += int64(n)
	}
}

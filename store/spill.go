package store

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/armadra/ama-rpc/llm"
)

// Huge entries leave the Go heap once they are on disk (issue 12: four
// 40 MiB prompts held 168 MB of history in the heap, and a prompt that
// needs JSON escapes, as any pasted file with newlines does, twice that).
//
// When File writes an entry whose body is at least SpillBytes, it copies
// the body to a blob file and maps that copy read-only; the entry's body
// pointer then points into the mapping (an atomic swap, so readers on
// other goroutines see one copy or the other, the same bytes). The big
// strings of its cached message move too (llm.MoveStrings: a prompt's
// text, image data, the texts of blocks and tool results): into the same
// mapping when the JSON string in the body is the string itself (share.go),
// else to a mapped copy of their own.
// The heap copies are garbage once no event still holds them. Mapped pages
// are page cache the kernel can drop and read back; they count in the
// process's RSS only while something reads them (a provider encoding a
// request, get_messages, a fork), and then as file pages, not heap.
//
// Why a blob file rather than a mapping of the session file: the body is
// not in the session file as such (its line merges the body's members with
// type, id, parentId and timestamp), and an escaped text is not in it at
// all. The blob file is created next to the session file, unlinked at
// once, so it never shows in a listing and vanishes with the process
// however that ends; its disk space is held until the process exits,
// because a string into a mapping may live anywhere and so nothing is ever
// unmapped. On tmpfs the "disk" is memory: the session directory should
// be on a disk for this to save anything.
//
// Where mapping is not available (not unix, a file system that refuses
// mmap, a failed write), the entry simply stays on the heap.

// SpillBytes is the body size from which an entry is spilled.
const SpillBytes = 1 << 20

// blobFile is an unlinked, append-only file of immutable byte strings,
// each mapped read-only. It is safe for concurrent use.
type blobFile struct {
	mu     sync.Mutex
	dir    string
	fd     *os.File
	size   int64
	failed error // the file could not be created: do not try again
}

// put writes p to the file and returns a read-only mapping of it.
func (b *blobFile) put(p []byte) ([]byte, error) {
	if len(p) == 0 || !canMap || b.dir == "" {
		return nil, errNoMap
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed != nil {
		return nil, b.failed
	}
	if b.fd == nil {
		fd, err := os.CreateTemp(b.dir, ".ama-blob-*")
		if err != nil {
			b.failed = fmt.Errorf("create blob file: %w", err)
			return nil, b.failed
		}
		// Unlinked at once: the open descriptor and the mappings keep
		// it; nothing is left behind by any kind of exit.
		_ = os.Remove(fd.Name())
		b.fd = fd
	}
	page := int64(os.Getpagesize())
	off := (b.size + page - 1) / page * page // mappings start on a page
	if _, err := b.fd.WriteAt(p, off); err != nil {
		return nil, fmt.Errorf("write blob file: %w", err)
	}
	m, err := mapFile(b.fd, off, len(p))
	if err != nil {
		return nil, fmt.Errorf("map blob file: %w", err)
	}
	b.size = off + int64(len(p))
	return m, nil
}

// close closes the descriptor; the mappings stay valid.
func (b *blobFile) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fd != nil {
		b.fd.Close()
		b.fd = nil
	}
	b.failed = errClosedBlobs
}

var (
	errNoMap       = fmt.Errorf("file mappings are not available")
	errClosedBlobs = fmt.Errorf("blob file closed")
)

// spill moves e's body, and the big strings of its cached message, into
// blobs (see the top of this file). It does nothing for a small body or
// one already moved, and leaves e as it was when anything fails.
func (e *Entry) spill(blobs *blobFile) {
	if e.bodyLen < SpillBytes || !e.spilled.CompareAndSwap(false, true) {
		return
	}
	// The message is decoded now, from the heap copy, if it was not yet:
	// decoding it later would read the whole mapping back in.
	_, _, _ = e.contextMessage()
	body := e.Body()
	mapped, err := blobs.put(body)
	if err != nil {
		e.spilled.Store(false)
		return
	}
	if d := e.dec.Load(); d != nil && d.err == nil {
		m := llm.MoveStrings(d.msg, func(s string) (string, bool) {
			if moved, ok := within(s, body, mapped); ok {
				return moved, true
			}
			m, err := blobs.put(unsafe.Slice(unsafe.StringData(s), len(s)))
			if err != nil {
				return "", false
			}
			return unsafe.String(unsafe.SliceData(m), len(m)), true
		})
		if m != d.msg {
			e.dec.Store(&decoded{msg: m})
		}
	}
	e.body.Store(unsafe.SliceData(mapped))
}

// within returns the string at the same place in moved as text is in
// body, when text is a substring of body's own bytes (share.go).
func within(text string, body, moved []byte) (string, bool) {
	if len(text) == 0 || len(body) == 0 {
		return "", false
	}
	t, b := uintptr(unsafe.Pointer(unsafe.StringData(text))), uintptr(unsafe.Pointer(unsafe.SliceData(body)))
	if t < b || t+uintptr(len(text)) > b+uintptr(len(body)) {
		return "", false
	}
	off := int(t - b)
	return unsafe.String(&moved[off], len(text)), true
}

// Snapshot returns an entry with e's fields, body and cached message as
// they are now: an event that announces e can carry it, so that encoding
// the event reads the heap copy even if e spills meanwhile (reading the
// mapping would bring its pages back into memory just to write them out
// once). For an entry too small to spill it returns e.
func (e *Entry) Snapshot() *Entry {
	if e.bodyLen < SpillBytes {
		return e
	}
	c := e.WithParent(e.ParentID)
	c.dec.Store(e.dec.Load())
	c.spilled.Store(true) // a view: it never moves itself
	return c
}

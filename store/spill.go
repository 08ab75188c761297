package store

import (
	"errors"
	"fmt"
	"sync"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/llm"
)

// Huge entries leave the Go heap once they are on disk (issue 12: four
// 40 MiB prompts held 168 MB of history in the heap, and a prompt that
// needs JSON escapes, as any pasted file with newlines does, twice that).
//
// When File writes an entry whose body is at least SpillBytes, it copies
// the body to a blob (a sealed memfd, below) and maps that copy read-only; the entry's body
// pointer then points into the mapping (an atomic swap, so readers on
// other goroutines see one copy or the other, the same bytes). The big
// strings of its cached message move too (llm.MoveStrings: a prompt's
// text, image data, the texts of blocks and tool results): into the same
// mapping when the JSON string in the body is the string itself (share.go),
// else to a mapped copy of their own.
// The heap copies are garbage once no event still holds them. Mapped pages
// count in the process's RSS only while something reads them (a provider
// encoding a request, get_messages, a fork), and then as shared memory,
// not heap.
//
// Why a blob rather than a mapping of the session file: the body is not
// in the session file as such (its line merges the body's members with
// type, id, parentId and timestamp), and an escaped text is not in it at
// all.
//
// Each blob is a memfd (Linux), written once and then sealed against
// every change (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE, F_SEAL_SEAL)
// before it is mapped; the descriptor is closed at once, so only the
// mapping holds it. Issue 36: the blobs were an unlinked file in the
// session directory, which another process could still open through
// /proc/<pid>/fd/N and truncate, and the next read of a mapped page past
// the new end killed the server with SIGBUS. A sealed memfd cannot be
// truncated, grown or written by anyone, root included, so a mapped byte
// can never fault and never change. The price: its pages are shared
// memory, which the kernel can swap but not drop as it drops the page
// cache of a disk file. They still leave the Go heap (the collector
// neither scans nor counts them, so they do not double the heap target)
// and count in the process's RSS only while something reads them. As
// nothing is ever unmapped (a string into a mapping may live anywhere),
// the memory is held until the process exits, as the disk space was.
//
// Where sealed memfds are not available (not Linux, an old kernel, a
// failed write), the entry simply stays on the heap.

// SpillBytes is the body size from which an entry is spilled.
const SpillBytes = 1 << 20

// blobFile is where a File's huge entries go: it makes one sealed,
// read-only mapping per blob (see the top of this file). It is safe for
// concurrent use.
type blobFile struct {
	mu     sync.Mutex
	dir    string // the session's directory; empty disables spilling
	failed error  // blobs cannot be made here: do not try again
}

// put returns a sealed read-only mapping holding a copy of p.
func (b *blobFile) put(p []byte) ([]byte, error) {
	if len(p) == 0 || !canMap || b.dir == "" {
		return nil, errNoMap
	}
	b.mu.Lock()
	failed := b.failed
	b.mu.Unlock()
	if failed != nil {
		return nil, failed
	}
	m, err := sealedCopy(p)
	if err != nil {
		if errors.Is(err, unsupported) {
			b.mu.Lock()
			b.failed = err
			b.mu.Unlock()
		}
		return nil, fmt.Errorf("blob: %w", err)
	}
	return m, nil
}

// close makes later puts fail; the mappings stay valid.
func (b *blobFile) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed = errClosedBlobs
}

var (
	errNoMap       = fmt.Errorf("file mappings are not available")
	errClosedBlobs = fmt.Errorf("session file closed: no more blobs")
	// unsupported marks errors that will not go away (no memfd or seals).
	unsupported = errors.New("sealed memory files are not available")
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
			m, err := blobs.put(alias.Bytes(s))
			if err != nil {
				return "", false
			}
			return alias.String(m), true
		})
		if m != d.msg {
			e.dec.Store(&decoded{msg: m})
		}
	}
	e.body.Store(alias.Ptr(mapped))
}

// within returns the string at the same place in moved as text is in
// body, when text is a substring of body's own bytes (share.go).
func within(text string, body, moved []byte) (string, bool) {
	off, ok := alias.Offset(text, body)
	if !ok {
		return "", false
	}
	return alias.String(moved[off : off+len(text)]), true
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

package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/internal/jsonobj"
)

// File is an open session file: the single writer of §5.1. It holds
// <path>.lock from Create/Open until Close.
//
// Durability: Append hands each batch of lines to the kernel with one
// write(2) on an O_APPEND descriptor and returns; it does not fsync unless
// OpenOptions.SyncOnAppend is set. Once write returns, the data is in the
// page cache and survives the death of this process (panic, SIGKILL, OOM
// kill): the kernel writes it back on its own. Only a kernel crash or power
// loss can lose the last few seconds of appends; a torn tail is then what
// the reader's half-line repair (§5.3) is for. fsync costs from a
// millisecond to tens of milliseconds per call, 100x the append budget, for
// protection ama itself does not give either; callers that want a
// power-loss barrier at a chosen point (say, the end of a turn) call Sync.
// Create is the exception: it fsyncs the new file and its directory, so
// a session whose creation returned survives a crash (see
// directCreateBytes for how a crash during Create ends).
//
// A File is safe for concurrent use; its methods are serialised.
type File struct {
	mu     sync.Mutex
	path   string
	fd     writeTarget
	osf    *os.File // fd as a file, for the identity check (nil when tests inject fd)
	lock   *lockFile
	size   int64 // bytes of complete lines in the file
	sync   bool
	buf    []byte
	sc     jsonobj.Scanner // validates bodies
	closed bool
	broken error    // a failed append could not be rolled back
	blobs  blobFile // where huge entries go once written (spill.go)
}

// writeTarget is the part of *os.File that File uses (replaced in tests to
// inject write failures).
type writeTarget interface {
	Write(p []byte) (int, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// OpenOptions configure Open.
type OpenOptions struct {
	// SyncOnAppend makes every Append and AppendLeaf fsync before it
	// returns (power-loss durability at the price of a disk flush per call).
	SyncOnAppend bool
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Create writes a new session file at path (mode 0600): a small one in
// place, a large one to a file without a name linked into place once
// written (writeAnon; a temporary file renamed into place where that
// cannot be done), fsynced either way (directCreateBytes); missing
// parent directories are created with mode 0700. It fails with ErrExists if path exists and ErrLocked if another
// live writer holds its lock. The returned File holds the lock.
//
// Lazy creation (§5.1) is the caller's business: call Create when the first
// model request is about to be made, with the entries buffered so far. If
// the in-memory leaf is not the last entry, follow with AppendLeaf.
func Create(path string, h Header, entries []*Entry) (*File, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	var sc jsonobj.Scanner
	for _, e := range entries {
		if err := e.validate(&sc); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
	}
	if exists(path) {
		return nil, fmt.Errorf("%w: %s", ErrExists, path)
	}
	// The directory is made only when the lock cannot be for its absence
	// (a session's directory is there but for its first session): a
	// stat of it before every Create was one call of a fork's twenty.
	lk, err := acquireLock(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		lk, err = acquireLock(path)
	}
	if err != nil {
		return nil, err
	}
	f, err := create(path, h, entries)
	if err != nil {
		lk.release()
		return nil, err
	}
	f.lock = lk
	return f, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// create writes the file under the lock. A name taken since Create
// looked fails with ErrExists: createDirect's O_EXCL and writeAnon's link
// do not replace a file; writeTemp's rename would, so it looks again.
func create(path string, h Header, entries []*Entry) (*File, error) {
	size := 1024 // the header
	for _, e := range entries {
		size += e.jsonLen() + 1
	}
	if size <= directCreateBytes {
		return createDirect(path, h, entries, size)
	}
	write := func(w io.Writer) (int64, error) { return writeLines(w, h, entries, size) }
	fd, n, err := writeAnon(path, write)
	if errors.Is(err, errNoAnon) {
		if exists(path) {
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		}
		fd, n, err = writeTemp(path, write)
	}
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %s", ErrExists, path)
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return created(path, fd, n, entries), nil
}

// directCreateBytes bounds the files Create writes in place. A new
// session's file (header, settings, system prompt; ACP session/new
// writes it at once) is one small write: it is created under its own
// name with O_EXCL, written, and the file and its directory fsynced at
// once (syncNew); no temporary file, no rename (a third of the time). A crash
// before Create returns can then leave an empty or torn header under the
// name, which every reader rejects as "missing session header" and List
// skips; the id was never given out. A larger file (a fork of a long
// session) is written whole, and fsynced, before it gets its name
// (writeAnon; elsewhere writeTemp), so a crash cannot leave the first part
// of it looking like a whole session.
const directCreateBytes = 64 << 10

func createDirect(path string, h Header, entries []*Entry, size int) (*File, error) {
	buf := takeLineBuf(size)
	defer func() { giveLineBuf(buf) }()
	buf = h.appendJSON(buf)
	buf = append(buf, '\n')
	for _, e := range entries {
		buf = e.AppendJSON(buf)
		buf = append(buf, '\n')
	}
	fd, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		}
		return nil, fmt.Errorf("create %s: %w: %w", path, ErrWrite, pathless(err))
	}
	if _, err = fd.Write(buf); err == nil {
		err = syncNew(fd, filepath.Dir(path))
	}
	if err != nil {
		fd.Close()
		os.Remove(path)
		return nil, fmt.Errorf("create %s: %w: %w", path, ErrWrite, pathless(err))
	}
	return created(path, fd, int64(len(buf)), entries), nil
}

// syncNew makes a file just created in dir durable: its bytes (fsync of
// the file) and its name (fsync of the directory). Both describe what is
// already written, so neither has to wait for the other: they run at
// once, and a journaling file system (ext4, xfs) serves both with one
// journal commit and one cache flush instead of a second flush for the
// directory (BenchmarkCreateSteps: the syncs of a new session's file).
// It returns when both are done; the file's error is returned, the
// directory's ignored as syncDir does.
func syncNew(fd *os.File, dir string) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		syncDir(dir)
	}()
	err := syncFile(fd)
	<-done
	return err
}

// writeLines writes the header and entries to w (size: what they come
// to) through one reused buffer of a 64th of size, between 64 KiB and
// 1 MiB. A fork of a long session is as large as its file, and a buffer
// that size, or even the MiB it had, is fresh memory the kernel faults
// in page by page (about 2 µs a page here) and garbage for the collector:
// a fork of 1,000 entries (400 KB) spent more on its 1.25 MiB buffer than
// on its fsync (store BenchmarkCreateFork: 2.9x its floor, now 1.7-1.8x).
// Small writes cost calls instead: a fork of 100,000 entries (40 MB)
// took 15 % more CPU in 64 KiB writes than in 1 MiB ones (session
// BenchmarkFork). A 64th keeps both small: at most 64 writes up to 64 MB.
// Up to 4 MB the buffer is the kept one (takeLineBuf).
func writeLines(w io.Writer, h Header, entries []*Entry, size int) (int64, error) {
	chunk := min(max(size/64, 64<<10), 1<<20)
	chunk = 1 << (bits.Len(uint(chunk)) - 1) // a power of two: see below
	buf := takeLineBuf(min(size, chunk+chunk/4))
	defer func() { giveLineBuf(buf) }()
	buf = h.appendJSON(buf)
	buf = append(buf, '\n')
	var n int64
	for _, e := range entries {
		buf = e.AppendJSON(buf)
		buf = append(buf, '\n')
		if len(buf) >= chunk {
			// Whole chunks only, the rest moved to the front: every write
			// starts and ends at a multiple of the chunk in the file, so the
			// page cache takes it in folios of the chunk's size. A write
			// ending mid-chunk left the next one a misaligned start, which
			// the kernel fills with small folios, each dearer to allocate,
			// fill and write back (a fork of 1,000 entries: 2.5x the
			// floor's folio lookups in its writes).
			k := len(buf) - len(buf)%chunk
			if _, err := w.Write(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
			buf = buf[:copy(buf, buf[k:])]
		}
	}
	if _, err := w.Write(buf); err != nil {
		return n, err
	}
	return n + int64(len(buf)), nil
}

// keptLineBytes is the size of the line buffer Create keeps between
// calls: writeLines' smallest (a 64 KiB chunk and a quarter), which also
// holds every file createDirect writes. A new buffer is fresh memory the
// kernel faults in page by page (20 pages; at 1,000 entries a fork spent
// about as much on them as on building its lines) and garbage for the
// collector; keeping one costs 80 KiB for the life of the process.
const keptLineBytes = (64<<10 + 16<<10)

// keptLine is the kept buffer (nil while a Create uses it: Creates at once
// take new ones).
var keptLine struct {
	mu  sync.Mutex
	buf []byte
}

// takeLineBuf returns an empty buffer of at least n bytes: the kept one
// when n fits it.
func takeLineBuf(n int) []byte {
	if n > keptLineBytes {
		return make([]byte, 0, n)
	}
	keptLine.mu.Lock()
	b := keptLine.buf
	keptLine.buf = nil
	keptLine.mu.Unlock()
	if b == nil {
		b = make([]byte, 0, keptLineBytes)
	}
	return b[:0]
}

// giveLineBuf keeps b, written and no longer referenced, for the next
// takeLineBuf if it is the kept buffer's size (one that grew past it for
// a long line is left to the collector).
func giveLineBuf(b []byte) {
	if cap(b) != keptLineBytes {
		return
	}
	keptLine.mu.Lock()
	keptLine.buf = b[:0]
	keptLine.mu.Unlock()
}

// created returns the File of a file just created with entries.
func created(path string, fd *os.File, size int64, entries []*Entry) *File {
	f := &File{path: path, fd: fd, osf: fd, size: size, blobs: blobFile{dir: filepath.Dir(path)}}
	for _, e := range entries {
		e.spill(&f.blobs)
	}
	return f
}

// writeAnon writes a new file for path without a name (openAnon: Linux's
// O_TMPFILE, in path's directory, mode 0600) with write, fsyncs it, links
// it under path and makes the link durable; it returns the file open for
// appending with the bytes written. It is writeTemp without the
// temporary name: a process that dies before the link leaves nothing (a
// temporary file stayed behind), and the link fails with an error
// wrapping fs.ErrExist where a rename would replace a file. It fails
// with errNoAnon, having done nothing, where files without a name cannot
// be made. Other errors wrap ErrWrite.
//
// The order, and why a crash at any point leaves either no file at path
// or the whole of it:
//
//  1. write, then fsync the file while it has no name: its bytes and the
//     blocks holding them are on disk (and the disk's cache flushed)
//     before anything can name them. A crash before the link leaves an
//     inode no directory names (freed by the next mount or fsck).
//  2. link it under path. Until 4. this name is only in memory.
//  3. fsync the file again. The link raised the inode's link count from
//     0, and that count is in the inode, not in the directory: an fsync
//     of the directory alone (what this did before) leaves the inode on
//     disk with no link, and on ext4 without a journal a crash then cost
//     the whole fork after Create had returned (e2fsck: "deleted/unused
//     inode", the entry cleared; seen on a loop device, the device's bytes
//     copied right after Create: "Links: 0"). Nothing of the file's
//     bytes is written here any more (1. did), only its inode.
//  4. the name: on ext4 (syncsNewName) 3. has already made it durable:
//     without a journal ext4's fsync writes the parent directory of an
//     inode that got a new name since its last fsync (ext4_sync_parent,
//     EXT4_STATE_NEWENTRY, set by the link), and with one it commits the
//     transaction of the last change to the inode, the link, which holds
//     the directory's new entry too; the same copy of the device after
//     Create showed the name, the inode with one link and every byte, with
//     and without a journal, and without 3. no name. Elsewhere the
//     directory is fsynced, as POSIX asks.
//
// A crash between 2. and the end of 3./4. leaves no name or the name of a
// whole file: the bytes were durable before the name existed. So a fork
// pays what its floor (create, write, fsync the file, fsync the
// directory) pays on ext4: two flushes, one directory write.
func writeAnon(path string, write func(io.Writer) (int64, error)) (*os.File, int64, error) {
	dir := filepath.Dir(path)
	fd, err := openAnon(dir)
	if errors.Is(err, errNoAnon) {
		return nil, 0, err
	}
	if err == nil {
		var n int64
		if n, err = write(fd); err == nil {
			if err = syncFile(fd); err == nil {
				err = linkAnon(fd, path)
			}
		}
		if err == nil {
			if err = syncFile(fd); err != nil {
				os.Remove(path) // ours, linked just now
			}
		}
		if err == nil {
			if !syncsNewName(fd) {
				syncDir(dir)
			}
			return fd, n, nil
		}
		fd.Close()
	}
	return nil, 0, fmt.Errorf("%w: %w", ErrWrite, pathless(err))
}

// errNoAnon: openAnon cannot make a file without a name here.
var errNoAnon = errors.New("files without a name are not available")

// writeTemp writes a new temporary file next to path (mode 0600) with
// write, fsyncs it, renames it to path and returns it open for appending
// with the bytes written. Errors wrap ErrWrite and name the operation, not
// the temporary file (issue 36: a full disk was reported as a failure to
// write "….jsonl.<pid>.<rand>.tmp").
func writeTemp(path string, write func(io.Writer) (int64, error)) (*os.File, int64, error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path + "." + strconv.Itoa(os.Getpid()) + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrWrite, pathless(err))
	}
	fail := func(err error) (*os.File, int64, error) {
		fd.Close()
		os.Remove(tmp)
		return nil, 0, fmt.Errorf("%w: %w", ErrWrite, pathless(err))
	}
	n, err := write(fd)
	if err != nil {
		return fail(err)
	}
	if err := syncFile(fd); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(path))
	return fd, n, nil
}

// pathless drops the file name from an *fs.PathError ("write: no space
// left on device"), keeping the cause for errors.Is.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

// syncDir makes a rename durable; failures are ignored (some file systems
// cannot fsync a directory).
func syncDir(dir string) {
	if d, err := openDir(dir); err == nil {
		_ = syncFile(d)
		d.Close()
	}
}

// syncFile is (*os.File).Sync for the fsyncs of creation (createDirect,
// writeAnon, writeTemp, syncDir): a test records them there, since a
// missing or misplaced one shows only after a power loss.
var syncFile = (*os.File).Sync

// Open opens an existing session file for writing: it takes the lock,
// reads and validates the whole file, and repairs its end (§5.3): a
// half-written last line is truncated away, a complete last line without
// LF gets one. A file that fails validation is never modified. Errors wrap
// ErrNotFound, ErrLocked or ErrCorrupt (a *CorruptError).
func Open(path string, opts OpenOptions) (*File, *Snapshot, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, openError(path, err)
	}
	lk, err := acquireLock(path)
	if err != nil {
		return nil, nil, err
	}
	fd, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		lk.release()
		return nil, nil, openError(path, err)
	}
	snap, t, err := readSnapshot(fd, path)
	if err == nil {
		err = repair(fd, &t)
	}
	if err != nil {
		fd.Close()
		lk.release()
		return nil, nil, err
	}
	f := &File{path: path, fd: fd, osf: fd, lock: lk, size: t.size, sync: opts.SyncOnAppend, blobs: blobFile{dir: filepath.Dir(path)}}
	for _, e := range snap.Entries { // a resumed session's huge entries leave the heap too
		e.spill(&f.blobs)
	}
	return f, snap, nil
}

func repair(fd *os.File, t *tail) error {
	switch {
	case t.repaired:
		if err := fd.Truncate(t.truncateAt); err != nil {
			return fmt.Errorf("repair %s: %w", fd.Name(), err)
		}
		t.size = t.truncateAt
	case t.unterminated:
		if _, err := fd.Write([]byte{'\n'}); err != nil {
			return fmt.Errorf("repair %s: %w", fd.Name(), err)
		}
		t.size++
	default:
		return nil
	}
	return fd.Sync()
}

// Append writes the entries as lines with a single write call (a body of
// at least directBody is written by a call of its own, between the
// pieces of its line, rather than copied). The entries
// must carry their id, parentId and timestamp already. If the write fails
// the file is truncated back to its previous size, so no partial line is
// left behind; if even that fails the File refuses further writes
// (ErrClosed) and the next Open repairs the tail.
func (f *File) Append(entries ...*Entry) error {
	if len(entries) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range entries {
		if err := e.validate(&f.sc); err != nil {
			return fmt.Errorf("append to %s: %w", f.path, err)
		}
	}
	// A huge body (a pasted file of many MiB) is written from the entry
	// itself instead of being copied into the line buffer first: one copy
	// of the text less at the peak of a huge prompt.
	buf := f.buf[:0]
	var parts [][]byte
	start := 0
	for _, e := range entries {
		inner := bodyInner(e.Body())
		if len(inner) < directBody {
			buf = e.AppendJSON(buf)
		} else {
			buf = e.appendHead(buf, true)
			parts = append(parts, buf[start:], inner)
			start = len(buf)
			buf = e.appendTail(buf)
		}
		buf = append(buf, '\n')
	}
	parts = append(parts, buf[start:])
	f.keep(buf)
	if err := f.write(parts...); err != nil {
		return err
	}
	for _, e := range entries { // on disk: huge ones leave the heap (spill.go)
		e.spill(&f.blobs)
	}
	return nil
}

// directBody is the body size from which Append writes a body in place.
const directBody = 1 << 20

// keep retains buf for the next append unless it grew large (an image).
func (f *File) keep(buf []byte) {
	if cap(buf) <= 1<<20 {
		f.buf = buf
	} else {
		f.buf = nil
	}
}

// AppendLeaf writes a leaf line {"type":"leaf","id":<id|null>,"timestamp":ts}
// that moves the active branch (§5.5); nil is the empty branch.
func (f *File) AppendLeaf(id *string, ts string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	buf := append(f.buf[:0], `{"type":"leaf","id":`...)
	if id == nil {
		buf = append(buf, "null"...)
	} else {
		buf = appendJSONString(buf, *id)
	}
	buf = append(buf, `,"timestamp":`...)
	buf = appendJSONString(buf, ts)
	buf = append(buf, "}\n"...)
	f.keep(buf)
	return f.write(buf)
}

// write writes the pieces of one or more lines in order; on failure the
// file is truncated back to where the first piece began.
func (f *File) write(pieces ...[]byte) error {
	if f.closed {
		return fmt.Errorf("append to %s: %w", f.path, ErrClosed)
	}
	if f.broken != nil {
		return fmt.Errorf("append to %s: %w (after %w)", f.path, ErrClosed, f.broken)
	}
	if err := f.check(); err != nil {
		return fmt.Errorf("append to %s: %w", f.path, err)
	}
	var n, total int
	for _, p := range pieces {
		total += len(p)
	}
	var err error
	for _, p := range pieces {
		k, werr := f.fd.Write(p)
		n += k
		if err = werr; err != nil || k != len(p) {
			break
		}
	}
	if err == nil && n == total {
		f.size += int64(n)
		if f.sync {
			if err := f.fd.Sync(); err != nil {
				return fmt.Errorf("sync %s: %w: %w", f.path, ErrWrite, pathless(err))
			}
		}
		return nil
	}
	if err == nil {
		err = fmt.Errorf("short write (%d of %d bytes)", n, total)
	}
	if n > 0 {
		if terr := f.fd.Truncate(f.size); terr != nil {
			f.broken = err
			return fmt.Errorf("append to %s: %w: %w; rollback failed: %w", f.path, ErrWrite, pathless(err), pathless(terr))
		}
	}
	return fmt.Errorf("append to %s: %w: %w", f.path, ErrWrite, pathless(err))
}

// Check reports whether the file at the path is still the one this File
// writes, at the size it wrote (a *ChangedError otherwise). Append and
// AppendLeaf check on their own; Check is for a last look before Close.
func (f *File) Check() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("check %s: %w", f.path, ErrClosed)
	}
	return f.check()
}

// check makes sure the file at f.path is still the one this File writes,
// at the size it wrote (issue 36: appends to a file deleted or replaced
// under the server went to an inode no name led to). Two stat calls per
// append; a race with a change between check and write is not closed
// (the next append sees it).
func (f *File) check() error {
	if f.osf == nil {
		return nil
	}
	same, size, err := identity(f.osf, f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ChangedError{Path: f.path, What: "deleted"}
	case err != nil:
		return fmt.Errorf("%w: %w", ErrWrite, pathless(err))
	case !same:
		return &ChangedError{Path: f.path, What: "replaced"}
	case size < f.size:
		return &ChangedError{Path: f.path, What: "truncated", Size: size, Want: f.size}
	case size > f.size:
		return &ChangedError{Path: f.path, What: "appended to", Size: size, Want: f.size}
	}
	return nil
}

// Rewrite replaces the session file with h, entries and (when leaf is
// not the last entry) a leaf line, written whole to a temporary file and
// renamed over f.path: the recovery from ErrFileChanged, with everything
// the caller holds in memory. A file another process put at the path is
// kept next to it as <path>.replaced-<unix nanoseconds>; a deleted lock
// file is written again. Later appends go to the new file.
func (f *File) Rewrite(h Header, entries []*Entry, leaf *string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("rewrite %s: %w", f.path, ErrClosed)
	}
	buf := h.appendJSON(nil)
	buf = append(buf, '\n')
	for _, e := range entries {
		buf = e.AppendJSON(buf)
		buf = append(buf, '\n')
	}
	if n := len(entries); leaf == nil && n > 0 || leaf != nil && (n == 0 || entries[n-1].ID != *leaf) {
		buf = append(buf, `{"type":"leaf","id":`...)
		if leaf == nil {
			buf = append(buf, "null"...)
		} else {
			buf = appendJSONString(buf, *leaf)
		}
		buf = append(buf, `,"timestamp":`...)
		buf = appendJSONString(buf, FormatTime(time.Now()))
		buf = append(buf, "}\n"...)
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("rewrite %s: %w: %w", f.path, ErrWrite, pathless(err))
	}
	if f.osf != nil {
		if mine, err := f.osf.Stat(); err == nil {
			if at, err := os.Stat(f.path); err == nil && !os.SameFile(mine, at) {
				aside := f.path + ".replaced-" + strconv.FormatInt(time.Now().UnixNano(), 10)
				if err := os.Rename(f.path, aside); err != nil {
					return fmt.Errorf("rewrite %s: keep the other file: %w: %w", f.path, ErrWrite, pathless(err))
				}
			}
		}
	}
	fd, _, err := writeTemp(f.path, func(w io.Writer) (int64, error) { n, err := w.Write(buf); return int64(n), err })
	if err != nil {
		return fmt.Errorf("rewrite %s: %w", f.path, err)
	}
	_ = f.fd.Close()
	f.fd, f.osf, f.size, f.broken = fd, fd, int64(len(buf)), nil
	if f.lock != nil {
		f.lock.restore()
	}
	return nil
}

// Sync flushes appended lines to stable storage (fsync).
func (f *File) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("sync %s: %w", f.path, ErrClosed)
	}
	if err := f.fd.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", f.path, err)
	}
	return nil
}

// Close closes the file and releases the lock. Later appends fail with
// ErrClosed. Close is idempotent.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.blobs.close()
	err := f.fd.Close()
	if f.lock != nil {
		f.lock.release()
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", f.path, err)
	}
	return nil
}

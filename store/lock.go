package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// The single-writer lock of §5.1 is a file <session>.lock created with
// O_EXCL that holds the owner's pid in decimal. A lock is stale, and is
// taken over, when its pid is not a live process (kill(pid, 0) fails with
// ESRCH), cannot be read, or is this process's pid while this process does
// not hold it (a leftover from an earlier process that had the same pid,
// e.g. in a container). Otherwise the lock is busy and acquiring it fails
// with ErrLocked. Opening the same file twice in one process is a conflict
// too, which is why the package keeps a process-wide set of held locks:
// the lock's semantics are per process, so this one piece of package state
// is deliberate.
//
// Every lock this process holds has the same content, its pid. So a new
// lock is, where it can be (Linux, the same file system), one more name
// of the file of a lock already held (held.spare, kept open: linkLock),
// made with link(2), which fails on a taken name as O_EXCL does: no new
// inode, no write. A fork always holds its source's lock, and on ext4
// without a journal a new inode costs a scan past every inode deleted in
// the last half minute (session BenchmarkFork: up to a third of a fork
// of 1,000 entries); releasing such a name frees no inode either. Only
// where no lock is held, or the link fails otherwise, is the lock file
// created with O_EXCL and written. The names share a file: nobody writes
// into a lock file once made (a takeover renames it aside and removes
// it; restore makes a new one), so each still holds exactly the pid.

var held = struct {
	sync.Mutex
	m     map[string]*lockFile // nil while being acquired, then the lock
	spare *lockFile            // a held lock with its file open, to link the next from
}{m: map[string]*lockFile{}}

type lockFile struct {
	path string // <session>.lock
	key  string // absolute path, key of held.m
	pid  []byte // content we wrote
	fd   int    // the lock file open, to link the next lock from; -1 if not
	once sync.Once
}

// ownPid is this process's pid in decimal, what its locks hold (read
// once: a Go process does not fork without exec; os.Getpid is a system
// call each time). Never written to.
var ownPid = []byte(strconv.Itoa(os.Getpid()))

func lockKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

func acquireLock(file string) (*lockFile, error) {
	lk := &lockFile{path: file + ".lock", pid: ownPid, fd: -1}
	lk.key = lockKey(lk.path)
	held.Lock()
	if _, taken := held.m[lk.key]; taken {
		held.Unlock()
		return nil, fmt.Errorf("%w: %s is already open in this process", ErrLocked, file)
	}
	held.m[lk.key] = nil // reserved while we try
	held.Unlock()
	ok := false
	defer func() {
		if !ok {
			held.Lock()
			delete(held.m, lk.key)
			held.Unlock()
		}
	}()
	for attempt := 0; attempt < 2; attempt++ {
		err := lk.create()
		if err == nil {
			ok = true
			lk.offer()
			return lk, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		content, err := os.ReadFile(lk.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		owner := parsePid(content)
		stale := err != nil || owner <= 0 || owner == os.Getpid() || !processAlive(owner)
		if !stale || attempt > 0 {
			return nil, fmt.Errorf("%w: %s is in use by pid %d", ErrLocked, file, owner)
		}
		if err := lk.takeOver(content); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrLocked, file, err)
		}
	}
	return nil, fmt.Errorf("%w: cannot lock %s", ErrLocked, file)
}

// create makes the lock file: a link to a held lock's file if it can,
// else a new file. Either fails with an error wrapping fs.ErrExist if the
// name is taken.
func (lk *lockFile) create() error {
	for range 3 {
		held.Lock()
		sp, from := held.spare, -1
		if sp != nil {
			from = dupFD(sp.fd) // its own descriptor: sp may be released meanwhile
		}
		held.Unlock()
		if from < 0 {
			break
		}
		err := linkLock(from, lk.path)
		if err == nil {
			lk.setFD(from)
			return nil
		}
		closeFD(from)
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break // another file system, say: the spare stays for its own
		}
		if _, serr := os.Stat(filepath.Dir(lk.path)); errors.Is(serr, fs.ErrNotExist) {
			return err // the new lock's directory is missing (Create makes it), not sp's name
		}
		demote(sp) // its file has no name left (its directory was removed)
	}
	fd, err := createExcl(lk.path, lk.pid)
	if err == nil {
		lk.setFD(fd)
	}
	return err
}

// setFD records the lock's open file (held.spare's file is read under
// held's mutex).
func (lk *lockFile) setFD(fd int) {
	held.Lock()
	lk.fd = fd
	held.Unlock()
}

// demote stops sp, if it is still the lock to link from, being that one:
// its file is closed (it is only ever linked from) and another held lock
// takes its place.
func demote(sp *lockFile) {
	held.Lock()
	defer held.Unlock()
	if held.spare == sp {
		sp.closeFile()
	}
}

// offer records lk as held, and as the lock the next links from if there
// is none.
func (lk *lockFile) offer() {
	held.Lock()
	held.m[lk.key] = lk
	if held.spare == nil && lk.fd >= 0 {
		held.spare = lk
	}
	held.Unlock()
}

var errLockRace = errors.New("lock changed hands during takeover")

// takeOver removes a stale lock whose content was stale. It first renames
// the lock aside and checks that what it moved is still the stale lock, so
// that two processes taking over at the same time cannot delete each
// other's fresh lock.
func (lk *lockFile) takeOver(stale []byte) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	aside := lk.path + ".stale." + string(lk.pid) + "." + hex.EncodeToString(rnd[:])
	if err := os.Rename(lk.path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	moved, err := os.ReadFile(aside)
	if err == nil && bytes.Equal(moved, stale) {
		return os.Remove(aside)
	}
	// We moved a lock somebody created after our read: put it back unless
	// the slot was taken again.
	_ = os.Link(aside, lk.path)
	os.Remove(aside)
	return errLockRace
}

// restore writes the lock file again if it is gone (Rewrite: the
// session directory was removed under the server).
func (lk *lockFile) restore() {
	if _, err := os.Stat(lk.path); errors.Is(err, fs.ErrNotExist) {
		lk.drop()
		if lk.create() == nil {
			lk.offer()
		}
	}
}

// drop closes the lock's file (no longer one to link from); another held
// lock, if any, is the one to link from.
func (lk *lockFile) drop() {
	held.Lock()
	defer held.Unlock()
	lk.closeFile()
}

// closeFile closes the lock's file and, if it was the one to link from,
// makes another held lock that one. Under held's mutex.
func (lk *lockFile) closeFile() {
	if held.spare == lk {
		held.spare = nil
		for _, o := range held.m {
			if o != nil && o != lk && o.fd >= 0 {
				held.spare = o
				break
			}
		}
	}
	if lk.fd >= 0 {
		closeFD(lk.fd)
		lk.fd = -1
	}
}

// release removes the lock file if it is still ours. Idempotent.
func (lk *lockFile) release() {
	lk.once.Do(func() {
		if holds(lk.path, lk.pid) {
			os.Remove(lk.path)
		}
		lk.drop()
		held.Lock()
		delete(held.m, lk.key)
		held.Unlock()
	})
}

// parsePid reads a pid like JavaScript parseInt(text.trim(), 10): leading
// decimal digits after optional whitespace and sign; 0 if there are none.
func parsePid(b []byte) int {
	b = bytes.TrimSpace(b)
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1<<30 {
			break
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

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

var held = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

type lockFile struct {
	path string // <session>.lock
	key  string // absolute path, key of held.m
	pid  []byte // content we wrote
	once sync.Once
}

func lockKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

func acquireLock(file string) (*lockFile, error) {
	lk := &lockFile{path: file + ".lock", pid: []byte(strconv.Itoa(os.Getpid()))}
	lk.key = lockKey(lk.path)
	held.Lock()
	if held.m[lk.key] {
		held.Unlock()
		return nil, fmt.Errorf("%w: %s is already open in this process", ErrLocked, file)
	}
	held.m[lk.key] = true // reserved while we try
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

func (lk *lockFile) create() error { return createExcl(lk.path, lk.pid) }

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
		_ = lk.create()
	}
}

// release removes the lock file if it is still ours. Idempotent.
func (lk *lockFile) release() {
	lk.once.Do(func() {
		if holds(lk.path, lk.pid) {
			os.Remove(lk.path)
		}
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

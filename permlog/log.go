package permlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// ErrLogWrite wraps every failure to write the decision log (wire code
// permission_log_failed).
var ErrLogWrite = errors.New("permission log write failed")

// Log appends records as JSON lines to one file (permission.logPath).
// Every record is written with one write call on an O_APPEND descriptor
// before Append returns, so it survives a crash of ama-rpc; the file is
// synced to the disk at most SyncEvery after a record (at the next Append
// after that, and at Close), so a crash of the machine loses at most the
// last SyncEvery of records. Syncing every record costs about a
// millisecond on a disk, twenty times the budget of a decision.
type Log struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// synced is when the file was last synced (guarded by mu).
	synced time.Time
	// dirty: records were written since the last sync.
	dirty bool
	// fail, when set, makes writes fail (tests of the fail-closed path).
	fail func() error
}

// OpenLog opens (creating it) the log at path, which must be absolute.
func OpenLog(path string) (*Log, error) {
	f, err := ownfs.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("permission log: %w", err)
	}
	return &Log{path: path, f: f}, nil
}

// Path is the file the log writes.
func (l *Log) Path() string { return l.path }

// Append writes one record. A nil Log writes nothing.
func (l *Log) Append(r *Record) error {
	if l == nil {
		return nil
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLogWrite, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		if err := l.fail(); err != nil {
			return fmt.Errorf("%w: %w", ErrLogWrite, err)
		}
	}
	if l.f == nil {
		return fmt.Errorf("%w: %s: %w", ErrLogWrite, l.path, os.ErrClosed)
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("%w: %w", ErrLogWrite, err)
	}
	l.dirty = true
	if now := time.Now(); now.Sub(l.synced) >= SyncEvery {
		l.synced, l.dirty = now, false
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("%w: %w", ErrLogWrite, err)
		}
	}
	return nil
}

// SyncEvery bounds how long a written record may stay unsynced.
const SyncEvery = time.Second

// Close closes the file; later appends fail.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	var err error
	if l.dirty {
		err = l.f.Sync()
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// FailWith makes every later Append fail with what f returns (nil: the
// write goes on). For tests of the fail-closed path.
func (l *Log) FailWith(f func() error) {
	l.mu.Lock()
	l.fail = f
	l.mu.Unlock()
}

// PathOrEmpty is the log's path, "" for a nil Log.
func (l *Log) PathOrEmpty() string {
	if l == nil {
		return ""
	}
	return l.path
}

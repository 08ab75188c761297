package checkpoint

import (
	"path/filepath"
	"sync"
)

// Turn is the checkpoint of one turn: the state of every path the turn
// changes, recorded the first time the path is seen. It is safe for
// concurrent use (tools run in parallel).
type Turn struct {
	store *Store
	cwd   string

	mu    sync.Mutex
	files map[string]*tracked // by Key
}

type tracked struct {
	done  chan struct{} // closed when rec is set
	rec   Record        // guarded by done
	after string        // guarded by Turn.mu
}

// NewTurn starts the checkpoint of a turn; cwd is the session working
// directory that Keys are relative to.
func NewTurn(s *Store, cwd string) *Turn {
	return &Turn{store: s, cwd: filepath.Clean(cwd), files: map[string]*tracked{}}
}

// BeforeChange must be called before a tool creates, modifies or deletes
// absPath. The first call for a path in this turn snapshots it (Store.Snapshot)
// and returns first = true, so the session can append an
// ama.checkpoint-track entry; later calls return the same record and
// first = false. Concurrent callers for the same path all wait until the
// snapshot is complete, so no caller can change the file before it is
// recorded. err (first caller only) explains a record with Skipped
// "backup_missing"; it is for logging, the record is kept either way.
func (t *Turn) BeforeChange(absPath string) (rec Record, first bool, err error) {
	abs := t.abs(absPath)
	key := Key(t.cwd, abs)
	t.mu.Lock()
	tr, ok := t.files[key]
	if !ok {
		tr = &tracked{done: make(chan struct{})}
		t.files[key] = tr
	}
	t.mu.Unlock()
	if ok {
		<-tr.done
		return tr.rec, false, nil
	}
	tr.rec, err = t.store.Snapshot(abs)
	close(tr.done)
	return tr.rec, true, err
}

// After notes what the agent left at absPath (its content hash, or
// AfterAbsent), for conflict detection at rewind. Call it after the change
// (after each tool, or once at the end of the turn); the last call wins.
// Paths this turn has not recorded with BeforeChange are ignored.
func (t *Turn) After(absPath string) {
	abs := t.abs(absPath)
	key := Key(t.cwd, abs)
	t.mu.Lock()
	tr, ok := t.files[key]
	t.mu.Unlock()
	if !ok {
		return
	}
	<-tr.done
	state := afterState(abs)
	t.mu.Lock()
	tr.after = state
	t.mu.Unlock()
}

// Files returns the records of this turn by Key, with After filled in. It
// waits for snapshots still in progress. The map is a copy.
func (t *Turn) Files() map[string]Record {
	t.mu.Lock()
	all := make(map[string]*tracked, len(t.files))
	for k, tr := range t.files {
		all[k] = tr
	}
	t.mu.Unlock()
	out := make(map[string]Record, len(all))
	for k, tr := range all {
		<-tr.done
		rec := tr.rec
		t.mu.Lock()
		rec.After = tr.after
		t.mu.Unlock()
		out[k] = rec
	}
	return out
}

func (t *Turn) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(t.cwd, p)
}

// Union merges the files of consecutive turns, oldest first, into the map
// Restore takes: per path, the earliest record (the state before the
// oldest turn that touched it) with the After of the latest record (what
// the agent last left; a later unknown After replaces an earlier one,
// since the earlier one is stale).
func Union(turns ...map[string]Record) map[string]Record {
	out := map[string]Record{}
	for _, files := range turns {
		for k, r := range files {
			if prev, ok := out[k]; ok {
				prev.After = r.After
				out[k] = prev
				continue
			}
			out[k] = r
		}
	}
	return out
}

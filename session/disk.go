package session

import (
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/store"
)

// diskState tracks the session file. Entries that could not be written
// (disk full, file removed…) stay in unsynced and are written with the next
// append, so nothing reported in memory is silently given up while the
// process lives.
type diskState struct {
	file     *store.File
	path     string // planned or actual path; "" when not persisting
	unsynced []diskWrite
	batch    []*store.Entry // scratch for flushUnsynced
	warned   bool
	// unannounced are entries appended before the file existed; their
	// entry_appended goes out once the file holds them.
	unannounced []*store.Entry
}

// pending reports a persisting session whose file is not created yet.
func (d *diskState) pending() bool { return d.path != "" && d.file == nil }

// diskWrite is one line still to write: an entry, or (entry nil) a leaf
// line. Keeping both in one queue keeps the file's line order, which
// decides the active branch on reopen.
type diskWrite struct {
	entry  *store.Entry
	leafID *string
	ts     string
	// deferred: the entry's first write failed, so its entry_appended
	// waits until a retry writes it.
	deferred bool
}

func (d *diskState) close() error {
	if d.file == nil {
		return nil
	}
	err := d.file.Close()
	d.file = nil
	return err
}

// exists reports whether the session file has been created.
func (d *diskState) exists() bool { return d.file != nil }

// persist writes e (and anything left unsynced) when the file exists. It
// reports whether e is on disk now; when it is not, e is announced by the
// write that finally stores it.
func (st *state) persist(e *store.Entry) bool {
	if st.disk.file == nil {
		return false
	}
	st.disk.unsynced = append(st.disk.unsynced, diskWrite{entry: e})
	st.flushUnsynced()
	for i := range st.disk.unsynced {
		if st.disk.unsynced[i].entry == e {
			st.disk.unsynced[i].deferred = true
			return false
		}
	}
	return true
}

// persistLeaf records a leaf move when the file exists.
func (st *state) persistLeaf(id *string) {
	if st.disk.file == nil {
		return
	}
	st.disk.unsynced = append(st.disk.unsynced, diskWrite{leafID: id, ts: st.isoNow()})
	st.flushUnsynced()
}

// flushUnsynced writes the queued lines in order, consecutive entries in
// one append; it stops at the first failure and keeps the rest.
func (st *state) flushUnsynced() {
	q := st.disk.unsynced
	for len(q) > 0 {
		n, err := st.writeHead(q)
		if errors.Is(err, store.ErrFileChanged) {
			st.disk.unsynced = q
			st.rewriteFile(err)
			return
		}
		if err != nil {
			st.disk.unsynced = q
			st.diskFailed(err)
			return
		}
		q = q[n:]
	}
	st.disk.unsynced = st.disk.unsynced[:0]
	st.disk.warned = false
}

// writeHead writes the first queued line, or the run of entries it
// starts, and says how many queued lines it wrote.
func (st *state) writeHead(q []diskWrite) (int, error) {
	if err := st.s.deps.writeFault(); err != nil {
		return 0, err
	}
	if q[0].entry == nil {
		return 1, st.disk.file.AppendLeaf(q[0].leafID, q[0].ts)
	}
	n := 1
	for n < len(q) && q[n].entry != nil {
		n++
	}
	batch := st.disk.batch[:0]
	for _, w := range q[:n] {
		batch = append(batch, w.entry)
	}
	err := st.disk.file.Append(batch...)
	clear(batch) // do not pin written entries
	st.disk.batch = batch[:0]
	if err == nil {
		for _, w := range q[:n] {
			if w.deferred {
				st.s.publish(events.EntryAppended{Entry: w.entry})
			}
		}
	}
	return n, err
}

func (st *state) diskFailed(err error) {
	st.s.log.Error("write session file", zap.String("path", st.disk.path), zap.Error(err))
	if !st.disk.warned {
		st.disk.warned = true
		st.s.publish(events.Notification{Level: "error", Err: err,
			Message: "session file " + st.disk.path + " could not be written (entries are kept in memory and retried): " + err.Error(),
			Key:     "notice.sessionFile.writeFailed", Args: []any{st.disk.path, err.Error()}})
	}
}

// rewriteFile answers a session file that another process deleted,
// replaced, truncated or appended to (store.ErrFileChanged, found before
// an append wrote anything): the file is written again, whole, from
// memory — the header, every entry of the tree and the leaf — so every
// entry announced so far is on disk again; a foreign file at the path is
// kept aside by store.File.Rewrite. It is said out loud either way: a
// notification with code session_file_changed, and the entries waiting
// for the write are announced once they are in the new file. If the
// rewrite fails too, the entries stay queued (diskFailed) and the next
// append tries again.
func (st *state) rewriteFile(changed error) {
	entries := st.tree.Entries()
	if err := st.disk.file.Rewrite(st.header(), entries, st.tree.Leaf()); err != nil {
		st.diskFailed(fmt.Errorf("%w; rewriting it failed: %w", changed, err))
		return
	}
	for _, w := range st.disk.unsynced {
		if w.entry != nil && w.deferred {
			st.s.publish(events.EntryAppended{Entry: w.entry})
		}
	}
	st.disk.unsynced = st.disk.unsynced[:0]
	st.disk.warned = false
	st.s.log.Error("session file changed under the server; rewritten from memory", zap.String("path", st.disk.path), zap.Error(changed))
	st.s.publish(events.Notification{Level: "error", Err: changed,
		Message: fmt.Sprintf("%v; it was written again from memory (%d entries)", changed, len(entries)),
		Key:     "notice.sessionFile.rewritten", Args: []any{changed.Error(), len(entries)}})
}

// ensureFile creates the session file (header plus every entry so far) if
// the session persists and it does not exist yet, then announces the
// entries that waited for it. Called when the first run or compaction
// starts (before its first event), again before each model request, and
// at Start for sessions created eagerly (ACP session/new).
func (st *state) ensureFile() {
	if st.disk.file != nil || st.disk.path == "" {
		return
	}
	err := st.s.deps.writeFault()
	var f *store.File
	if err == nil {
		f, err = store.Create(st.disk.path, st.header(), st.tree.Entries())
	}
	if err != nil {
		st.diskFailed(err)
		return
	}
	st.disk.file = f
	st.s.fileCreated(st.disk.path)
	for _, e := range st.disk.unannounced {
		st.s.publish(events.EntryAppended{Entry: e})
	}
	st.disk.unannounced = nil
}

// writeFault asks Settings.WriteFault (tests) before a session-file
// write; its error is a store.ErrWrite, as the disk's would be.
func (d *Deps) writeFault() error {
	if fault := d.Settings.WriteFault; fault != nil {
		if err := fault(); err != nil {
			return fmt.Errorf("%w: %w", store.ErrWrite, err)
		}
	}
	return nil
}

// header is the first line of the session file.
func (st *state) header() store.Header {
	h := store.NewHeader(st.id, st.created, st.cwd, st.s.deps.Version)
	h.ParentSession = st.parentSession
	return h
}

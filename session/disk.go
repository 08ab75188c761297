package session

import (
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/session/store"
)

// diskState tracks the session file. Entries that could not be written
// (disk full, file removed…) stay in unsynced and are written with the next
// append, so nothing reported in memory is silently given up while the
// process lives.
type diskState struct {
	file     *store.File
	path     string // planned or actual path; "" when not persisting
	unsynced []*store.Entry
	warned   bool
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

// persist writes e (and anything left unsynced) when the file exists.
func (st *state) persist(e *store.Entry) {
	if st.disk.file == nil {
		return
	}
	st.disk.unsynced = append(st.disk.unsynced, e)
	st.flushUnsynced()
}

func (st *state) flushUnsynced() {
	if len(st.disk.unsynced) == 0 {
		return
	}
	if err := st.disk.file.Append(st.disk.unsynced...); err != nil {
		st.diskFailed(err)
		return
	}
	st.disk.unsynced = st.disk.unsynced[:0]
	st.disk.warned = false
}

func (st *state) diskFailed(err error) {
	st.s.log.Error("write session file", zap.String("path", st.disk.path), zap.Error(err))
	if !st.disk.warned {
		st.disk.warned = true
		st.s.publish(events.Notification{Level: "error", Message: "session file write failed (entries are kept in memory and retried): " + err.Error()})
	}
}

// ensureFile creates the session file (header plus every entry so far) if
// the session persists and it does not exist yet. Called before the first
// model request.
func (st *state) ensureFile() {
	if st.disk.file != nil || st.disk.path == "" {
		return
	}
	f, err := store.Create(st.disk.path, st.header(), st.tree.Entries())
	if err != nil {
		st.diskFailed(err)
		return
	}
	st.disk.file = f
}

// header is the first line of the session file.
func (st *state) header() store.Header {
	h := store.NewHeader(st.id, st.created, st.cwd, st.s.deps.Version)
	h.ParentSession = st.parentSession
	return h
}

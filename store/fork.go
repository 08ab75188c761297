package store

import "fmt"

// ForkEntries returns the entries a fork at entryID starts with (§5.5): the
// path root → entryID of t, inclusive, without leaf lines. The entries are
// shared, not copied (entries are immutable). With head != nil, head (with
// its id and timestamp set by the caller) becomes the new root and the old
// root is re-parented under it — how ama starts a forked task sub-session
// with its custom ama.task entry. The fork's leaf is entryID.
func ForkEntries(t *Tree, entryID string, head *Entry) ([]*Entry, error) {
	path := t.Path(entryID)
	if path == nil {
		return nil, fmt.Errorf("fork: %w: %s", ErrUnknownEntry, entryID)
	}
	if head == nil {
		return path, nil
	}
	root := head.WithParent(nil)
	out := make([]*Entry, 0, len(path)+1)
	out = append(out, root, path[0].WithParent(&root.ID))
	return append(out, path[1:]...), nil
}

// Fork writes a new session file dst holding ForkEntries(t, entryID, head)
// under header h, and returns it open and locked with the entries written.
// h.ParentSession should be the source file's path (§5.2); Fork does not
// invent it, since an unsaved source has none.
func Fork(t *Tree, entryID, dst string, h Header, head *Entry) (*File, []*Entry, error) {
	entries, err := ForkEntries(t, entryID, head)
	if err != nil {
		return nil, nil, err
	}
	f, err := Create(dst, h, entries)
	if err != nil {
		return nil, nil, err
	}
	return f, entries, nil
}

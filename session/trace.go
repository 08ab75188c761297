package session

import (
	"slices"

	"github.com/armadra/ama-rpc/trace"
)

// Trace returns the session trace (get_trace). The parameters are checked
// first; ama-rpc has no task registry, so any taskId is unknown. The
// actor only snapshots the selected entries (the active branch, or every
// entry for branch=all); the trace is built on the caller's goroutine
// from those immutable entries.
func (s *Session) Trace(q trace.Query) (*trace.Result, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if q.TaskID != "" {
		return nil, trace.TaskNotFound(q.TaskID)
	}
	in, err := call(s, func(st *state) trace.Input {
		in := trace.Input{SessionID: st.id, Cwd: st.cwd, SessionFile: st.filePath(), Leaf: st.tree.Leaf(),
			Running: st.run != nil}
		if q.All() {
			in.Entries = slices.Clone(st.tree.Entries())
		} else {
			in.Entries = st.branch()
		}
		return in
	})
	if err != nil {
		return nil, err
	}
	return trace.Build(in, q)
}

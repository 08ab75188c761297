package agents

import (
	"errors"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// ExternalTurn is one turn of an external task in get_trace{taskId}'s
// task.external skeleton: what ama saw of the agent's turn (its stop
// reason, the tool calls it reported, usage), not the agent's own
// transcript, which lives in the agent's session. The shape is ours: the
// spec says only that external turns are empty and the skeleton is in
// task.external (agents.md §6.6); kept in memory, so a resumed parent has
// none for earlier runs.
type ExternalTurn struct {
	Turn       int            `json:"turn"`
	Status     string         `json:"status"`
	StopReason string         `json:"stopReason"`
	StartedAt  int64          `json:"startedAt"`
	EndedAt    int64          `json:"endedAt"`
	Tools      []ExternalTool `json:"tools"`
	Usage      *llm.Usage     `json:"usage,omitempty"`
}

// ExternalTool is one tool call an external agent reported.
type ExternalTool struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// TaskTrace is get_trace's task member for an external task.
type TaskTrace struct {
	TaskID   string           `json:"taskId"`
	Agent    string           `json:"agent"`
	Runner   string           `json:"runner"`
	Status   string           `json:"status"`
	External ExternalSkeleton `json:"external"`
}

// ExternalSkeleton is the external agent's session and ama's record of
// its turns.
type ExternalSkeleton struct {
	SessionID string         `json:"sessionId,omitempty"`
	Turns     []ExternalTurn `json:"turns"`
}

// Trace answers get_trace{taskId} (agents.md §6.6): the ama child's own
// trace (cursor and leafId refer to the child); a child closed to stay
// within the retained children (or one of a resumed parent) is read from
// its session file, which the parent's ama.task entry links; an external
// or host task has no turns, and its skeleton is in task.external.
// Unknown ids are task_not_found.
func (r *Registry) Trace(q trace.Query) (*trace.Result, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	id := q.TaskID
	t := r.Get(id)
	if t == nil {
		return nil, trace.TaskNotFound(id)
	}
	q.TaskID = ""
	r.mu.Lock()
	child, info, cwd := t.child, t.info, t.cwd
	turns := append([]ExternalTurn{}, t.extTurns...)
	r.mu.Unlock()
	if t.noChild() {
		sid := ""
		if info.SessionRef != nil {
			sid = info.SessionRef.SessionID
		}
		res, err := trace.Build(trace.Input{SessionID: sid, Cwd: cwd}, q)
		if err != nil {
			return nil, err
		}
		res.Task = TaskTrace{TaskID: info.TaskID, Agent: info.Agent, Runner: info.Runner, Status: info.Status,
			External: ExternalSkeleton{SessionID: sid, Turns: turns}}
		return res, nil
	}
	if child != nil {
		res, err := child.Trace(q)
		if err == nil || errors.Is(err, trace.ErrInvalidArguments) {
			return res, err
		}
		// Closed meanwhile (released): its file has everything.
	}
	if info.SessionRef == nil || info.SessionRef.SessionFile == "" {
		return nil, trace.TaskNotFound(id)
	}
	snap, err := store.ReadSnapshot(info.SessionRef.SessionFile)
	if err != nil {
		return nil, err
	}
	in := trace.Input{SessionID: snap.Header.ID, Cwd: snap.Header.Cwd, SessionFile: snap.Path, Leaf: snap.LeafID}
	if q.All() {
		in.Entries = snap.Entries
	} else {
		in.Entries = snap.Tree().Branch()
	}
	return trace.Build(in, q)
}

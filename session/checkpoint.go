package session

import (
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// Custom entry types of file checkpoints.
const (
	customCheckpoint      = store.CustomCheckpoint
	customCheckpointTrack = "ama.checkpoint-track"
)

// checkpointData is the ama.checkpoint record of a turn: what the files
// the turn changed held before it (and what the agent left, for conflict
// detection). It is appended right after the turn's user message and again,
// complete, after each tool batch that changed files.
type checkpointData struct {
	V           int                          `json:"v"`
	UserEntryID string                       `json:"userEntryId"`
	Files       map[string]checkpoint.Record `json:"files"`
}

// trackData is an ama.checkpoint-track record: one file first seen by the
// turn.
type trackData struct {
	V           int               `json:"v"`
	UserEntryID string            `json:"userEntryId"`
	Path        string            `json:"path"`
	Record      checkpoint.Record `json:"record"`
}

// turnCheckpoint is the checkpoint of the running turn.
type turnCheckpoint struct {
	userEntryID string
	turn        *checkpoint.Turn
}

// afterUserMessage runs after a user message that starts a new turn: the
// turn's checkpoint begins, and plan-mode notes are added.
func (st *state) afterUserMessage(userEntryID string) {
	if cs := st.s.deps.Checkpoints; cs != nil {
		st.ckpt = &turnCheckpoint{userEntryID: userEntryID, turn: checkpoint.NewTurn(cs, st.cwd)}
	}
	st.appendEntry(store.CustomEntry(customCheckpoint, checkpointData{V: 1, UserEntryID: userEntryID, Files: map[string]checkpoint.Record{}}))
	st.planNotes()
}

// turnTools returns the tools.Env of this turn: the session's, with
// BeforeChange recording files into the turn's checkpoint.
func (st *state) turnTools() *tools.Env {
	env := *st.tenv
	ck := st.ckpt
	if ck == nil {
		return &env
	}
	s := st.s
	env.BeforeChange = func(abs string) {
		rec, first, err := ck.turn.BeforeChange(abs)
		if err != nil {
			s.log.Warn("checkpoint", zap.String("path", abs), zap.Error(err))
			if first { // said once per file and turn; the turn's rewind point has no checkpoint now (points)
				s.publish(events.Notification{Level: "warn", Err: err,
					Message: "the checkpoint of " + abs + " could not be saved, so rewinding this turn cannot restore it: " + err.Error(),
					Key:     "notice.checkpointFailed", Args: []any{abs, err.Error()}})
			}
		}
		if first {
			_ = s.do(func(st *state) {
				st.appendEntry(store.CustomEntry(customCheckpointTrack, trackData{V: 1, UserEntryID: ck.userEntryID,
					Path: checkpoint.Key(st.cwd, abs), Record: rec}))
			})
		}
	}
	return &env
}

// recordAfter notes what the agent left in every file of the turn's
// checkpoint and, when files were touched, appends the complete record.
func (st *state) recordAfter(ck *turnCheckpoint) {
	if ck == nil {
		return
	}
	files := ck.turn.Files()
	if len(files) == 0 {
		return
	}
	for key := range files {
		ck.turn.After(checkpoint.Path(st.cwd, key))
	}
	st.appendEntry(store.CustomEntry(customCheckpoint, checkpointData{V: 1, UserEntryID: ck.userEntryID, Files: ck.turn.Files()}))
}

// checkpointRecords collects the checkpoint of every turn on the branch
// from the user entry at index from on (oldest first): the latest complete
// ama.checkpoint of each turn, plus track records it does not have yet.
func checkpointRecords(branch []*store.Entry, turns map[string]bool) []map[string]checkpoint.Record {
	byTurn := map[string]map[string]checkpoint.Record{}
	var order []string
	note := func(id string) map[string]checkpoint.Record {
		m, ok := byTurn[id]
		if !ok {
			m = map[string]checkpoint.Record{}
			byTurn[id] = m
			order = append(order, id)
		}
		return m
	}
	for _, e := range branch {
		switch e.CustomType() {
		case customCheckpoint:
			d, err := store.CustomData[checkpointData](e)
			if err == nil && turns[d.UserEntryID] {
				m := note(d.UserEntryID)
				for k, r := range d.Files {
					m[k] = r
				}
			}
		case customCheckpointTrack:
			d, err := store.CustomData[trackData](e)
			if err == nil && turns[d.UserEntryID] {
				m := note(d.UserEntryID)
				if _, ok := m[d.Path]; !ok {
					m[d.Path] = d.Record
				}
			}
		}
	}
	out := make([]map[string]checkpoint.Record, 0, len(order))
	for _, id := range order {
		out = append(out, byTurn[id])
	}
	return out
}

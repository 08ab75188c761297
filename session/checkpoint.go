package session

import "github.com/armadra/ama-rpc/session/store"

// checkpointData is the ama.checkpoint record written after each new-turn
// user message: what the files the turn changes held before it.
type checkpointData struct {
	V           int            `json:"v"`
	UserEntryID string         `json:"userEntryId"`
	Files       map[string]any `json:"files"`
}

// afterUserMessage runs after a user message that starts a new turn.
func (st *state) afterUserMessage(userEntryID string) {
	st.appendEntry(store.CustomEntry("ama.checkpoint", checkpointData{V: 1, UserEntryID: userEntryID, Files: map[string]any{}}))
	st.planNotes()
}

package store

import "github.com/armadra/ama-rpc/llm"

// CustomCheckpoint is the custom type of a turn's checkpoint record. The
// agent appends one right after every user message that starts a run,
// naming it in userEntryId, whether file checkpoints are on or not (the
// rest of the record is the session's, session/checkpoint.go).
const CustomCheckpoint = "ama.checkpoint"

// TurnStarts tells which user messages of a set of entries start a turn:
// the rewind points and the turns of a trace. Steering and follow-up
// messages joined the run they were delivered into. A host message
// (llm.OriginHost) keeps its origin when it is queued (host-api §4.7), so
// its origin cannot tell: it starts a turn only when a checkpoint record
// names it. The records are read once, at the first host message. A
// TurnStarts is for one goroutine.
type TurnStarts struct {
	entries []*Entry
	named   map[string]bool // nil until needed
}

// NewTurnStarts returns the turn starts of entries (a branch, or a
// selection that holds each user message's children).
func NewTurnStarts(entries []*Entry) *TurnStarts { return &TurnStarts{entries: entries} }

// Starts reports whether u, the message of entry id, starts a turn.
func (t *TurnStarts) Starts(id string, u *llm.UserMessage) bool {
	if u.Origin.JoinsRun() {
		return false
	}
	if u.Origin != llm.OriginHost {
		return true
	}
	return t.namedByRecord(id)
}

// Entry reports whether e is a user message that starts a turn. The
// facts read when e was made (its role and origin, Entry.learn) answer
// without decoding; only a body they could not read is decoded. A user
// message whose facts say it starts a turn is not decoded here, so one
// that would fail to decode counts too (the caller decodes the messages
// it returns). A hand-written body that repeats its role is judged by
// its first one, as isSystemEntry does.
func (t *TurnStarts) Entry(e *Entry) bool {
	switch f := e.facts; {
	case e.NotUser():
		return false
	case f&factOrigin != 0 && f&factJoins != 0:
		return false
	case f&factOrigin != 0 && f&factHost != 0:
		return t.namedByRecord(e.ID)
	case f&factOrigin != 0:
		return true
	}
	m, err := e.Message()
	if err != nil {
		return false
	}
	u, ok := m.(*llm.UserMessage)
	return ok && t.Starts(e.ID, u)
}

// NotUser reports whether e is known, from the role read when it was
// made, not to be a user message (a message of another role, or not a
// message): a caller looking for user messages skips it without
// decoding it.
func (e *Entry) NotUser() bool {
	return e.Type != TypeMessage || e.facts&factRole != 0 && e.facts&factUser == 0
}

// namedByRecord reports whether a checkpoint record of the entries names
// the user message id.
func (t *TurnStarts) namedByRecord(id string) bool {
	if t.named == nil {
		t.named = map[string]bool{}
		for _, e := range t.entries {
			if e.Type != TypeCustom || e.CustomType() != CustomCheckpoint {
				continue
			}
			if d, err := CustomData[struct {
				UserEntryID string `json:"userEntryId"`
			}](e); err == nil && d.UserEntryID != "" {
				t.named[d.UserEntryID] = true
			}
		}
	}
	return t.named[id]
}

package store

import (
	"encoding/json"
	"reflect"

	"github.com/armadra/ama-rpc/llm"
)

// The bodies of the entry types: the members an entry line has between
// its type and its ids. The constructors below (entry.go) encode these
// types, and rpc/schema describes the session file from them (Bodies), so
// the file and its schema have one source.

// MessageBody is a message entry's body.
type MessageBody struct {
	Message llm.Message `json:"message"`
}

// ModelChangeBody is a model_change entry's body.
type ModelChangeBody struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
	Channel  string `json:"channel,omitempty"`
}

// ThinkingLevelBody is a thinking_level_change entry's body.
type ThinkingLevelBody struct {
	ThinkingLevel string `json:"thinkingLevel"`
}

// CustomBody is a custom entry's body: extension state, not in the
// context; Data's shape depends on CustomType.
type CustomBody struct {
	CustomType string `json:"customType"`
	Data       any    `json:"data"`
}

// CustomMessageBody is a custom_message entry's body: an extension's
// message that enters the context.
type CustomMessageBody struct {
	CustomType string          `json:"customType"`
	Content    llm.UserContent `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// SessionInfoBody is a session_info entry's body (the session's name).
type SessionInfoBody struct {
	Name string `json:"name"`
}

// LabelBody is a label entry's body; an empty label clears it.
type LabelBody struct {
	TargetID string `json:"targetId"`
	Label    string `json:"label,omitempty"`
}

// ContextEditBody is a context_edit entry's body; a null replacement
// removes the message.
type ContextEditBody struct {
	TargetID    string  `json:"targetId"`
	Replacement *string `json:"replacement"`
	Reason      string  `json:"reason"`
}

// CompactionBody is a compaction entry's body.
type CompactionBody struct {
	Summary          string     `json:"summary"`
	FirstKeptEntryID string     `json:"firstKeptEntryId"`
	TokensBefore     int        `json:"tokensBefore"`
	Usage            *llm.Usage `json:"usage,omitempty"`
}

// BranchSummaryBody is a branch_summary entry's body.
type BranchSummaryBody struct {
	FromID  string     `json:"fromId"`
	Summary string     `json:"summary"`
	Usage   *llm.Usage `json:"usage,omitempty"`
}

// UsageBody is a usage entry's body: an auxiliary request's usage.
type UsageBody struct {
	Kind     string    `json:"kind"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Usage    llm.Usage `json:"usage"`
}

// Bodies maps each entry type to the Go type of its body
// (TestBodiesComplete keeps it equal to the Type constants).
func Bodies() map[string]reflect.Type {
	return map[string]reflect.Type{
		TypeMessage:             reflect.TypeFor[MessageBody](),
		TypeCompaction:          reflect.TypeFor[CompactionBody](),
		TypeBranchSummary:       reflect.TypeFor[BranchSummaryBody](),
		TypeContextEdit:         reflect.TypeFor[ContextEditBody](),
		TypeModelChange:         reflect.TypeFor[ModelChangeBody](),
		TypeThinkingLevelChange: reflect.TypeFor[ThinkingLevelBody](),
		TypeCustom:              reflect.TypeFor[CustomBody](),
		TypeCustomMessage:       reflect.TypeFor[CustomMessageBody](),
		TypeLabel:               reflect.TypeFor[LabelBody](),
		TypeSessionInfo:         reflect.TypeFor[SessionInfoBody](),
		TypeUsage:               reflect.TypeFor[UsageBody](),
	}
}

// LeafType is the "type" of a leaf line (§5.5), which moves the active
// branch; a leaf line is not an entry.
const LeafType = leafType

// LeafLine is the shape of a leaf line as AppendLeaf and Rewrite write it
// (by hand, on the append path; TestLeafLineShape keeps them equal).
type LeafLine struct {
	Type      string  `json:"type"` // always "leaf"
	ID        *string `json:"id"`   // null: the empty branch
	Timestamp string  `json:"timestamp,omitempty"`
}

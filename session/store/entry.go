package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/armadra/ama-rpc/llm"
)

// Entry types.
const (
	TypeMessage             = "message"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeContextEdit         = "context_edit"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	TypeUsage               = "usage"
)

// Entry is one line of a session file after the header. Its JSON form is
// {"type":…, <type-specific fields in order>, "id":…, "parentId":…,
// "timestamp":…}; Body holds the type-specific fields as a JSON object.
//
// An Entry is immutable once appended; the decoded message is cached.
type Entry struct {
	Type      string
	ID        string
	ParentID  *string // nil for a root
	Timestamp string  // ISO 8601
	Body      json.RawMessage

	once sync.Once
	msg  llm.Message
	err  error
}

// ErrMalformedEntry is returned for a line that is not a valid entry.
var ErrMalformedEntry = errors.New("malformed entry")

// MarshalJSON writes the entry with type first and ids last.
func (e *Entry) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(e.Body) + 96)
	buf.WriteString(`{"type":`)
	writeJSONString(&buf, e.Type)
	body := bytes.TrimSpace(e.Body)
	if len(body) > 2 { // not "{}"
		buf.WriteByte(',')
		buf.Write(body[1 : len(body)-1])
	}
	buf.WriteString(`,"id":`)
	writeJSONString(&buf, e.ID)
	buf.WriteString(`,"parentId":`)
	if e.ParentID == nil {
		buf.WriteString("null")
	} else {
		writeJSONString(&buf, *e.ParentID)
	}
	buf.WriteString(`,"timestamp":`)
	writeJSONString(&buf, e.Timestamp)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

// UnmarshalJSON reads an entry line. Fields other than type, id, parentId
// and timestamp are kept in Body in their original order.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var fields []rawField
	if err := decodeObject(data, &fields); err != nil {
		return err
	}
	var body bytes.Buffer
	body.WriteByte('{')
	var haveID, haveType bool
	for _, f := range fields {
		switch f.key {
		case "type":
			if err := json.Unmarshal(f.val, &e.Type); err != nil {
				return fmt.Errorf("%w: type is not a string", ErrMalformedEntry)
			}
			haveType = true
		case "id":
			if err := json.Unmarshal(f.val, &e.ID); err != nil {
				return fmt.Errorf("%w: id is not a string", ErrMalformedEntry)
			}
			haveID = true
		case "parentId":
			var p *string
			if err := json.Unmarshal(f.val, &p); err != nil {
				return fmt.Errorf("%w: parentId is not a string", ErrMalformedEntry)
			}
			e.ParentID = p
		case "timestamp":
			var ts any
			_ = json.Unmarshal(f.val, &ts)
			if s, ok := ts.(string); ok {
				e.Timestamp = s
			} else {
				e.Timestamp = string(f.val)
			}
		default:
			if body.Len() > 1 {
				body.WriteByte(',')
			}
			k, _ := json.Marshal(f.key)
			body.Write(k)
			body.WriteByte(':')
			body.Write(f.val)
		}
	}
	if !haveID || !haveType {
		return fmt.Errorf("%w: missing id or type", ErrMalformedEntry)
	}
	body.WriteByte('}')
	e.Body = body.Bytes()
	return nil
}

type rawField struct {
	key string
	val json.RawMessage
}

// decodeObject splits a JSON object into its fields, keeping their order.
func decodeObject(data []byte, out *[]rawField) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%w: not an object", ErrMalformedEntry)
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		*out = append(*out, rawField{key: key, val: val})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	return nil
}

// newEntry builds an entry of typ whose body is the JSON of v.
func newEntry(typ string, v any) *Entry {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: encode %s entry: %v", typ, err))
	}
	return &Entry{Type: typ, Body: b}
}

// MessageEntry returns a message entry.
func MessageEntry(m llm.Message) *Entry {
	e := newEntry(TypeMessage, struct {
		Message llm.Message `json:"message"`
	}{m})
	e.once.Do(func() { e.msg = m })
	return e
}

// Message decodes (once) the message of a message entry.
func (e *Entry) Message() (llm.Message, error) {
	if e.Type != TypeMessage {
		return nil, fmt.Errorf("entry %s is %s, not a message", e.ID, e.Type)
	}
	e.once.Do(func() {
		var aux struct {
			Message json.RawMessage `json:"message"`
		}
		if e.err = json.Unmarshal(e.Body, &aux); e.err == nil {
			e.msg, e.err = llm.DecodeMessage(aux.Message)
		}
	})
	return e.msg, e.err
}

// ModelChangeEntry records a model switch.
func ModelChangeEntry(provider, modelID, channel string) *Entry {
	return newEntry(TypeModelChange, struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
		Channel  string `json:"channel,omitempty"`
	}{provider, modelID, channel})
}

// ThinkingLevelEntry records a thinking-level change.
func ThinkingLevelEntry(level string) *Entry {
	return newEntry(TypeThinkingLevelChange, struct {
		ThinkingLevel string `json:"thinkingLevel"`
	}{level})
}

// CustomEntry records extension state that is not part of the context.
func CustomEntry(customType string, data any) *Entry {
	return newEntry(TypeCustom, struct {
		CustomType string `json:"customType"`
		Data       any    `json:"data"`
	}{customType, data})
}

// CustomMessageEntry records an extension message that enters the context.
func CustomMessageEntry(m *llm.CustomMessage) *Entry {
	return newEntry(TypeCustomMessage, struct {
		CustomType string          `json:"customType"`
		Content    llm.UserContent `json:"content"`
		Display    bool            `json:"display"`
		Details    json.RawMessage `json:"details,omitempty"`
	}{m.CustomType, m.Content, m.Display, m.Details})
}

// SessionInfoEntry records the session name.
func SessionInfoEntry(name string) *Entry {
	return newEntry(TypeSessionInfo, struct {
		Name string `json:"name"`
	}{name})
}

// LabelEntry sets (or, with an empty label, clears) the label of an entry.
func LabelEntry(targetID, label string) *Entry {
	return newEntry(TypeLabel, struct {
		TargetID string `json:"targetId"`
		Label    string `json:"label,omitempty"`
	}{targetID, label})
}

// ContextEditEntry replaces (or with nil removes) a message in the context.
func ContextEditEntry(targetID string, replacement *string, reason string) *Entry {
	return newEntry(TypeContextEdit, struct {
		TargetID    string  `json:"targetId"`
		Replacement *string `json:"replacement"`
		Reason      string  `json:"reason"`
	}{targetID, replacement, reason})
}

// CompactionEntry records a compaction.
func CompactionEntry(summary, firstKeptEntryID string, tokensBefore int, usage *llm.Usage) *Entry {
	return newEntry(TypeCompaction, struct {
		Summary          string     `json:"summary"`
		FirstKeptEntryID string     `json:"firstKeptEntryId"`
		TokensBefore     int        `json:"tokensBefore"`
		Usage            *llm.Usage `json:"usage,omitempty"`
	}{summary, firstKeptEntryID, tokensBefore, usage})
}

// BranchSummaryEntry records a summary of an abandoned branch.
func BranchSummaryEntry(fromID, summary string, usage *llm.Usage) *Entry {
	return newEntry(TypeBranchSummary, struct {
		FromID  string     `json:"fromId"`
		Summary string     `json:"summary"`
		Usage   *llm.Usage `json:"usage,omitempty"`
	}{fromID, summary, usage})
}

// UsageEntry records an auxiliary request's usage (not in the context).
func UsageEntry(kind, provider, model string, usage llm.Usage) *Entry {
	return newEntry(TypeUsage, struct {
		Kind     string    `json:"kind"`
		Provider string    `json:"provider"`
		Model    string    `json:"model"`
		Usage    llm.Usage `json:"usage"`
	}{kind, provider, model, usage})
}

// Decode unmarshals the body into v.
func (e *Entry) Decode(v any) error { return json.Unmarshal(e.Body, v) }

// CustomType returns the customType of a custom or custom_message entry.
func (e *Entry) CustomType() string {
	if e.Type != TypeCustom && e.Type != TypeCustomMessage {
		return ""
	}
	var aux struct {
		CustomType string `json:"customType"`
	}
	_ = json.Unmarshal(e.Body, &aux)
	return aux.CustomType
}

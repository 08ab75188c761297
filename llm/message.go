package llm

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Message is one message of a session: *UserMessage, *AssistantMessage,
// *ToolResultMessage, *SystemMessage, *CustomMessage, *CompactionSummary or
// *BranchSummary. The set is closed.
type Message interface {
	// MessageRole returns the "role" value of the message.
	MessageRole() string
}

// Roles of the message kinds.
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleSystem            = "system"
	RoleCustom            = "custom"
	RoleCompactionSummary = "compactionSummary"
	RoleBranchSummary     = "branchSummary"
)

// Stop reasons of an assistant message.
const (
	StopStop     = "stop"
	StopLength   = "length"
	StopToolUse  = "toolUse"
	StopRefusal  = "refusal"
	StopAborted  = "aborted"
	StopError    = "error"
	AbortMessage = "Request was aborted"
)

// UserMessage is input from the user (or a host, queue, plan or task on the
// user's behalf, see Origin).
type UserMessage struct {
	Role      string      `json:"role"`
	Content   UserContent `json:"content"`
	Timestamp int64       `json:"timestamp"`
	// Origin is empty for plain input, else who put the message there
	// (see the Origin constants).
	Origin Origin `json:"origin,omitempty"`
}

// Origin says who put a user message on the branch; it is stored in the
// session file and sent on the wire as it is. Empty is plain input.
type Origin string

// The origins the agent writes (plan mode writes "plan", plan.OriginPlan).
// A session file may hold others.
const (
	OriginSteer     Origin = "steer"     // a steering message, delivered inside a run
	OriginFollowUp  Origin = "followUp"  // a follow-up, delivered when the run would stop
	OriginHost      Origin = "host"      // a host adapter's messages.sendUser (idle or queued as steering)
	OriginInterrupt Origin = "interrupt" // the prompt of an interrupt (queued steering joined with it)
	OriginTask      Origin = "task"      // a sub-agent's task notification
)

// JoinsRun reports whether a message of this origin is always one that
// was queued and delivered inside a running run (steer, followUp), never
// one that starts a run. A host message can be either (see
// store.StartsTurn).
func (o Origin) JoinsRun() bool { return o == OriginSteer || o == OriginFollowUp }

// AssistantMessage is one model reply.
type AssistantMessage struct {
	Role          string    `json:"role"`
	Content       []Content `json:"content"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	Model         string    `json:"model"`
	Usage         Usage     `json:"usage"`
	StopReason    string    `json:"stopReason"`
	Timestamp     int64     `json:"timestamp"`
	ThinkingLevel string    `json:"thinkingLevel,omitempty"`
	ResponseID    string    `json:"responseId,omitempty"`
	RawStopReason string    `json:"rawStopReason,omitempty"`
	ErrorMessage  string    `json:"errorMessage,omitempty"`
	RetryAfterMs  int64     `json:"retryAfterMs,omitempty"`
}

// ToolResultMessage carries the outcome of one tool call back to the model.
type ToolResultMessage struct {
	Role       string          `json:"role"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    []Content       `json:"content"`
	IsError    bool            `json:"isError"`
	Timestamp  int64           `json:"timestamp"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// ToolDecl is a tool as the model sees it.
type ToolDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Sections are the parts of the system prompt, in their fixed order. Absent
// sections are omitted; in a patch a present section replaces the previous one.
type Sections struct {
	Preamble       *string `json:"preamble,omitempty"`
	Tools          *string `json:"tools,omitempty"`
	Rules          *string `json:"rules,omitempty"`
	ProjectContext *string `json:"project_context,omitempty"`
	Skills         *string `json:"skills,omitempty"`
	Memory         *string `json:"memory,omitempty"`
	Hooks          *string `json:"hooks,omitempty"`
	Cwd            *string `json:"cwd,omitempty"`
	Host           *string `json:"host,omitempty"`
	Role           *string `json:"role,omitempty"`
}

// List returns the present sections in order.
func (s Sections) List() []string {
	var out []string
	for _, p := range []*string{s.Preamble, s.Tools, s.Rules, s.ProjectContext, s.Skills, s.Memory, s.Hooks, s.Cwd, s.Host, s.Role} {
		if p != nil && *p != "" {
			out = append(out, *p)
		}
	}
	return out
}

// Merge applies a patch: every present section of p replaces the one in s.
func (s Sections) Merge(p Sections) Sections {
	pick := func(old, new *string) *string {
		if new != nil {
			return new
		}
		return old
	}
	return Sections{
		Preamble: pick(s.Preamble, p.Preamble), Tools: pick(s.Tools, p.Tools), Rules: pick(s.Rules, p.Rules),
		ProjectContext: pick(s.ProjectContext, p.ProjectContext), Skills: pick(s.Skills, p.Skills),
		Memory: pick(s.Memory, p.Memory), Hooks: pick(s.Hooks, p.Hooks), Cwd: pick(s.Cwd, p.Cwd),
		Host: pick(s.Host, p.Host), Role: pick(s.Role, p.Role),
	}
}

// SystemMessage is the system prompt checkpoint (the first is complete, later
// ones are patches).
type SystemMessage struct {
	Role         string     `json:"role"`
	Sections     Sections   `json:"sections"`
	Timestamp    int64      `json:"timestamp"`
	ToolsAdded   []ToolDecl `json:"toolsAdded,omitempty"`
	ToolsRemoved []string   `json:"toolsRemoved,omitempty"`
}

// CustomMessage is an extension message that enters the model context as a
// user message (display says whether hosts should show it).
type CustomMessage struct {
	Role       string          `json:"role"`
	CustomType string          `json:"customType"`
	Content    UserContent     `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	Timestamp  int64           `json:"timestamp"`
}

// CompactionSummary stands for the compacted part of the context.
type CompactionSummary struct {
	Role         string `json:"role"`
	Summary      string `json:"summary"`
	TokensBefore int    `json:"tokensBefore"`
	Timestamp    int64  `json:"timestamp"`
}

// BranchSummary stands for an abandoned branch.
type BranchSummary struct {
	Role      string `json:"role"`
	Summary   string `json:"summary"`
	FromID    string `json:"fromId"`
	Timestamp int64  `json:"timestamp"`
}

func (*UserMessage) MessageRole() string       { return RoleUser }
func (*AssistantMessage) MessageRole() string  { return RoleAssistant }
func (*ToolResultMessage) MessageRole() string { return RoleToolResult }
func (*SystemMessage) MessageRole() string     { return RoleSystem }
func (*CustomMessage) MessageRole() string     { return RoleCustom }
func (*CompactionSummary) MessageRole() string { return RoleCompactionSummary }
func (*BranchSummary) MessageRole() string     { return RoleBranchSummary }

// UnmarshalJSON decodes assistant content blocks by type.
func (m *AssistantMessage) UnmarshalJSON(data []byte) error {
	type plain AssistantMessage
	var aux struct {
		plain
		Content Blocks `json:"content"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*m = AssistantMessage(aux.plain)
	m.Content = []Content(aux.Content)
	if m.Content == nil {
		m.Content = []Content{}
	}
	return nil
}

// UnmarshalJSON decodes tool result content blocks by type.
func (m *ToolResultMessage) UnmarshalJSON(data []byte) error {
	type plain ToolResultMessage
	var aux struct {
		plain
		Content Blocks `json:"content"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*m = ToolResultMessage(aux.plain)
	m.Content = []Content(aux.Content)
	if m.Content == nil {
		m.Content = []Content{}
	}
	return nil
}

// ErrUnknownRole is returned for a message whose role is not known.
var ErrUnknownRole = errors.New("unknown message role")

// DecodeMessage decodes a message by its "role".
func DecodeMessage(raw json.RawMessage) (Message, error) {
	var head struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	var m Message
	switch head.Role {
	case RoleUser:
		m = &UserMessage{}
	case RoleAssistant:
		m = &AssistantMessage{}
	case RoleToolResult:
		m = &ToolResultMessage{}
	case RoleSystem:
		m = &SystemMessage{}
	case RoleCustom:
		m = &CustomMessage{}
	case RoleCompactionSummary:
		m = &CompactionSummary{}
	case RoleBranchSummary:
		m = &BranchSummary{}
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownRole, head.Role)
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("decode %s message: %w", head.Role, err)
	}
	return m, nil
}

// NewUser returns a user message with string content.
func NewUser(text string, ts int64, origin Origin) *UserMessage {
	return &UserMessage{Role: RoleUser, Content: StringContent(text), Timestamp: ts, Origin: origin}
}

// NewCustom returns a custom message with string content.
func NewCustom(customType, text string, display bool, ts int64) *CustomMessage {
	return &CustomMessage{Role: RoleCustom, CustomType: customType, Content: StringContent(text), Display: display, Timestamp: ts}
}

// ToolCalls returns the tool-call blocks of an assistant message in order.
func (m *AssistantMessage) ToolCalls() []*ToolCall {
	var out []*ToolCall
	for _, c := range m.Content {
		if tc, ok := c.(*ToolCall); ok {
			out = append(out, tc)
		}
	}
	return out
}

// Text returns the text blocks joined with sep.
func (m *AssistantMessage) Text(sep string) string { return JoinText(m.Content, sep) }

// Failed reports whether the reply ended in an error or an abort.
func (m *AssistantMessage) Failed() bool {
	return m.StopReason == StopError || m.StopReason == StopAborted
}

package acp

import (
	"encoding/json"

	"github.com/armadra/ama-rpc/internal/jsonlit"
)

// Wire types of ACP v1 (field names from the public schema of
// @agentclientprotocol/sdk). Struct field order is the key order on the
// wire, chosen to match ama's transcripts.

// ProtocolVersion is the ACP version served (exactly 1: clients reject
// anything else).
const ProtocolVersion = 1

type initializeParams struct {
	ProtocolVersion    json.RawMessage `json:"protocolVersion"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	ClientInfo         json.RawMessage `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []authMethod      `json:"authMethods"`
	AgentInfo         implementation    `json:"agentInfo"`
}

type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	McpCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
	// Meta carries ama extensions: "ama/sandbox" when bash sandboxing is
	// configured.
	Meta map[string]any `json:"_meta,omitempty"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// sessionCapabilities: the presence of an (empty) object means supported.
type sessionCapabilities struct {
	List   struct{} `json:"list"`
	Resume struct{} `json:"resume"`
	Close  struct{} `json:"close"`
}

type authMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Version string `json:"version"`
}

// sessionParams are the parameters of session/new, load and resume.
type sessionParams struct {
	SessionID             string            `json:"sessionId"`
	Cwd                   string            `json:"cwd"`
	McpServers            []json.RawMessage `json:"mcpServers"`
	AdditionalDirectories []string          `json:"additionalDirectories"`
}

type newSessionResult struct {
	SessionID string `json:"sessionId"`
	openSessionResult
}

type openSessionResult struct {
	Modes         modeState      `json:"modes"`
	ConfigOptions []configOption `json:"configOptions"`
}

type modeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []sessionMode `json:"availableModes"`
}

type sessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// configOption is a select option (the only kind served). Options holds
// []selectValue or []selectGroup.
type configOption struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Category     string `json:"category"`
	Type         string `json:"type"`
	CurrentValue string `json:"currentValue"`
	Options      any    `json:"options"`
}

type selectValue struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type selectGroup struct {
	Group   string        `json:"group"`
	Name    string        `json:"name"`
	Options []selectValue `json:"options"`
}

type listSessionsParams struct {
	Cwd    string `json:"cwd"`
	Cursor string `json:"cursor"`
}

type listSessionsResult struct {
	Sessions   []sessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

type sessionIDParams struct {
	SessionID string `json:"sessionId"`
}

// promptParams: the blocks stay sub-slices of the params (jsonlit.Raw):
// json.RawMessage would copy a pasted 50 MiB text once more.
type promptParams struct {
	SessionID string        `json:"sessionId"`
	Prompt    []jsonlit.Raw `json:"prompt"`
	// lifted holds the huge literals the blocks' Lits stand for (decodeParams).
	lifted *jsonlit.Lifted
}

// liftPaths are where a prompt's huge literals sit: block texts, image
// data, embedded resources' texts and blobs.
func (*promptParams) liftPaths() []string {
	return []string{"prompt[].text", "prompt[].data", "prompt[].resource.text", "prompt[].resource.blob"}
}

func (p *promptParams) setLifted(l *jsonlit.Lifted) { p.lifted = l }

type promptResult struct {
	StopReason string     `json:"stopReason"`
	Usage      *turnUsage `json:"usage,omitempty"`
}

// turnUsage is the (unstable) usage of one prompt turn.
type turnUsage struct {
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	CachedReadTokens  int `json:"cachedReadTokens"`
	CachedWriteTokens int `json:"cachedWriteTokens"`
	TotalTokens       int `json:"totalTokens"`
	// Meta carries "ama/permissions": the session's permission decision
	// counters (get_session_stats' permissions) once it decided a call.
	Meta map[string]any `json:"_meta,omitempty"`
}

type cancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

type setConfigParams struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Value     json.RawMessage `json:"value"`
}

type configOptionsResult struct {
	ConfigOptions []configOption `json:"configOptions"`
}

// contentBlock is a prompt or message content block (text, image,
// resource_link, resource; audio is refused).
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
}

// promptBlock is a content block as a prompt brings it: contentBlock's
// members (it accepts what contentBlock does), the text, data and
// resource kept as the request line holds them (jsonlit).
type promptBlock struct {
	Type     string      `json:"type"`
	Text     jsonlit.Lit `json:"text"`
	Data     jsonlit.Lit `json:"data"`
	MimeType string      `json:"mimeType"`
	URI      string      `json:"uri"`
	Name     string      `json:"name"`
	Resource jsonlit.Raw `json:"resource"`
}

// embeddedResource is the resource of a "resource" block: text or blob.
type embeddedResource struct {
	URI      string       `json:"uri"`
	Text     *jsonlit.Lit `json:"text"`
	Blob     *jsonlit.Lit `json:"blob"`
	MimeType string       `json:"mimeType"`
}

// notification is the params of session/update.
type notification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// Session updates. Each has sessionUpdate first.

type contentChunk struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       contentBlock `json:"content"`
}

type toolCallStart struct {
	SessionUpdate string            `json:"sessionUpdate"`
	ToolCallID    string            `json:"toolCallId"`
	Title         string            `json:"title"`
	Kind          string            `json:"kind"`
	Status        string            `json:"status"`
	Locations     []toolLocation    `json:"locations,omitempty"`
	RawInput      json.RawMessage   `json:"rawInput,omitempty"`
	Content       []toolCallContent `json:"content,omitempty"`
	RawOutput     any               `json:"rawOutput,omitempty"`
	// Meta names the codemode call a script's nested call belongs to
	// ({"ama":{"parentToolCallId":…}}).
	Meta map[string]any `json:"_meta,omitempty"`
}

type toolCallUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	ToolCallID    string            `json:"toolCallId"`
	Status        string            `json:"status,omitempty"`
	Content       []toolCallContent `json:"content,omitempty"`
	RawOutput     any               `json:"rawOutput,omitempty"`
}

type toolLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// toolCallContent is one content item of a tool call: either
// {type:"content",content} or {type:"diff",path,oldText,newText}, never a
// mix (clients drop the whole update on a malformed item).
type toolCallContent struct {
	Type    string        `json:"type"`
	Content *contentBlock `json:"content,omitempty"`
	Path    string        `json:"path,omitempty"`
	OldText *string       `json:"-"`
	NewText *string       `json:"newText,omitempty"`
}

// MarshalJSON writes exactly the keys of the item's shape.
func (c toolCallContent) MarshalJSON() ([]byte, error) {
	if c.Type == "diff" {
		newText := ""
		if c.NewText != nil {
			newText = *c.NewText
		}
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
		}{"diff", c.Path, c.OldText, newText})
	}
	return json.Marshal(struct {
		Type    string        `json:"type"`
		Content *contentBlock `json:"content"`
	}{"content", c.Content})
}

// toolRef is the toolCall of session/request_permission.
type toolRef struct {
	ToolCallID string            `json:"toolCallId"`
	Title      string            `json:"title"`
	Kind       string            `json:"kind"`
	Status     string            `json:"status"`
	RawInput   json.RawMessage   `json:"rawInput,omitempty"`
	Content    []toolCallContent `json:"content,omitempty"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int    `json:"used"`
	Size          int    `json:"size"`
	Cost          *cost  `json:"cost,omitempty"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type modeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

type configUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ConfigOptions []configOption `json:"configOptions"`
}

type commandsUpdate struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	AvailableCommands []availableCommand `json:"availableCommands"`
}

type availableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

// commandInput is ACP's unstructured command input: a hint shown while
// the user types the arguments.
type commandInput struct {
	Hint string `json:"hint"`
}

type infoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title,omitempty"`
	UpdatedAt     string `json:"updatedAt"`
}

type permissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  toolRef            `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}

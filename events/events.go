package events

import (
	"encoding/json"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/store"
)

// Event is one session event. The set is closed: every event type of the
// protocol has a struct here, and Type returns its "type" value.
type Event interface {
	Type() string
}

// SessionStart announces the current session (reason startup, resume, new
// or fork).
type SessionStart struct {
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"`
	Cwd         string `json:"cwd"`
	Reason      string `json:"reason"`
}

// SessionChanged reports a new identity or file of the current session.
type SessionChanged struct {
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"`
}

// SessionRewound reports a finished rewind.
type SessionRewound struct {
	EntryID   string        `json:"entryId"`
	Mode      string        `json:"mode"`
	Restored  []string      `json:"restored"`
	Deleted   []string      `json:"deleted"`
	Conflicts []string      `json:"conflicts"`
	Skipped   []SkippedFile `json:"skipped"`
}

// SkippedFile is a file a rewind left alone, with the reason.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// BeforeAgentStart carries the prompt text of a run about to start.
type BeforeAgentStart struct {
	Prompt string `json:"prompt"`
}

// AgentStart begins a run.
type AgentStart struct{}

// TurnStart begins a turn (one model request and its tool calls).
type TurnStart struct{}

// TurnEnd ends a turn.
type TurnEnd struct {
	Message     *llm.AssistantMessage    `json:"message"`
	ToolResults []*llm.ToolResultMessage `json:"toolResults"`
}

// AgentEnd ends the agent loop of a run.
type AgentEnd struct {
	StopReason string `json:"stopReason"`
	WillRetry  bool   `json:"willRetry"`
}

// AgentBeforeSettle precedes AgentSettled.
type AgentBeforeSettle struct{}

// AgentSettled says the run is completely over (retries and follow-ups
// included). Every run ends with exactly one.
type AgentSettled struct {
	Warning string `json:"warning,omitempty"`
}

// MessageStart announces a message (user, assistant, toolResult, custom…).
type MessageStart struct {
	Message llm.Message `json:"message"`
}

// MessageEnd completes a message.
type MessageEnd struct {
	Message llm.Message `json:"message"`
}

// MessageUpdate is one streaming step of an assistant message. In process
// it carries the accumulated Partial message; the wire projection keeps
// only AssistantMessageEvent and Usage.
type MessageUpdate struct {
	Partial               *llm.AssistantMessage `json:"-"`
	AssistantMessageEvent llm.StreamEvent       `json:"assistantMessageEvent"`
	Usage                 *llm.Usage            `json:"usage,omitempty"`
}

// QueueUpdate reports the pending steering and follow-up texts.
type QueueUpdate struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// EntryAppended reports an entry appended to the session (on disk when the
// session has a file).
type EntryAppended struct {
	Entry *store.Entry `json:"entry"`
}

// Notification is a human-readable message for the host.
type Notification struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	// Code is the wire code of Err (the wire layer fills it in from its
	// one table); empty for notifications without one.
	Code string `json:"code,omitempty"`
	// Err is the error the notification reports, if any (not encoded).
	Err error `json:"-"`
	// Source names what the notification is about when that is not the
	// session itself: "mcp" for its MCP servers (ACP forwards those as
	// notices).
	Source string `json:"source,omitempty"`
	// Key and Args name the catalog sentence (internal/i18n) Message was
	// composed from, in English; not encoded. The wire layer renders it
	// in the interface language. Empty: Message is passed as it is.
	Key  string `json:"-"`
	Args []any  `json:"-"`
}

// ToolExecutionStart announces a tool call.
type ToolExecutionStart struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Args             json.RawMessage `json:"args"`
	ParentToolCallID string          `json:"parentToolCallId,omitempty"`
	// MCPServer is the MCP server of an mcp__<server>__<tool> call.
	MCPServer string `json:"mcpServer,omitempty"`
	// ViaCodemode marks a call a codemode script made.
	ViaCodemode bool `json:"viaCodemode,omitempty"`
	// Path is the file a file tool's call names, made absolute by the
	// tools' resolver (tools.Env.Target; "" for none). Not on the rpc wire
	// (ACP's locations).
	Path string `json:"-"`
}

// ToolExecutionUpdate streams a running tool's output (all output so far).
type ToolExecutionUpdate struct {
	ToolCallID       string `json:"toolCallId"`
	ToolName         string `json:"toolName"`
	Partial          string `json:"partial"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	ViaCodemode      bool   `json:"viaCodemode,omitempty"`
}

// ToolResult is the result object of ToolExecutionEnd.
type ToolResult struct {
	Content []llm.Content   `json:"content"`
	IsError bool            `json:"isError"`
	Details json.RawMessage `json:"details,omitempty"`
	// AsText sends Content as one string (the task tool's results, as ama
	// emits them).
	AsText bool `json:"-"`
	// Terminate: the tool asked to end the run after its batch.
	Terminate bool `json:"terminate,omitempty"`
}

// MarshalJSON writes content as blocks, or as one string with AsText.
func (r ToolResult) MarshalJSON() ([]byte, error) {
	type plain ToolResult
	if !r.AsText {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		Content   string          `json:"content"`
		IsError   bool            `json:"isError"`
		Details   json.RawMessage `json:"details,omitempty"`
		Terminate bool            `json:"terminate,omitempty"`
	}{llm.JoinText(r.Content, ""), r.IsError, r.Details, r.Terminate})
}

// ToolExecutionEnd completes a tool call.
type ToolExecutionEnd struct {
	ToolCallID       string     `json:"toolCallId"`
	ToolName         string     `json:"toolName"`
	Result           ToolResult `json:"result"`
	IsError          bool       `json:"isError"`
	ParentToolCallID string     `json:"parentToolCallId,omitempty"`
	ViaCodemode      bool       `json:"viaCodemode,omitempty"`
	AutoDecision     any        `json:"autoDecision,omitempty"`
	Denied           bool       `json:"denied,omitempty"`
	// Dangerous are the stable ids of the dangerous-list categories that
	// refused or asked about the call (approvals.DangerIDs).
	Dangerous []string `json:"dangerous,omitempty"`
	// Denial says who refused a denied call (nil otherwise). It is not on
	// the rpc wire (whose shape is ama's); print mode reports it.
	Denial *Denial `json:"-"`
	// MCPServer is the MCP server of an mcp__<server>__<tool> call.
	MCPServer string `json:"mcpServer,omitempty"`
	// Diff is the change a write or edit made, as the tool computed it
	// (tools.Result.Diff): clients that render diffs never read the file
	// again. Not on the rpc wire (ACP's diff content).
	Diff *FileDiff `json:"-"`
}

// FileDiff is one file's text before and after a change (tools.FileDiff,
// whose fields it repeats: events does not import tools). Path is the
// real absolute path; OldText is nil for a file that did not exist.
type FileDiff struct {
	Path    string
	OldText *string
	NewText string
}

// Denial is why a tool call was refused: the Layer that refused it (a
// permission pipeline step such as deny-rule, dangerous, mode, plan,
// allowlist, safety, classifier; or hook, read-only) and a Code: denied
// (refused outright), unattended (it needed an approval nobody could give),
// not_approved (asked and refused or unanswered), aborted (the run ended).
type Denial struct {
	Layer string `json:"layer"`
	Code  string `json:"code"`
}

// The Denial codes.
const (
	DenialDenied      = "denied"
	DenialUnattended  = "unattended"
	DenialNotApproved = "not_approved"
	DenialAborted     = "aborted"
)

// PermissionRequest asks the host to approve a tool call.
type PermissionRequest struct {
	RequestID string          `json:"requestId"`
	ToolName  string          `json:"toolName"`
	Input     json.RawMessage `json:"input"`
	Reason    string          `json:"reason"`
	// Dangerous are the stable ids of the dangerous-list categories behind
	// a "dangerous" reason (approvals.DangerIDs).
	Dangerous    []string       `json:"dangerous,omitempty"`
	HookReason   string         `json:"hookReason,omitempty"`
	TimeoutMs    int64          `json:"timeoutMs"`
	Preview      any            `json:"preview,omitempty"`
	AutoDecision any            `json:"autoDecision,omitempty"`
	Context      *PermissionCtx `json:"context,omitempty"`
}

// PermissionCtx says where an approval request comes from.
//
// Key order is the wire order of ama: depth and taskId (requests from a
// sub-agent) come before the child's toolCallId.
type PermissionCtx struct {
	Depth      int    `json:"depth,omitempty"`
	TaskID     string `json:"taskId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// ParentToolCallID is the calling call of a nested call (a host
	// tool's ctx.tools.executeTool).
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	// ViaCodemode marks a call a codemode script made.
	ViaCodemode bool `json:"viaCodemode,omitempty"`
	// Origin describes an external agent's own request (agent, its
	// session, the tool call and the options it offered).
	Origin any `json:"origin,omitempty"`
}

// PermissionResolved reports the outcome of a PermissionRequest.
type PermissionResolved struct {
	RequestID string   `json:"requestId"`
	Decision  Approval `json:"decision"`
	// Reason is set only for a durable (deferred) request: "answered",
	// "expired" (its deadline passed: deny) or "superseded" (a new
	// prompt came first: deny).
	Reason string `json:"reason,omitempty"`
}

// PermissionModeChanged reports a new permission mode.
type PermissionModeChanged struct {
	Mode string `json:"mode"`
}

// ModelChanged reports a new model.
type ModelChanged struct {
	Model llm.ModelRef `json:"model"`
}

// ThinkingLevelChanged reports a new thinking level.
type ThinkingLevelChanged struct {
	Level string `json:"level"`
}

// CompactionStart begins a compaction.
type CompactionStart struct {
	Trigger string `json:"trigger"`
}

// CompactionEnd ends a compaction.
type CompactionEnd struct {
	Trigger   string            `json:"trigger"`
	Result    *CompactionResult `json:"result,omitempty"`
	Aborted   bool              `json:"aborted"`
	WillRetry bool              `json:"willRetry"`
	Error     string            `json:"error,omitempty"`
}

// CompactionResult describes a finished compaction: the result of
// compaction_end and the data of the compact response
// (session.CompactionResult is this type).
type CompactionResult struct {
	Summary          string     `json:"summary"`
	FirstKeptEntryID string     `json:"firstKeptEntryId"`
	TokensBefore     int        `json:"tokensBefore"`
	TokensAfter      *int       `json:"tokensAfter,omitempty"`
	Usage            *llm.Usage `json:"usage,omitempty"`
}

// AutoRetryStart announces a retry after a transient failure.
type AutoRetryStart struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEnd reports how a retry sequence ended.
type AutoRetryEnd struct {
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// ContextPressure warns that the context window is filling up.
type ContextPressure struct {
	Percent            float64 `json:"percent"` // one decimal
	Threshold          int     `json:"threshold"`
	RemainingTokens    *int    `json:"remainingTokens,omitempty"`
	EstimatedTurnsLeft *int    `json:"estimatedTurnsLeft,omitempty"`
}

// CacheMiss reports a prompt prefix that should have been cached but was
// billed again (key order as ama's miss detection builds it; its RPC docs
// print missedCost second).
type CacheMiss struct {
	MissedTokens int      `json:"missedTokens"`
	Reason       string   `json:"reason"`
	IdleMs       int64    `json:"idleMs"`
	MissedCost   *float64 `json:"missedCost,omitempty"`
	Detail       string   `json:"detail,omitempty"`
}

// CacheWarm reports cache warming: phase scheduled (nextWarmAt), sent
// (usage, cost) or stopped (reason).
type CacheWarm struct {
	Phase      string     `json:"phase"`
	NextWarmAt int64      `json:"nextWarmAt,omitempty"`
	Usage      *llm.Usage `json:"usage,omitempty"`
	Cost       *float64   `json:"cost,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

// TelemetryTick says the throughput numbers of get_session_stats changed
// while streaming (no payload, at most 2 Hz).
type TelemetryTick struct{}

// PlanProposed announces a plan waiting for approval.
type PlanProposed struct {
	PlanID   string      `json:"planId"`
	Version  int         `json:"version"`
	Markdown string      `json:"markdown"`
	Steps    []plan.Step `json:"steps"`
	FilePath string      `json:"filePath,omitempty"`
}

// PlanResolved reports the decision on a plan.
type PlanResolved struct {
	PlanID   string `json:"planId"`
	Decision string `json:"decision"`
	Mode     string `json:"mode,omitempty"`
	// Reason is "expired" when a durable plan request's deadline passed
	// (the plan is rejected); else omitted.
	Reason string `json:"reason,omitempty"`
}

// TodoUpdated carries the whole todo list after a change.
type TodoUpdated struct {
	Items []plan.TodoItem `json:"items"`
}

// LimitReached reports a turn or cost limit.
type LimitReached struct {
	Kind  LimitKind `json:"kind"`
	Value float64   `json:"value"`
	Limit float64   `json:"limit"`
}

// LimitKind is the limit a LimitReached reports.
type LimitKind string

// The limits a run can reach.
const (
	LimitTurns LimitKind = "turns" // Settings.MaxTurns
	LimitCost  LimitKind = "cost"  // Settings.MaxCost
)

// ModelFallback reports a switch to the fallback model.
type ModelFallback struct {
	From   llm.ModelRef `json:"from"`
	To     llm.ModelRef `json:"to"`
	Reason string       `json:"reason"`
}

// BackgroundJob reports the lifecycle of a background bash job.
type BackgroundJob struct {
	JobID      string `json:"jobId"`
	Phase      string `json:"phase"`
	Command    string `json:"command"`
	PID        int    `json:"pid,omitempty"`
	OutputPath string `json:"outputPath,omitempty"`
	ExitCode   *int   `json:"exitCode,omitempty"`
}

func (SessionStart) Type() string          { return "session_start" }
func (SessionChanged) Type() string        { return "session_changed" }
func (SessionRewound) Type() string        { return "session_rewound" }
func (BeforeAgentStart) Type() string      { return "before_agent_start" }
func (AgentStart) Type() string            { return "agent_start" }
func (TurnStart) Type() string             { return "turn_start" }
func (TurnEnd) Type() string               { return "turn_end" }
func (AgentEnd) Type() string              { return "agent_end" }
func (AgentBeforeSettle) Type() string     { return "agent_before_settle" }
func (AgentSettled) Type() string          { return "agent_settled" }
func (MessageStart) Type() string          { return "message_start" }
func (MessageEnd) Type() string            { return "message_end" }
func (MessageUpdate) Type() string         { return "message_update" }
func (QueueUpdate) Type() string           { return "queue_update" }
func (EntryAppended) Type() string         { return "entry_appended" }
func (Notification) Type() string          { return "notification" }
func (ToolExecutionStart) Type() string    { return "tool_execution_start" }
func (ToolExecutionUpdate) Type() string   { return "tool_execution_update" }
func (ToolExecutionEnd) Type() string      { return "tool_execution_end" }
func (PermissionRequest) Type() string     { return "permission_request" }
func (PermissionResolved) Type() string    { return "permission_resolved" }
func (PermissionDecision) Type() string    { return "permission_decision" }
func (PermissionModeChanged) Type() string { return "permission_mode_changed" }
func (ModelChanged) Type() string          { return "model_changed" }
func (ThinkingLevelChanged) Type() string  { return "thinking_level_changed" }
func (CompactionStart) Type() string       { return "compaction_start" }
func (CompactionEnd) Type() string         { return "compaction_end" }
func (AutoRetryStart) Type() string        { return "auto_retry_start" }
func (AutoRetryEnd) Type() string          { return "auto_retry_end" }
func (ContextPressure) Type() string       { return "context_pressure" }
func (CacheMiss) Type() string             { return "cache_miss" }
func (CacheWarm) Type() string             { return "cache_warm" }
func (TelemetryTick) Type() string         { return "telemetry_tick" }
func (PlanProposed) Type() string          { return "plan_proposed" }
func (PlanResolved) Type() string          { return "plan_resolved" }
func (TodoUpdated) Type() string           { return "todo_updated" }
func (LimitReached) Type() string          { return "limit_reached" }
func (ModelFallback) Type() string         { return "model_fallback" }
func (BackgroundJob) Type() string         { return "background_job" }

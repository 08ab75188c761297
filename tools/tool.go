package tools

import (
	"context"
	"encoding/json"

	"github.com/armadra/ama-rpc/llm"
)

// Permission classes of tools, as the permission pipeline sees them.
const (
	PermRead    = "read"
	PermWrite   = "write"
	PermExecute = "execute"
)

// Tool is one tool the model can call.
type Tool interface {
	// Decl is the declaration sent to the model (name, description, JSON
	// Schema of the arguments).
	Decl() llm.ToolDecl
	// Permission is read, write or execute. Tools with read permission run
	// in parallel with each other; a batch containing any other tool runs in
	// order.
	Permission() string
	// Execute runs the tool. Arguments were already validated against the
	// schema. A failure the model should see is returned as a Result with
	// IsError set; an error return is reserved for aborts (ctx) and bugs and
	// is turned into an error result by the caller.
	Execute(ctx context.Context, call *Call) (*Result, error)
}

// Previewer is implemented by tools that can describe what a call will do
// before it runs (for approval dialogs). Preview must be read-only and
// bounded; it returns nil when no preview can be computed.
type Previewer interface {
	Preview(ctx context.Context, call *Call) *Preview
}

// ArgsPermission is implemented by tools whose permission class depends on
// the arguments; PermissionFor refines Permission for one call (bash: a
// call that only queries a background job is a read). args may be invalid.
type ArgsPermission interface {
	PermissionFor(args json.RawMessage) string
}

// Call is one invocation.
type Call struct {
	ID   string
	Args json.RawMessage
	Env  *Env
	// Update reports streamed output (the whole output so far). May be nil.
	Update func(partial string)
	// Resolved is the interpretation the call was judged on (Resolve); the
	// tool acts on it. nil: the tool resolves the call itself.
	Resolved *Resolved
	// Session is the calling session's services (ama's ToolContext:
	// nested calls, custom entries, sub-agents) for tools that offer them
	// to code outside ama-rpc (host tools). nil outside a session's run.
	Session CallSession
	// MaxChars is the most characters of text the result keeps (0:
	// MaxResultChars). A nested call's result goes to the code that made
	// it (a codemode script, a host tool), not into the model's context,
	// so the session gives those NestedMaxResultChars.
	MaxChars int
}

// Limit is the call's character budget: MaxChars, or MaxResultChars when
// unset. Every cut of a result's text (the tools' own and Execute's) takes
// it from here.
func (c *Call) Limit() int {
	if c == nil || c.MaxChars <= 0 {
		return MaxResultChars
	}
	return c.MaxChars
}

// CallState is the session state a running call sees (CallSession.State).
type CallState struct {
	// Custom is the data of the latest custom entry of each type on the
	// active branch.
	Custom map[string]json.RawMessage
	// ThinkingLevel is the session's current thinking level.
	ThinkingLevel string
	// ActiveTools are the names the model could call in this turn, sorted.
	ActiveTools []string
}

// CallSession is what a running tool may ask of its session. Its methods
// are safe for concurrent use and must not be called from the session's
// actor.
type CallSession interface {
	// ExecuteTool runs another registered, not disabled tool (not only the
	// active ones) through the session's whole pipeline: argument
	// validation, PreToolUse hook, permission and approval, execution,
	// PostToolUse hook, with tool_execution_* events whose
	// parentToolCallId is the calling call. ctx ending aborts it.
	ExecuteTool(ctx context.Context, name string, args json.RawMessage) *Result
	// AppendCustom appends a custom entry (never part of the context).
	AppendCustom(customType string, data json.RawMessage)
	// State returns what the call may read of its session now.
	State() CallState
	// SpawnSubagent runs a sub-agent through the task tool (args are the
	// task tool's arguments) on behalf of the calling call; ok is false
	// when the session has no sub-agents (depth 1, or task off).
	SpawnSubagent(ctx context.Context, args json.RawMessage) (res *Result, ok bool)
}

// Result is what a tool produced.
type Result struct {
	Content []llm.Content
	IsError bool
	// Details is extra structured data for hosts (not sent to the model).
	Details any
	// Structured is the value a codemode script's tools.<name>() resolves
	// to instead of the text (host tools' structured); not sent to the
	// model. nil: the text.
	Structured json.RawMessage `json:",omitempty"`
	// AsText makes hosts receive the content as one string (the task
	// tool's results).
	AsText bool
	// Diff is the change a successful write or edit made, as the tool
	// computed it (events.ToolExecutionEnd carries it to clients that
	// render diffs: ACP); nil when a text is too large or not UTF-8. Not
	// sent to the model.
	Diff *FileDiff `json:"-"`
	// Terminate ends the run after this batch of tool calls, without
	// another model request, when every result of the batch sets it (ama's
	// ToolResult.terminate; host tools set it).
	Terminate bool
}

// ErrorResult returns an error result with one text block.
func ErrorResult(text string) *Result {
	return &Result{Content: []llm.Content{llm.Text(text)}, IsError: true}
}

// TextResult returns a successful result with one text block.
func TextResult(text string) *Result {
	return &Result{Content: []llm.Content{llm.Text(text)}}
}

// Preview describes a pending call for an approval dialog.
type Preview struct {
	Kind     string     `json:"kind"` // bash, write, edit, other
	Lines    []string   `json:"lines"`
	Severity string     `json:"severity"` // info, warn, danger
	Affected []Affected `json:"affected,omitempty"`
	// Diff is the change a write or edit would make, whole texts for
	// clients that render diffs themselves (ACP's permission request);
	// nil when a text is too large or not UTF-8. Not on the rpc wire.
	Diff *FileDiff `json:"-"`
}

// FileDiff is one file's text before and after a change. Path is the
// real absolute path; OldText is nil for a file that does not exist yet.
// events.FileDiff has the same fields (events does not import tools).
type FileDiff struct {
	Path    string
	OldText *string
	NewText string
}

// Affected is a path a call would touch.
type Affected struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Files  *int   `json:"files,omitempty"`
	Bytes  *int64 `json:"bytes,omitempty"`
}

// Env is the session context tools run in. Its fields are set by the
// session; tools must treat them as read-only and the pointed-to helpers are
// safe for concurrent use.
type Env struct {
	// Cwd is the session working directory (the project root).
	Cwd string
	// Home is the home directory "~" stands for ("" = the process's).
	Home string
	// OutputDir is where tools save full outputs that were cut.
	OutputDir string
	// Private are ama's own private places (secrets.PrivateDirs: other
	// sessions, checkpoints); the grep and glob walks skip them like the
	// credential stores of internal/secrets.
	Private []string
	// Reads records files the session has read (write and edit require a
	// prior read of an existing file).
	Reads *ReadTracker
	// Jobs holds background bash jobs; nil disables background:true.
	Jobs *Jobs
	// BeforeChange is called with the absolute path of each file a tool is
	// about to create, modify or delete (checkpoints). May be nil.
	BeforeChange func(path string)
	// Shell is the shell used by bash (default "bash", falling back to sh).
	Shell string
	// ExtraEnv is added to the environment of commands (KEY=VALUE).
	ExtraEnv []string
	// EnvPolicy says which credential variables commands do not see and
	// which are passed through anyway (see CommandEnv).
	EnvPolicy EnvPolicy
	// Todos is the session's task list (the todo tool); may be nil.
	Todos TodoStore
	// Sandbox runs bash commands (foreground and background) in an OS
	// sandbox unless a call says sandbox:false; nil: no sandbox.
	Sandbox CommandSandbox
	// Tasks is the sub-agent registry of a root session (the task and
	// task_ctl tools; opaque here, owned by package agents). Nil in child
	// sessions and when sub-agents are off.
	Tasks any
	// Depth is 0 in a root session and 1 in a sub-agent's session.
	Depth int
}

// PermissionOf is the permission class of one call of t: tools whose class
// depends on the arguments (bash queries of background jobs only read)
// implement ArgsPermission.
func PermissionOf(t Tool, args json.RawMessage) string {
	if ap, ok := t.(ArgsPermission); ok {
		return ap.PermissionFor(args)
	}
	return t.Permission()
}

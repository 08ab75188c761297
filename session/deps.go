package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/classifier"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/internal/secrets"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/sandbox"
	"github.com/armadra/ama-rpc/skills"
	"github.com/armadra/ama-rpc/telemetry"
	"github.com/armadra/ama-rpc/templates"
	"github.com/armadra/ama-rpc/tools"
)

// Deps are the process-wide collaborators shared by every session. They are
// read-only after construction.
type Deps struct {
	Log *zap.Logger
	// Now is the clock (timestamps of messages and entries).
	Now func() time.Time
	// NewEntryID returns a fresh 8-lowercase-hex entry id.
	NewEntryID func() string
	// NewUUID returns a fresh UUID (session ids, plan ids, request ids).
	NewUUID func() string
	// Models is the model catalogue.
	Models *llm.Registry
	// Tools is the tool registry (nil: no tools).
	Tools ToolSet
	// Approver answers permission asks (nil: every ask is denied).
	Approver Approver
	// Policy is the base permission policy (rules from config and flags;
	// its Mode is the initial mode of new sessions).
	Policy *approvals.Policy
	// Dirs locate persistent data.
	Dirs Dirs
	// Settings are behaviour knobs from config and flags.
	Settings Settings
	// Checkpoints stores file checkpoints for rewind (nil: off).
	Checkpoints *checkpoint.Store
	// Skills are the discovered skills (system prompt, get_commands).
	Skills []skills.Skill
	// Templates are the discovered prompt templates (/name args
	// expansion, get_commands).
	Templates []templates.Template
	// Hooks runs the command hooks (nil: none configured).
	Hooks *hooks.Dispatcher
	// Version is the agent version written to headers and hello.
	Version string
	// Sandbox is the OS sandbox of bash (nil or inactive: bash runs bare).
	Sandbox *sandbox.Runtime
	// Host is the loaded host adapter (nil: none).
	Host Host
	// Reporting is the cache reporting table of the process (nil:
	// telemetry.Process).
	Reporting *telemetry.Reporting
	// Clock is the wall clock of throughput telemetry, read on streamed
	// deltas (sampled while they come faster than one per millisecond;
	// nil: time.Now).
	Clock func() time.Time
	// AfterFunc arms the cache-warming timer (nil: time.AfterFunc); it
	// returns the timer's stop function.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// WarmingDecider is the host's veto on cache warms
	// (cache.onWarmingDecision; nil: the built-in decision).
	WarmingDecider telemetry.WarmingDecider
	// MCP, when set, opens the MCP servers of each root session: the
	// configured ones and extra (Options.MCPServers, as the client sent
	// them). Nothing starts before the session's first model request.
	MCP func(cwd string, extra []json.RawMessage) MCP
	// Tasks, when set, creates the sub-agent registry of each root session
	// (tools.Env.Tasks). It is called once per session, before the actor
	// starts, and must not call into the session.
	Tasks func(s *Session) Tasks
	// Decisions is the permission decision log (permission.logPath; nil:
	// none). Every session of the process appends to it.
	Decisions *permlog.Log
}

// Host is a host adapter as sessions see it (package host). Its methods are
// safe for concurrent use.
type Host interface {
	// Observe sees every event of every session, under the session's bus
	// lock: it must not block.
	Observe(s *Session, e events.Event)
	// Approve is the first answerer of a permission ask; ok false passes
	// the ask on to the session's approver.
	Approve(ctx context.Context, req *events.PermissionRequest) (decision events.Approval, ok bool)
	// Instructions is the text of the system prompt's host section ("":
	// none).
	Instructions() string
	// SessionShutdown delivers session_shutdown at exit and waits for its
	// handlers (bounded by ctx); Dispose then ends the adapter. Only
	// Manager.Exit calls them, around the SessionEnd hooks.
	SessionShutdown(ctx context.Context)
	Dispose(ctx context.Context)
}

// Dirs are the directories a session uses.
type Dirs struct {
	// Data is the data directory (~/.local/share/ama).
	Data string
	// Sessions is the base directory of session files (<Data>/sessions).
	Sessions string
	// Config is the user config directory (~/.config/ama).
	Config string
	// Home is the user's home directory.
	Home string
}

// private are ama's own private places (other projects' sessions and
// checkpoints, the API key): the rule tier and the file tools' walks treat
// them like credential stores.
func (d *Deps) private() []string { return secrets.PrivateDirs(d.Dirs.Data, d.Dirs.Sessions) }

// Settings are behaviour knobs.
type Settings struct {
	// PermissionGate is the gate mode of the permission pipeline: "off",
	// "shadow" or "enforce" (default). See decision.go.
	PermissionGate string
	// Candidate is the candidate policy the gate tries (nil: none): under
	// "shadow" its verdict is only recorded, under "enforce" it decides.
	Candidate *approvals.Policy
	// ClassifierPolicy is the two-stage classifier's lists (nil: the
	// defaults); ClassifierFastTokens / ClassifierDetailedTokens cap its
	// stages (0: defaults); ClassifierReasoning is its thinking level
	// ("": off).
	ClassifierPolicy                               *classifier.Policy
	ClassifierFastTokens, ClassifierDetailedTokens int
	ClassifierReasoning                            string
	// InspectTool offers the read-only permission_inspect tool to the
	// model (config permission.inspectTool).
	InspectTool bool
	// MaxRejections is the rejection count of one action after which the
	// model is told to stop retrying it (default 3).
	MaxRejections int
	// Persist writes session files; false keeps sessions in memory.
	Persist bool
	// ApprovalTimeout bounds each permission ask (default 10 minutes).
	ApprovalTimeout time.Duration
	// ApprovalDeferTTL is how long a deferred (durable) approval request
	// stays open before it expires as deny (default 24 hours).
	ApprovalDeferTTL time.Duration
	// MaxRetries bounds automatic retries of transient model failures.
	MaxRetries int
	// RetryBaseDelay is the first retry delay (doubled per attempt).
	RetryBaseDelay time.Duration
	// Sleep waits d or until ctx ends (injected for tests).
	Sleep func(ctx context.Context, d time.Duration) error
	// PlanUnattended is what happens to a plan nobody can answer: "stop"
	// (default) or "approve".
	PlanUnattended string
	// PlanDirectory receives plan files when it is inside the project.
	PlanDirectory string
	// CompactionPercent of the context window triggers automatic
	// compaction (default 80).
	CompactionPercent int
	// KeepRecentTokens is about how much recent context a compaction keeps
	// (default 20000).
	KeepRecentTokens int
	// MaxTurns and MaxCost (USD) end a run when reached (0: no limit).
	MaxTurns int
	MaxCost  float64
	// NoAutoRetry and NoAutoCompaction start sessions with those off.
	NoAutoRetry, NoAutoCompaction bool
	// FallbackModel gets one attempt when retries are exhausted (zero:
	// none).
	FallbackModel llm.ModelRef
	// ClassifierModel is permission.autoModel (zero: the session model).
	ClassifierModel llm.ModelRef
	// ClassifierMode is "single" (default) or "two-stage".
	ClassifierMode string
	// ClassifierTimeout bounds one classification (default 10 s).
	ClassifierTimeout time.Duration
	// ClassifierUserTokens and ClassifierToolTokens are the transcript
	// budgets of the two-stage classifier (0: its defaults).
	ClassifierUserTokens, ClassifierToolTokens int
	// ToolEnv filters the environment of the commands tools run (the
	// model's credentials are removed).
	ToolEnv tools.EnvPolicy
	// WriteFault, when set, is asked before each session-file write; an
	// error fails that write as a full or broken disk would (tests inject
	// disk errors with it).
	WriteFault func() error
	// ReplyLanguage is config ui.replyLanguage (blank: unset): the rule
	// "Reply to the user in <it>." is the last line of the system prompt's
	// rules section of a root session (replyLanguageRule).
	ReplyLanguage string
	// Instructions are extra instruction files (profile instructions),
	// rendered into the project context after AGENTS.md as <file> blocks.
	Instructions []string
	// NoAnimation is ui.animation:false: no telemetry_tick events.
	NoAnimation bool
	// CacheWarming is cache.warming (off, streaming (default), idle);
	// CacheRetention is cache.retention (none, short (default), long);
	// CacheMinSavingsUsd is cache.minSavingsUsd (default 0.05).
	CacheWarming, CacheRetention string
	CacheMinSavingsUsd           float64
}

// ToolSet is the registry of tools a session can offer.
type ToolSet interface {
	// Tools returns every registered tool in registry order.
	Tools() []tools.Tool
	// Validate checks args against the tool's JSON Schema; the error text
	// lists the problems.
	Validate(name string, args json.RawMessage) error
}

// Approver answers permission asks. Ask blocks until the host decides, ctx
// ends (abort or timeout) or nobody can answer; it returns one of the
// events.Approval answers. An ended ctx must yield events.ApprovalDeny.
type Approver interface {
	Ask(ctx context.Context, req *events.PermissionRequest) events.Approval
}

// Options select the initial settings of a new session.
type Options struct {
	Cwd            string
	Model          llm.ModelRef
	ThinkingLevel  string
	PermissionMode string
	// SessionID forces the id of a new session (default: a fresh UUID).
	SessionID string
	// ActiveTools are the tools offered to the model (nil: every tool of
	// the registry).
	ActiveTools []string
	// ForceModel makes Model win over the model restored by Open.
	ForceModel bool
	// EagerFile creates the session file at Start (header and the startup
	// entries) instead of lazily at the first run: a session announced to
	// a client that may reopen it from another process (ACP session/new).
	EagerFile bool
	// Approver answers this session's permission asks (nil: Deps.Approver).
	Approver Approver
	// Parent makes the session a sub-agent's child session (depth 1).
	Parent *ParentLink
	// MaxTurns and MaxCost override Settings.MaxTurns/MaxCost for this
	// session (0: the settings' values).
	MaxTurns int
	MaxCost  float64
	// Role is the role section of a sub-agent's system prompt.
	Role string
	// ReadOnly turns every ask into a deny without asking (read-only
	// sub-agent types): no approval is ever shown.
	ReadOnly bool
	// MCPServers are MCP servers this session adds to the configured ones
	// (ACP's mcpServers as the client sent them; Deps.MCP reads them).
	MCPServers []json.RawMessage
	// Unavailable tools stay in the tool table but are refused when called
	// (a fork child keeps the parent's table for an identical prefix).
	Unavailable []string
}

// ParentLink ties a child session to the task that runs it.
type ParentLink struct {
	// ParentFile is the parent's session file (header parentSession).
	ParentFile string
	// TaskData is the data of the first entry, custom{ama.task}.
	TaskData any
	// Mode is the parent's permission mode now (nil: no bound). The
	// child's tool calls are judged with the stricter of its own mode and
	// this one, read again for every batch of calls, so a mode change of
	// the parent reaches a running or continued child at its next call.
	Mode func() approvals.Mode
	// TaskID is the task the child runs (decision records).
	TaskID string
}

// withDefaults fills unset dependencies.
func (d *Deps) withDefaults() *Deps {
	c := *d
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewEntryID == nil {
		c.NewEntryID = RandomEntryID
	}
	if c.NewUUID == nil {
		c.NewUUID = uuid.NewString
	}
	if c.Policy == nil {
		c.Policy = &approvals.Policy{Mode: approvals.ModeDefault, PlanBash: approvals.PlanBashReadonly}
	}
	if c.Models == nil {
		c.Models = llm.NewRegistry()
	}
	if c.Settings.ApprovalTimeout <= 0 {
		c.Settings.ApprovalTimeout = 10 * time.Minute
	}
	if c.Settings.ApprovalDeferTTL <= 0 {
		c.Settings.ApprovalDeferTTL = 24 * time.Hour
	}
	if c.Settings.MaxRetries == 0 {
		c.Settings.MaxRetries = 3
	}
	if c.Settings.RetryBaseDelay <= 0 {
		c.Settings.RetryBaseDelay = 2 * time.Second
	}
	if c.Settings.Sleep == nil {
		c.Settings.Sleep = llm.Sleep
	}
	return &c
}

// sessionID returns want, or a fresh id when want is empty.
func (d *Deps) sessionID(want string) string {
	if want == "" {
		return d.NewUUID()
	}
	return want
}

// RandomEntryID returns 8 random lowercase hex characters.
func RandomEntryID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

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
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/skills"
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
	// Hooks runs the command hooks (nil: none configured).
	Hooks *hooks.Dispatcher
	// Version is the agent version written to headers and hello.
	Version string
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

// Settings are behaviour knobs.
type Settings struct {
	// Persist writes session files; false keeps sessions in memory.
	Persist bool
	// ApprovalTimeout bounds each permission ask (default 10 minutes).
	ApprovalTimeout time.Duration
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
	// WriteFault, when set, is asked before each session-file write; an
	// error fails that write as a full or broken disk would (tests inject
	// disk errors with it).
	WriteFault func() error
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
// ends (abort or timeout) or nobody can answer; it returns "allow", "deny"
// or "allow_session". An ended ctx must yield "deny".
type Approver interface {
	Ask(ctx context.Context, req *events.PermissionRequest) string
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
	// Approver answers this session's permission asks (nil: Deps.Approver).
	Approver Approver
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

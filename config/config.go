package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// ErrInvalid wraps every configuration error (CLI exit code 3).
var ErrInvalid = errors.New("invalid configuration")

// Config is the content of a config file. Absent fields keep defaults.
type Config struct {
	Model         string                     `json:"model,omitempty"`
	ThinkingLevel string                     `json:"thinkingLevel,omitempty"`
	FallbackModel string                     `json:"fallbackModel,omitempty"`
	SessionDir    string                     `json:"sessionDir,omitempty"`
	Permission    Permission                 `json:"permission"`
	Plan          Plan                       `json:"plan"`
	Retry         Retry                      `json:"retry"`
	Compaction    Compaction                 `json:"compaction"`
	Checkpoints   Checkpoints                `json:"checkpoints"`
	Approvals     Approvals                  `json:"approvals"`
	Limits        Limits                     `json:"limits"`
	Tools         Tools                      `json:"tools"`
	Codemode      Codemode                   `json:"codemode"`
	Sandbox       Sandbox                    `json:"sandbox"`
	Host          Host                       `json:"host"`
	Subagents     Subagents                  `json:"subagents"`
	Agents        Agents                     `json:"agents"`
	Hooks         Hooks                      `json:"hooks"`
	Providers     map[string]json.RawMessage `json:"providers,omitempty"`
	UI            UI                         `json:"ui"`
	Cache         Cache                      `json:"cache"`
	ModelStream   ModelStream                `json:"modelStream"`
	Replay        Replay                     `json:"replay"`
	// ModelOverrides amend catalog models (e.g. declare a prompt-cache
	// TTL, which enables cache warming).
	ModelOverrides []ModelOverride `json:"modelOverrides,omitempty"`
	// McpServers are MCP servers (package mcpclient reads them: an object
	// from name to server, or an array in ACP's shape). The project's
	// count only when the project is trusted.
	McpServers json.RawMessage `json:"mcpServers,omitempty"`
}

// Hooks configures command hooks (the hooks themselves live in hooks.json).
type Hooks struct {
	// TimeoutMs is the default per-hook timeout (default 60000).
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// Permission configures the permission pipeline.
type Permission struct {
	Mode               string   `json:"mode,omitempty"`
	Allow              []string `json:"allow,omitempty"`
	Deny               []string `json:"deny,omitempty"`
	Ask                []string `json:"ask,omitempty"`
	AutoSafeCommands   []string `json:"autoSafeCommands,omitempty"`
	DisableBuiltinDeny []string `json:"disableBuiltinDeny,omitempty"`
	// AutoModel is the classifier model of auto mode (provider/id).
	AutoModel string `json:"autoModel,omitempty"`
	// Classifier is "single" (default) or "two-stage".
	Classifier string `json:"classifier,omitempty"`
	// ClassifierTimeoutMs bounds one classifier request (default 10000).
	ClassifierTimeoutMs int `json:"classifierTimeoutMs,omitempty"`
	// MaxUserTranscriptTokens and MaxToolTranscriptTokens bound the user
	// messages and tool-call inputs the two-stage classifier sees (default
	// 4000 each, at least 32).
	MaxUserTranscriptTokens int `json:"maxUserTranscriptTokens,omitempty"`
	MaxToolTranscriptTokens int `json:"maxToolTranscriptTokens,omitempty"`
	// LogPath is the permission decision log (JSONL, absolute; user
	// config only; unset: no log).
	LogPath string `json:"logPath,omitempty"`
	// Gate is "off", "shadow" or "enforce" (default): how Candidate is
	// used. A project may only tighten shadow to enforce.
	Gate string `json:"gate,omitempty"`
	// MaxRejections is how often one action may be refused in a session
	// before the model is told to stop retrying it (default 3).
	MaxRejections int `json:"maxRejections,omitempty"`
	// InspectTool offers the read-only permission_inspect tool to the
	// model (user config only).
	InspectTool bool `json:"inspectTool,omitempty"`
	// ClassifyReadOnlyTools sends auto mode's read-class calls to the
	// classifier instead of its static allow (any layer may set it: it
	// only tightens).
	ClassifyReadOnlyTools bool `json:"classifyReadOnlyTools,omitempty"`
	// ClassifierLists edit the two-stage classifier's policy lists (user
	// config only; "$defaults" stands for the built-in entries).
	ClassifierLists *ClassifierLists `json:"classifierLists,omitempty"`
	// ClassifierReasoningLevel is the thinking level of classifier
	// requests: off (default), minimal, low, medium, high, xhigh.
	ClassifierReasoningLevel string `json:"classifierReasoningLevel,omitempty"`
	// FastClassifierMaxTokens and DetailedClassifierMaxTokens cap the two
	// stages' replies (default 512 and 1200, at least 16 and 64).
	FastClassifierMaxTokens     int `json:"fastClassifierMaxTokens,omitempty"`
	DetailedClassifierMaxTokens int `json:"detailedClassifierMaxTokens,omitempty"`
	// Candidate is a policy to try (user config only): under gate
	// "shadow" its verdicts are only recorded, under "enforce" it decides.
	Candidate *Candidate `json:"candidate,omitempty"`
}

// ClassifierLists are the two-stage classifier's policy lists (seed 003).
// A missing list keeps the defaults; a present one replaces them, with
// "$defaults" expanding to them where it stands.
type ClassifierLists struct {
	Environment []string `json:"environment,omitempty"`
	Allow       []string `json:"allow,omitempty"`
	SoftDeny    []string `json:"soft_deny,omitempty"`
	HardDeny    []string `json:"hard_deny,omitempty"`
}

// Limits of the permission section (seed 004): its size and the entries
// of each list. Larger ones are configuration errors (exit 3).
const (
	MaxPermissionBytes = 64 << 10
	MaxListEntries     = 256
)

// checkPermission enforces the permission section's limits.
func checkPermission(name string, p *Permission) error {
	if b, err := json.Marshal(p); err == nil && len(b) > MaxPermissionBytes {
		return fmt.Errorf("%w: %s: the permission section has %d bytes, at most %d", ErrInvalid, name, len(b), MaxPermissionBytes)
	}
	lists := map[string][]string{"allow": p.Allow, "deny": p.Deny, "ask": p.Ask, "autoSafeCommands": p.AutoSafeCommands,
		"disableBuiltinDeny": p.DisableBuiltinDeny}
	if l := p.ClassifierLists; l != nil {
		lists["classifierLists.environment"], lists["classifierLists.allow"] = l.Environment, l.Allow
		lists["classifierLists.soft_deny"], lists["classifierLists.hard_deny"] = l.SoftDeny, l.HardDeny
	}
	if c := p.Candidate; c != nil {
		lists["candidate.allow"], lists["candidate.deny"], lists["candidate.ask"] = c.Allow, c.Deny, c.Ask
	}
	for k, l := range lists {
		if len(l) > MaxListEntries {
			return fmt.Errorf("%w: %s: permission.%s has %d entries, at most %d", ErrInvalid, name, k, len(l), MaxListEntries)
		}
	}
	return nil
}

// Candidate is the permission policy the gate tries: the effective policy
// with Deny and Ask added, Allow replacing the allow rules when present,
// and Mode applied when it is stricter than the session's mode.
type Candidate struct {
	Mode  string   `json:"mode,omitempty"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Ask   []string `json:"ask,omitempty"`
}

// Plan configures plan mode.
type Plan struct {
	// Unattended is what happens to a proposed plan nobody can answer:
	// "stop" (default) or "approve".
	Unattended string `json:"unattended,omitempty"`
	// Bash is readonly (default), ask or deny.
	Bash string `json:"bash,omitempty"`
	// Directory receives plan files when inside the project.
	Directory string `json:"directory,omitempty"`
}

// Retry configures automatic retries of transient model failures.
type Retry struct {
	Enabled     *bool `json:"enabled,omitempty"`
	MaxAttempts int   `json:"maxAttempts,omitempty"`
	BaseDelayMs int   `json:"baseDelayMs,omitempty"`
}

// Replay bounds the ring of each numbered session stream (issue 35,
// capability event_seq / ACP _meta "ama/seq"): the last RingLines lines,
// at most RingBytes bytes (zero: 4096 lines, 8 MiB).
type Replay struct {
	RingLines int `json:"ringLines,omitempty"`
	RingBytes int `json:"ringBytes,omitempty"`
}

// Compaction configures context compaction.
type Compaction struct {
	Enabled *bool `json:"enabled,omitempty"`
	// ThresholdPercent of the context window triggers compaction.
	ThresholdPercent int `json:"thresholdPercent,omitempty"`
	// KeepRecentTokens is roughly how much recent context survives.
	KeepRecentTokens int `json:"keepRecentTokens,omitempty"`
}

// Checkpoints configures file checkpoints for rewind.
type Checkpoints struct {
	Enabled      *bool `json:"enabled,omitempty"`
	MaxFileBytes int64 `json:"maxFileBytes,omitempty"`
}

// Limits end a run early: after Turns turns or once its replies cost
// Cost USD (0: no limit). MaxTurns and MaxCostUsd are ama's names for the
// same limits; they win when both are set.
type Limits struct {
	Turns      int     `json:"turns,omitempty"`
	Cost       float64 `json:"cost,omitempty"`
	MaxTurns   int     `json:"maxTurns,omitempty"`
	MaxCostUsd float64 `json:"maxCostUsd,omitempty"`
}

// TurnLimit is the turn limit (0: none).
func (l Limits) TurnLimit() int {
	if l.MaxTurns > 0 {
		return l.MaxTurns
	}
	return l.Turns
}

// CostLimit is the cost limit in USD (0: none).
func (l Limits) CostLimit() float64 {
	if l.MaxCostUsd > 0 {
		return l.MaxCostUsd
	}
	return l.Cost
}

// Tools configures the built-in tools.
type Tools struct {
	Env ToolsEnv `json:"env"`
	// Default adjusts the default active tools as ama's tools.default:
	// "+name" adds a tool, "-name" removes one, plain names replace the
	// default list (host tools included). Read from the user config and a
	// profile's config, not from the project's.
	Default []string `json:"default,omitempty"`
	// Preset is the tool preset: default, minimal, codemode-only (old
	// name codemode) or coordinator.
	Preset string `json:"preset,omitempty"`
	// MaxToolResultChars caps the codemode result's output (0: 30000).
	MaxToolResultChars int `json:"maxToolResultChars,omitempty"`
}

// Codemode configures the codemode tool (README "Codemode"). A project
// may only set Mode to "off".
type Codemode struct {
	// Mode is off, on or only ("": the preset's).
	Mode string `json:"mode,omitempty"`
	// InlineBudget bounds the declarations inlined in `only` mode
	// (estimated tokens, default 3000).
	InlineBudget int `json:"inlineBudget,omitempty"`
	// RequireStrict leaves the tool out when scripts are not isolated.
	RequireStrict bool `json:"requireStrict,omitempty"`
	// MaxHeapMb caps a script's heap (default 256; a negative value: no cap).
	MaxHeapMb int `json:"maxHeapMb,omitempty"`
	// MaxToolCalls bounds the tool calls of one script (default 1000).
	MaxToolCalls int `json:"maxToolCalls,omitempty"`
}

// ToolsEnv configures the environment of the commands the bash tool runs.
// The model's credentials (provider key variables, AMA_API_KEY_*, apiKeyEnv
// names, *_BASE_URL values with user info or a query) are removed from it;
// Passthrough names variables that are kept anyway. Read from the user
// config only: a project cannot hand the key to the commands it runs.
type ToolsEnv struct {
	Passthrough []string `json:"passthrough,omitempty"`
}

// Sandbox configures the OS sandbox of bash (see package sandbox). Only the
// user config may enable or loosen it; the project config may only set
// network to "deny".
type Sandbox struct {
	// Enabled is "auto" (default) or "off".
	Enabled string `json:"enabled,omitempty"`
	// Bash is "auto" (run bash in the sandbox) or "off" (default).
	Bash string `json:"bash,omitempty"`
	// Network is "deny" (default) or "allow".
	Network string `json:"network,omitempty"`
	// Writable adds writable paths (absolute, ~ or ~/…).
	Writable []string `json:"writable,omitempty"`
}

// Host configures host adapters (--host).
type Host struct {
	// Node is the JavaScript runtime of the bridge (AMA_NODE wins; default
	// node on PATH).
	Node string `json:"node,omitempty"`
}

// UI configures presentation hints for hosts.
type UI struct {
	// Animation false turns the telemetry_tick events off.
	Animation *bool `json:"animation,omitempty"`
	// Language is the interface language of human-readable text: auto
	// (= unset), zh or en (app resolves it with internal/i18n).
	Language string `json:"language,omitempty"`
	// ReplyLanguage asks the model to reply in a language ("Chinese"):
	// one English rule at the end of the system prompt's rules section.
	// Separate from Language, which never changes what the model gets.
	ReplyLanguage string `json:"replyLanguage,omitempty"`
}

// Cache configures prompt-cache accounting and warming.
type Cache struct {
	Warming       string  `json:"warming,omitempty"`   // off, streaming (default), idle
	Retention     string  `json:"retention,omitempty"` // none, short (default), long
	MinSavingsUsd float64 `json:"minSavingsUsd,omitempty"`
	MissNotices   *bool   `json:"missNotices,omitempty"` // UI only; accepted for compatibility
}

// ModelOverride amends one catalog model.
type ModelOverride struct {
	Provider    string       `json:"provider"`
	ID          string       `json:"id"`
	PromptCache *PromptCache `json:"promptCache,omitempty"`
}

// PromptCache declares TTLs in seconds for the short and long retention
// and the smallest cacheable prompt.
type PromptCache struct {
	Short     int `json:"short,omitempty"`
	Long      int `json:"long,omitempty"`
	MinTokens int `json:"minTokens,omitempty"`
}

// Subagents configures the task tool's pool and background default
// (agents.md §10).
type Subagents struct {
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// DefaultModel is the model of sub-agents whose call, definition and
	// agents.<type>.model name none ("": the parent's).
	DefaultModel string `json:"defaultModel,omitempty"`
	MaxPending   int    `json:"maxPending,omitempty"`
	// Background is auto (default), always or never.
	Background string `json:"background,omitempty"`
	// AutoBackgroundAfterMs moves a foreground task to the background
	// after this long (0: never).
	AutoBackgroundAfterMs int64 `json:"autoBackgroundAfterMs,omitempty"`
	// ForkMaxContextRatio bounds a context:"fork" child: the parent's last
	// prompt may use at most this share of (window - reserve) (0.05-0.95,
	// default 0.5; other values: the default).
	ForkMaxContextRatio float64 `json:"forkMaxContextRatio,omitempty"`
}

// Agents configures where agent definitions are read from and the
// external agents (agents.md §8.2, §10): the other keys of the object are
// agent ids (agents.<id>.maxMode …).
type Agents struct {
	Dirs []string `json:"dirs,omitempty"`
	// SessionBudgetUsd bounds what external agents may cost per session
	// (0: no bound).
	SessionBudgetUsd float64 `json:"sessionBudgetUsd,omitempty"`
	// MaxConcurrent bounds the external agents running at once (0: 3).
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// ByID are the settings of one agent (agents.<id>).
	ByID map[string]AgentSettings `json:"-"`
}

// AgentSettings are agents.<id>.
type AgentSettings struct {
	// Model is the model the agent runs on unless the call names one.
	Model string `json:"model,omitempty"`
	// MaxMode caps the mode an external agent runs in.
	MaxMode string `json:"maxMode,omitempty"`
	// Env.Passthrough are variables kept in the external agent's
	// environment although ama strips them by default.
	Env struct {
		Passthrough []string `json:"passthrough,omitempty"`
	} `json:"env,omitempty"`
	// MaxConcurrent bounds this agent's processes running at once (0:
	// only the total; claude: 2).
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
}

// UnmarshalJSON reads dirs, sessionBudgetUsd and maxConcurrent, and every other key as
// one agent's settings (unknown keys inside them are errors).
func (a *Agents) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	strict := func(b []byte, v any) error {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	for k, v := range raw {
		var err error
		switch k {
		case "dirs":
			err = json.Unmarshal(v, &a.Dirs)
		case "sessionBudgetUsd":
			err = json.Unmarshal(v, &a.SessionBudgetUsd)
		case "maxConcurrent":
			err = json.Unmarshal(v, &a.MaxConcurrent)
		default:
			var s AgentSettings
			if err = strict(v, &s); err == nil {
				if a.ByID == nil {
					a.ByID = map[string]AgentSettings{}
				}
				a.ByID[k] = s
			}
		}
		if err != nil {
			return fmt.Errorf("agents.%s: %w", k, err)
		}
	}
	return nil
}

// ModelStream bounds the model's reply stream (OpenAI-compatible
// providers); 0 keeps a default.
type ModelStream struct {
	// IdleTimeoutMs ends an attempt whose endpoint sent nothing for this
	// long (a retryable network error). Default 300000.
	IdleTimeoutMs int64 `json:"idleTimeoutMs,omitempty"`
	// MaxLineBytes bounds one line of the event stream; MaxReplyBytes the
	// reply's content. Over either, the reply fails and is not retried.
	// Default 16 MiB each.
	MaxLineBytes  int `json:"maxLineBytes,omitempty"`
	MaxReplyBytes int `json:"maxReplyBytes,omitempty"`
}

// Approvals configures permission asks.
type Approvals struct {
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// DeferTtlMs is how long a deferred (durable) request stays open
	// before it expires as deny (default 86400000: a day).
	DeferTtlMs int64 `json:"deferTtlMs,omitempty"`
}

// Load reads a config file. A missing file is an empty config.
func Load(path string) (*Config, error) {
	data, err := ownfs.ReadUser(path, ownfs.MaxConfig)
	return parseLoaded(path, data, err)
}

// LoadIn reads a config file that must stay inside root (the project's
// .ama/config.json: the project is untrusted, see ownfs.ReadIn). A
// missing file is an empty config.
func LoadIn(root, path string) (*Config, error) {
	data, err := ownfs.ReadIn(root, path, ownfs.MaxConfig)
	return parseLoaded(path, data, err)
}

func parseLoaded(path string, data []byte, err error) (*Config, error) {
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	return Parse(path, data)
}

// Parse decodes config text (JSON with comments and trailing commas);
// unknown keys are errors so typos do not pass silently.
func Parse(name string, data []byte) (*Config, error) {
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	if err := checkPermission(name, &c.Permission); err != nil {
		return nil, err
	}
	switch c.UI.Language {
	case "", "auto", "zh", "en":
	default:
		return nil, fmt.Errorf("%w: %s: ui.language must be auto, zh or en, not %q", ErrInvalid, name, c.UI.Language)
	}
	return &c, nil
}

// Paths are ama's directories.
type Paths struct {
	Home   string
	Config string // user config directory
	Data   string // data directory
}

// ResolvePaths finds the directories from the environment: AMA_CONFIG_DIR,
// else $XDG_CONFIG_HOME/ama, else ~/.config/ama; AMA_DATA_DIR, else
// $XDG_DATA_HOME/ama, else ~/.local/share/ama.
func ResolvePaths(getenv func(string) string) (Paths, error) {
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Paths{}, fmt.Errorf("%w: HOME is not set", ErrInvalid)
		}
		home = h
	}
	pick := func(explicit, xdgVar, fallback string) string {
		if v := getenv(explicit); v != "" {
			return v
		}
		if v := getenv(xdgVar); v != "" {
			return filepath.Join(v, "ama")
		}
		return filepath.Join(home, fallback)
	}
	return Paths{
		Home:   home,
		Config: pick("AMA_CONFIG_DIR", "XDG_CONFIG_HOME", filepath.Join(".config", "ama")),
		Data:   pick("AMA_DATA_DIR", "XDG_DATA_HOME", filepath.Join(".local", "share", "ama")),
	}, nil
}

// UserFile is the user config file.
func (p Paths) UserFile() string { return filepath.Join(p.Config, "config.json") }

// ProjectFile is the project config file of cwd.
func ProjectFile(cwd string) string { return filepath.Join(cwd, ".ama", "config.json") }

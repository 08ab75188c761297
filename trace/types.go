package trace

import (
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/store"
)

// Version is the trace format version.
const Version = 1

// Node statuses.
const (
	StatusOK      = "ok"
	StatusError   = "error"
	StatusAborted = "aborted"
	StatusRunning = "running"
)

// Aux purposes besides the kinds of usage entries (cache_warm,
// permission_classify).
const (
	PurposeCompaction    = "compaction"
	PurposeBranchSummary = "branch_summary"
)

// Input is the snapshot of a session that Build reads.
type Input struct {
	SessionID   string
	Cwd         string
	SessionFile string // "" while the session has no file
	// Entries are the selected entries: the active branch (root → leaf,
	// store.Tree.Branch: each entry's parent is the one before it) for
	// branch=leaf, every entry in file order for branch=all.
	Entries []*store.Entry
	// Leaf is the session's current leaf (nil: empty branch).
	Leaf *string
	// Running reports an active run: the turn holding the leaf is then
	// running and the trace is partial.
	Running bool
}

// Node kinds, the "kind" key of each node on the wire.
const (
	KindTurn = "turn"
	KindStep = "step"
	KindTool = "tool"
	KindAux  = "aux"
)

// The types below are the wire shape of get_trace (JSON tags, key order
// as in the reference transcript): the protocol encodes them as they are.

// Result is the data of a get_trace response.
type Result struct {
	Trace         Trace   `json:"trace"`
	HasMoreBefore bool    `json:"hasMoreBefore"`
	Cursor        Cursor  `json:"cursor"`
	LeafID        *string `json:"leafId"`
	// Task is set by the caller for get_trace{taskId} of an external
	// task (the turn skeleton of agents.md §6.6; nil otherwise). Build
	// never sets it.
	Task any `json:"task,omitempty"`
	// Previews is set (possibly empty) for content=preview, in tree order
	// of the window: each turn, then each of its steps followed by the
	// step's tools.
	Previews Previews `json:"previews,omitzero"`
}

// Cursor holds the paging cursors of a response.
type Cursor struct {
	// Before is the id of the window's first turn when earlier turns
	// exist ("" otherwise).
	Before string `json:"before,omitempty"`
	// Since is the id of the last selected entry (nil when there is none).
	Since *string `json:"since"`
}

// Trace is the tree of a session: the window of turns, and the totals and
// auxiliary requests of the whole selection.
type Trace struct {
	Version     int     `json:"version"`
	SessionID   string  `json:"sessionId"`
	Cwd         string  `json:"cwd"`
	Totals      Usage   `json:"totals"`
	Turns       []*Turn `json:"turns"`
	Aux         []*Aux  `json:"aux"`
	Partial     bool    `json:"partial"`
	SessionFile string  `json:"sessionFile,omitempty"`
}

// Usage is the aggregate of a turn or of the whole selection.
type Usage struct {
	Requests   int     `json:"requests"`
	Input      int     `json:"input"`
	Output     int     `json:"output"`
	CacheRead  int     `json:"cacheRead"`
	CacheWrite int     `json:"cacheWrite"`
	ToolCalls  int     `json:"toolCalls"`
	Cost       float64 `json:"cost"`
	// DurationMs is a turn's wall time (its user message to its last
	// reply or tool result); for totals, the sum over the turns.
	DurationMs    int64   `json:"durationMs"`
	CacheHitRatio float64 `json:"cacheHitRatio"`
}

// addRequest counts one model request and its usage.
func (u *Usage) addRequest(x llm.Usage) {
	u.Requests++
	u.Input += x.Input
	u.Output += x.Output
	u.CacheRead += x.CacheRead
	u.CacheWrite += x.CacheWrite
	if x.Cost != nil {
		u.Cost += x.Cost.Total
	}
}

// Turn is one turn: the user message that started it (its id), the
// steering and follow-up messages that joined it, and its model requests.
type Turn struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"` // KindTurn
	Status   string   `json:"status"`
	EntryIDs []string `json:"entryIds"` // the turn's user message entries
	Steps    []*Step  `json:"steps"`
	Usage    Usage    `json:"usage"`
	// StartedAt is the user message time, EndedAt the last reply or tool
	// result time (epoch ms; 0 when unknown).
	StartedAt int64 `json:"startedAt,omitempty"`
	EndedAt   int64 `json:"endedAt,omitempty"`
}

// Step is one model request: an assistant message and its ama.trace step.
type Step struct {
	ID            string    `json:"id"`   // the assistant entry id
	Kind          string    `json:"kind"` // KindStep
	Status        string    `json:"status"`
	EntryIDs      []string  `json:"entryIds"` // assistant entry, then the trace entry if any
	Provider      string    `json:"provider"`
	Model         string    `json:"model"`
	Attempt       int       `json:"attempt"`
	Usage         llm.Usage `json:"usage"`
	StopReason    string    `json:"stopReason"`
	Tools         []*Tool   `json:"tools"`
	ThinkingLevel string    `json:"thinkingLevel,omitempty"`
	CacheHitRatio float64   `json:"cacheHitRatio"`
	// Times from the ama.trace entry (epoch ms; 0 when unknown), the time
	// to the first token (ms) and the output rate (tokens/s; nil when
	// unknown).
	RequestAt    int64    `json:"requestAt,omitempty"`
	FirstTokenAt int64    `json:"firstTokenAt,omitempty"`
	DoneAt       int64    `json:"doneAt,omitempty"`
	TTFTMs       *int64   `json:"ttftMs,omitempty"`
	TPS          *float64 `json:"tps,omitempty"`
	// Decisions are the permission decision records of the step that
	// name none of its calls (see Tool.Decisions).
	Decisions []*permlog.Record `json:"decisions,omitempty"`
}

// Tool is one tool call of a step.
type Tool struct {
	ID       string   `json:"id"`   // the tool call id
	Kind     string   `json:"kind"` // KindTool
	Name     string   `json:"name"`
	Status   string   `json:"status"` // ok, error or running (no result yet)
	IsError  bool     `json:"isError"`
	EntryIDs []string `json:"entryIds"`          // assistant entry, then the tool result entry if any
	Children []*Tool  `json:"children"`          // always empty: ama-rpc has no nested calls
	EndedAt  int64    `json:"endedAt,omitempty"` // the tool result time (0: none yet)
	// Decisions are the permission decision records of the call and of
	// its nested calls, in order (permlog.Record: the call's shape and the
	// votes, never its arguments).
	Decisions []*permlog.Record `json:"decisions,omitempty"`
}

// Aux is an auxiliary request (not part of a turn's context).
type Aux struct {
	ID       string    `json:"id"`      // the entry id
	Kind     string    `json:"kind"`    // KindAux
	Purpose  string    `json:"purpose"` // usage kind, compaction or branch_summary
	Provider string    `json:"provider,omitempty"`
	Model    string    `json:"model,omitempty"`
	Usage    llm.Usage `json:"usage"`
	TurnID   string    `json:"turnId,omitempty"` // the turn the request happened in ("" before any)
}

// Preview is the content of one node, keyed "<kind>:<node id>". Absent
// fields are nil.
type Preview struct {
	Key    string
	Input  *string // turn: its prompt
	Output *string // step: its reply text
	Args   *string // tool: its arguments (JSON)
	Result *string // tool: its result text
}

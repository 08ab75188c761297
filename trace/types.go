package trace

import (
	"github.com/armadra/ama-rpc/llm"
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
	// Entries are the selected entries: the active branch (root → leaf)
	// for branch=leaf, every entry in file order for branch=all.
	Entries []*store.Entry
	// Leaf is the session's current leaf (nil: empty branch).
	Leaf *string
	// Running reports an active run: the turn holding the leaf is then
	// running and the trace is partial.
	Running bool
}

// Result is the data of a get_trace response.
type Result struct {
	Trace         Trace
	HasMoreBefore bool
	Cursor        Cursor
	LeafID        *string
	// Previews is set (possibly empty) for content=preview, in tree order
	// of the window: each turn, then each of its steps followed by the
	// step's tools.
	Previews []Preview
}

// Cursor holds the paging cursors of a response.
type Cursor struct {
	// Before is the id of the window's first turn when earlier turns
	// exist ("" otherwise).
	Before string
	// Since is the id of the last selected entry (nil when there is none).
	Since *string
}

// Trace is the tree of a session: the window of turns, and the totals and
// auxiliary requests of the whole selection.
type Trace struct {
	Version     int
	SessionID   string
	Cwd         string
	Totals      Usage
	Turns       []*Turn
	Aux         []*Aux
	Partial     bool
	SessionFile string
}

// Usage is the aggregate of a turn or of the whole selection.
type Usage struct {
	Requests   int
	Input      int
	Output     int
	CacheRead  int
	CacheWrite int
	ToolCalls  int
	Cost       float64
	// DurationMs is a turn's wall time (its user message to its last
	// reply or tool result); for totals, the sum over the turns.
	DurationMs    int64
	CacheHitRatio float64
}

// Turn is one turn: the user message that started it (its id), the
// steering and follow-up messages that joined it, and its model requests.
type Turn struct {
	ID       string
	Status   string
	EntryIDs []string // the turn's user message entries
	Steps    []*Step
	Usage    Usage
	// StartedAt is the user message time, EndedAt the last reply or tool
	// result time (epoch ms; 0 when unknown).
	StartedAt, EndedAt int64
}

// Step is one model request: an assistant message and its ama.trace step.
type Step struct {
	ID            string // the assistant entry id
	Status        string
	EntryIDs      []string // assistant entry, then the trace entry if any
	Provider      string
	Model         string
	Attempt       int
	Usage         llm.Usage
	StopReason    string
	Tools         []*Tool
	ThinkingLevel string
	CacheHitRatio float64
	// Times from the ama.trace entry (epoch ms; 0 when unknown), the time
	// to the first token (ms) and the output rate (tokens/s; nil when
	// unknown).
	RequestAt, FirstTokenAt, DoneAt int64
	TTFTMs                          *int64
	TPS                             *float64
}

// Tool is one tool call of a step.
type Tool struct {
	ID       string // the tool call id
	Name     string
	Status   string // ok, error or running (no result yet)
	IsError  bool
	EntryIDs []string // assistant entry, then the tool result entry if any
	Children []*Tool  // always empty: ama-rpc has no nested calls
	EndedAt  int64    // the tool result time (0: none yet)
}

// Aux is an auxiliary request (not part of a turn's context).
type Aux struct {
	ID       string // the entry id
	Purpose  string // usage kind, compaction or branch_summary
	Provider string
	Model    string
	Usage    llm.Usage
	TurnID   string // the turn the request happened in ("" before any)
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

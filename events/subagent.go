package events

import "github.com/armadra/ama-rpc/llm"

// SubagentStart announces a task's child run (agents.md §6.4). Key order is
// the wire order.
type SubagentStart struct {
	TaskID           string `json:"taskId"`
	ParentToolCallID string `json:"parentToolCallId"`
	Agent            string `json:"agent"`
	Runner           string `json:"runner"`
	Description      string `json:"description"`
	Background       bool   `json:"background"`
	Cwd              string `json:"cwd"`
	Model            string `json:"model,omitempty"`
	SessionFile      string `json:"sessionFile,omitempty"`
}

// SubagentUpdate is the progress of a task: merged text, a started tool or
// a completed turn.
type SubagentUpdate struct {
	TaskID    string     `json:"taskId"`
	Kind      string     `json:"kind"`
	TextDelta *string    `json:"textDelta,omitempty"`
	ToolName  string     `json:"toolName,omitempty"`
	Turn      int        `json:"turn"`
	Usage     *llm.Usage `json:"usage,omitempty"`
}

// SubagentBackground reports a foreground task moved to the background.
type SubagentBackground struct {
	TaskID           string `json:"taskId"`
	ParentToolCallID string `json:"parentToolCallId"`
	Reason           string `json:"reason"`
}

// SubagentCache is the cache summary of an ama child.
type SubagentCache struct {
	HitRate        *float64 `json:"hitRate,omitempty"`
	ReBilledTokens int      `json:"reBilledTokens"`
}

// SubagentWorktree is the kept worktree of a task.
type SubagentWorktree struct {
	Branch  string `json:"branch"`
	Changed bool   `json:"changed"`
}

// SubagentEnd reports a finished task run.
type SubagentEnd struct {
	TaskID     string            `json:"taskId"`
	Status     string            `json:"status"`
	Usage      *llm.Usage        `json:"usage,omitempty"`
	Cache      *SubagentCache    `json:"cache,omitempty"`
	OutputFile string            `json:"outputFile,omitempty"`
	Worktree   *SubagentWorktree `json:"worktree,omitempty"`
}

func (SubagentStart) Type() string      { return "subagent_start" }
func (SubagentUpdate) Type() string     { return "subagent_update" }
func (SubagentBackground) Type() string { return "subagent_background" }
func (SubagentEnd) Type() string        { return "subagent_end" }

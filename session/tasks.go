package session

import (
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/trace"
)

// Tasks is a root session's sub-agent registry (package agents builds it,
// Deps.Tasks): the task tools reach it through tools.Env.Tasks, the
// protocols through Session.Tasks. Its methods are safe for concurrent use.
type Tasks interface {
	// List is get_tasks: every task, in launch order.
	List() []TaskInfo
	// Agents is get_agents: the agent types a task may run.
	Agents() []AgentInfo
	// Background moves foreground tasks (id "" : all) to the background;
	// release lets their tool results go out once the caller has answered.
	Background(id, reason string) (moved []string, release func())
	// Trace is get_trace of one task (q.TaskID).
	Trace(q trace.Query) (*trace.Result, error)
	// Close ends the children; Session.Close calls it first.
	Close()
}

// SessionRef names a task's child session.
type SessionRef struct {
	Runner      string `json:"runner"`
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"`
}

// TaskInfo is one entry of get_tasks (key order as ama emits it).
type TaskInfo struct {
	TaskID      string      `json:"taskId"`
	Agent       string      `json:"agent"`
	Runner      string      `json:"runner"`
	Description string      `json:"description"`
	Background  bool        `json:"background"`
	Status      string      `json:"status"`
	StartedAt   int64       `json:"startedAt"`
	SessionRef  *SessionRef `json:"sessionRef,omitempty"`
	Usage       *llm.Usage  `json:"usage,omitempty"`
	CostUSD     *float64    `json:"costUsd,omitempty"`
	// ContextTokens and ContextWindow are a runner's context numbers.
	ContextTokens *int   `json:"contextTokens,omitempty"`
	ContextWindow *int   `json:"contextWindow,omitempty"`
	Turns         *int   `json:"turns,omitempty"`
	EndedAt       *int64 `json:"endedAt,omitempty"`
	OutputFile    string `json:"outputFile,omitempty"`
	Context       string `json:"context,omitempty"`
}

// AgentInfo is one entry of get_agents.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Runner      string `json:"runner"`
	Source      string `json:"source"`
	FilePath    string `json:"filePath,omitempty"`
	Installed   *bool  `json:"installed,omitempty"`
	Version     string `json:"version,omitempty"`
}

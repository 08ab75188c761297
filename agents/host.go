package agents

import (
	"context"
	"errors"
	"fmt"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

// This file runs tasks on a host adapter's runners (runners.provide;
// host-api.md §4.12, agents.md §7): task(agent=<id>) with no built-in or
// defined type of that name goes to the host runner <id>.

// SourceHost is the source of agent types a host adapter provides.
const SourceHost = "host"

// HostRunners are the sub-agent runners of a host adapter (package host
// implements it over the bridge).
type HostRunners interface {
	// HostRunners lists the runners provided so far.
	HostRunners() []HostRunnerInfo
	// RunTask runs req on runner id until its result; onEvent sees the
	// runner's progress in order. ctx ending stops the run.
	RunTask(ctx context.Context, id string, req HostRunRequest, onEvent func(HostRunEvent)) (HostRunResult, error)
}

// HostSender is implemented by HostRunners that keep a finished run's
// handle: SendTask continues it with the handle's send(text) and waits for
// its next result (HostRunResult.Handle of the run names it). An error
// wrapping ErrHandleReleased means the handle is gone: the task is then
// started again with resume.
type HostSender interface {
	SendTask(ctx context.Context, handle, text string, onEvent func(HostRunEvent)) (HostRunResult, error)
}

// ErrHandleReleased is a host handle that can no longer be sent to.
var ErrHandleReleased = errors.New("host runner handle released")

// HostRunnerInfo is one provided runner.
type HostRunnerInfo struct {
	ID, Description string
}

// HostRunRequest is the SubagentRunRequest a runner's start receives.
type HostRunRequest struct {
	Prompt    string  `json:"prompt"`
	Cwd       string  `json:"cwd"`
	Mode      string  `json:"mode"`
	Model     string  `json:"model,omitempty"`
	BudgetUsd float64 `json:"budgetUsd,omitempty"`
	TaskID    string  `json:"taskId"`
	// Resume is the runner's own session id of a finished task continued
	// without its handle (host-api.md §4.12).
	Resume string `json:"resume,omitempty"`
}

// HostRunEvent is a runner's onEvent report; "started" (with ID, the
// runner-side session id) is sent by the bridge once start() resolved.
type HostRunEvent struct {
	Type     string `json:"type"`
	ID       string `json:"id,omitempty"`
	Delta    string `json:"delta,omitempty"`
	ToolName string `json:"toolName,omitempty"`
	Status   string `json:"status,omitempty"`
	Turn     int    `json:"turn,omitempty"`
	// usage: the task's usage so far, an amount in a unit ("usd" sets
	// costUsd) and the context numbers.
	Usage         *llm.Usage `json:"usage,omitempty"`
	Unit          string     `json:"unit,omitempty"`
	Amount        *float64   `json:"amount,omitempty"`
	ContextTokens *int       `json:"contextTokens,omitempty"`
	ContextWindow *int       `json:"contextWindow,omitempty"`
	// notice: a diagnostic.
	Level string `json:"level,omitempty"`
	Text  string `json:"text,omitempty"`
}

// HostRunResult is the SubagentResult of the handle's wait().
type HostRunResult struct {
	Text       string     `json:"text"`
	Usage      *llm.Usage `json:"usage,omitempty"`
	StopReason string     `json:"stopReason,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
	Status     string     `json:"status,omitempty"`
	// Handle names the run's handle for HostSender.SendTask ("": the
	// runner keeps none).
	Handle string `json:"-"`
}

func hostRunnerType(hr HostRunnerInfo) *Type {
	return &Type{Name: hr.ID, Runner: hr.ID, Source: SourceHost, Description: hr.Description, MaxTurns: DefaultMaxTurns}
}

// HostTypes are the catalog entries of the runners provided so far (during
// create(): they are described in the task tool, host-api.md §4.12). The
// built-in types always stay in-process sub-sessions, so a runner of that
// name is left out.
func HostTypes(hr HostRunners) []*Type {
	if hr == nil {
		return nil
	}
	builtin := map[string]bool{}
	for _, t := range Builtins() {
		builtin[t.Name] = true
	}
	var out []*Type
	for _, r := range hr.HostRunners() {
		if !builtin[r.ID] {
			out = append(out, hostRunnerType(r))
		}
	}
	return out
}

// hostType is the entry of a runner provided after the catalog was built
// (resolved on demand, not described; nil: none of that id).
func (r *Registry) hostType(name string) *Type {
	for _, t := range HostTypes(r.cfg.HostRunners) {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// hostInfos are the get_agents entries of the runners the catalog does
// not list (provided after it was built).
func (r *Registry) hostInfos() []AgentInfo {
	var out []AgentInfo
	for _, t := range HostTypes(r.cfg.HostRunners) {
		if r.cfg.Catalog.Lookup(t.Name) == nil {
			out = append(out, AgentInfo{Name: t.Name, Description: t.Description, Runner: t.Runner, Source: SourceHost})
		}
	}
	return out
}

// runHost runs the task on its host runner. No first-run confirmation:
// the host handles its runners' approvals itself.
func (t *Task) runHost() Result {
	r := t.reg
	mode := "default"
	if po, err := r.parent.Settings(); err == nil && po.PermissionMode != "" {
		mode = string(po.PermissionMode)
	}
	r.mu.Lock()
	info, bg, parentCall := t.info, t.background, t.req.ParentToolCallID
	r.mu.Unlock()
	started := false
	start := func(id string) {
		if started {
			return
		}
		started = true
		r.mu.Lock()
		if id != "" {
			t.info.SessionRef = &SessionRef{Runner: info.Runner, SessionID: id}
		}
		r.mu.Unlock()
		r.parent.Emit(events.SubagentStart{TaskID: info.TaskID, ParentToolCallID: parentCall, Agent: info.Agent, Runner: info.Runner,
			Description: info.Description, Background: bg, Cwd: t.cwd})
	}
	onEvent := func(ev HostRunEvent) {
		if !started && ev.Type != "started" {
			start("") // a bridge that reports before start() resolved
		}
		switch ev.Type {
		case "started":
			if !started {
				start(ev.ID)
			}
		case "text":
			t.smu.Lock()
			t.text.WriteString(ev.Delta)
			t.pending.WriteString(ev.Delta)
			if now := r.cfg.Now(); !t.flushed || now.Sub(t.lastFlush) >= r.cfg.TextThrottle {
				t.flushLocked(now)
			}
			t.smu.Unlock()
		case "tool":
			if ev.Status != "started" {
				return
			}
			t.smu.Lock()
			turn := t.turns
			t.smu.Unlock()
			r.parent.Emit(events.SubagentUpdate{TaskID: info.TaskID, Kind: "tool", ToolName: ev.ToolName, Turn: turn})
		case "turn":
			t.smu.Lock()
			t.turns = ev.Turn
			t.smu.Unlock()
			turn := ev.Turn
			r.mu.Lock()
			t.info.Turns = &turn
			r.mu.Unlock()
			r.parent.Emit(events.SubagentUpdate{TaskID: info.TaskID, Kind: "turn", Turn: turn})
		case "usage":
			r.mu.Lock()
			if ev.Usage != nil {
				u := plainUsage(*ev.Usage)
				t.info.Usage = &u
			}
			if ev.Unit == "usd" && ev.Amount != nil {
				c := *ev.Amount
				t.info.CostUSD = &c
			}
			if ev.ContextTokens != nil {
				t.info.ContextTokens = ev.ContextTokens
			}
			if ev.ContextWindow != nil {
				t.info.ContextWindow = ev.ContextWindow
			}
			r.mu.Unlock()
		case "notice":
			r.cfg.Log.Info(fmt.Sprintf("[task %s] %s", info.TaskID, ev.Text))
		}
	}
	req := HostRunRequest{Prompt: t.req.Prompt, Cwd: t.cwd, Mode: mode, BudgetUsd: t.req.BudgetUSD, TaskID: info.TaskID}
	var res HostRunResult
	var err error
	sender, canSend := r.cfg.HostRunners.(HostSender)
	if h := t.hostHandle; h != "" && canSend {
		// A continuation on the kept handle: send(text), then its next result.
		start(t.resumeExt)
		res, err = sender.SendTask(t.ctx, h, t.req.Prompt, onEvent)
		if errors.Is(err, ErrHandleReleased) {
			err = nil
			t.hostHandle = ""
		}
	}
	if t.hostHandle == "" || !canSend {
		req.Resume = t.resumeExt // a released handle: the runner reopens its session
		res, err = r.cfg.HostRunners.RunTask(t.ctx, t.typ.Name, req, onEvent)
	}
	t.hostHandle = res.Handle
	if !started {
		start("")
	}
	r.mu.Lock()
	if t.info.SessionRef != nil {
		t.resumeExt = t.info.SessionRef.SessionID // the runner's session: continuable
	}
	r.mu.Unlock()
	t.smu.Lock()
	t.flushLocked(r.cfg.Now())
	t.smu.Unlock()
	if err != nil {
		status := StatusFailed
		if t.ctx.Err() != nil {
			status = StatusAborted
		}
		return Result{Status: status, IsError: true, Text: fmt.Sprintf("The host runner %s failed: %v", t.typ.Name, err), StopReason: llm.StopError}
	}
	out := Result{Text: res.Text, StopReason: res.StopReason, IsError: res.IsError, Status: res.Status}
	if res.Usage != nil {
		out.Usage = *res.Usage
	}
	if out.StopReason == "" {
		out.StopReason = llm.StopStop
	}
	switch out.Status {
	case StatusCompleted, StatusFailed, StatusAborted, StatusMaxTurns, StatusInterrupted:
	default:
		out.Status = StatusCompleted
		if res.IsError {
			out.Status = StatusFailed
		}
		if t.ctx.Err() != nil {
			out.Status = StatusAborted
		}
	}
	r.mu.Lock()
	if res.Usage != nil || t.info.Usage == nil { // the result's usage wins over the reported one
		u := plainUsage(out.Usage)
		t.info.Usage = &u
	}
	r.mu.Unlock()
	return out
}

package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// Tool names.
const (
	ToolTask    = "task"
	ToolTaskCtl = "task_ctl"
)

// taskSchema is the task tool's parameter schema (agents.md §2).
const taskSchema = `{"type":"object","properties":{` +
	`"prompt":{"type":"string"},"agent":{"type":"string"},"description":{"type":"string"},` +
	`"background":{"type":"boolean"},"taskId":{"type":"string"},` +
	`"isolation":{"type":"string","enum":["none","worktree"]},"budgetUsd":{"type":"number"},` +
	`"tools":{"type":"array","items":{"type":"string"}},"model":{"type":"string"},` +
	`"thinkingLevel":{"type":"string","enum":["off","minimal","low","medium","high","xhigh"]},` +
	`"maxTurns":{"type":"integer"},"context":{"type":"string","enum":["fork","fresh"]}},` +
	`"required":["prompt"],"additionalProperties":false}`

const taskCtlSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["list","wait","stop","output","send"]},` +
	`"taskId":{"type":"string"},"timeoutMs":{"type":"number"},"prompt":{"type":"string"}},` +
	`"required":["action"],"additionalProperties":false}`

// TaskTool is the task tool.
type TaskTool struct {
	desc string
}

// NewTools returns the task and task_ctl tools for a catalog. background
// selects the description's default wording.
func NewTools(c *Catalog, background bool) []tools.Tool {
	head := "Run a sub-agent on one self-contained job and get its final report. It starts fresh: put everything it needs in prompt. " +
		"Runs in the foreground (you wait for the report) unless background is true."
	if background {
		head = "Run a sub-agent on one self-contained job. It starts fresh: put everything it needs in prompt. " +
			"It runs in the background by default: the call returns at once and a <task-notification> brings the report; pass background:false to wait for it."
	}
	return []tools.Tool{&TaskTool{desc: head + " " + notifyRule + "\nAgents:\n" + c.describe()}, TaskCtlTool{}}
}

// Decl implements tools.Tool.
func (t *TaskTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: ToolTask, Description: t.desc, Parameters: json.RawMessage(taskSchema)}
}

// Permission implements tools.Tool: starting agents is execute.
func (*TaskTool) Permission() string { return tools.PermExecute }

// Preview shows the task's description in approval dialogs.
func (*TaskTool) Preview(_ context.Context, call *tools.Call) *tools.Preview {
	var a struct {
		Description string `json:"description"`
		Prompt      string `json:"prompt"`
	}
	_ = json.Unmarshal(call.Args, &a)
	line := a.Description
	if line == "" {
		line = firstLine(a.Prompt)
	}
	return &tools.Preview{Kind: "other", Lines: []string{line}, Severity: "info"}
}

type taskArgs struct {
	Prompt        string   `json:"prompt"`
	Agent         string   `json:"agent"`
	Description   string   `json:"description"`
	Background    *bool    `json:"background"`
	TaskID        string   `json:"taskId"`
	Isolation     string   `json:"isolation"`
	BudgetUSD     *float64 `json:"budgetUsd"`
	Tools         []string `json:"tools"`
	Model         string   `json:"model"`
	ThinkingLevel string   `json:"thinkingLevel"`
	MaxTurns      *float64 `json:"maxTurns"`
	Context       string   `json:"context"`
}

// registryOf returns the caller's registry, or nil in a sub-agent.
func registryOf(call *tools.Call) *Registry {
	if call.Env == nil || call.Env.Depth >= 1 {
		return nil
	}
	r, _ := call.Env.Tasks.(*Registry)
	return r
}

// Execute implements tools.Tool.
func (t *TaskTool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	res, err := t.execute(ctx, call)
	if res != nil {
		res.AsText = true // hosts get the task tool's content as one string
	}
	return res, err
}

func (t *TaskTool) execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	reg := registryOf(call)
	if reg == nil {
		return tools.ErrorResult(nestedText), nil
	}
	var a taskArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tools.ErrorResult("Invalid arguments for task: " + err.Error()), nil
	}
	switch {
	case strings.TrimSpace(a.Prompt) == "":
		return tools.ErrorResult("prompt must not be empty"), nil
	case a.MaxTurns != nil && (*a.MaxTurns < 1 || *a.MaxTurns != float64(int(*a.MaxTurns))):
		return tools.ErrorResult("maxTurns must be an integer of at least 1"), nil
	case a.BudgetUSD != nil && *a.BudgetUSD <= 0:
		return tools.ErrorResult("budgetUsd must be greater than 0"), nil
	case ctx.Err() != nil:
		return tools.ErrorResult(abortedText), nil
	}
	req := Request{Prompt: a.Prompt, Agent: a.Agent, Description: a.Description, Background: a.Background, TaskID: a.TaskID,
		Model: a.Model, Thinking: a.ThinkingLevel, Context: a.Context, Isolation: a.Isolation, ParentToolCallID: call.ID,
		Progress: call.Update}
	if a.TaskID == "" {
		for _, n := range a.Tools {
			if n != ToolTask && n != ToolTaskCtl {
				req.Tools = append(req.Tools, n)
			}
		}
	}
	if a.MaxTurns != nil {
		req.MaxTurns = int(*a.MaxTurns)
	}
	if a.BudgetUSD != nil {
		req.BudgetUSD = *a.BudgetUSD
	}
	task, err := reg.Launch(req)
	if err != nil {
		if text, ok := Refusal(err); ok {
			return tools.ErrorResult(text), nil
		}
		return nil, err
	}
	return awaitTask(ctx, task), nil
}

// awaitTask is the task call's result: started (background), moved to the
// background, finished, or aborted with the parent.
func awaitTask(ctx context.Context, task *Task) *tools.Result {
	id := task.ID()
	done, moved := task.channels()
	if task.Background() {
		select {
		case <-moved: // moved before we looked: the mover releases us
		default:
		}
		return &tools.Result{Content: []llm.Content{llm.Text("[task " + id + "] " + startedText(id, task.Info().Agent))},
			Details: task.details(StatusRunning, llm.Usage{}, llm.StopStop), AsText: true}
	}
	var auto <-chan time.Time
	if d := task.reg.cfg.AutoBackgroundAfter; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		auto = timer.C
	}
	for {
		select {
		case <-auto:
			auto = nil
			if _, release := task.reg.Background(id, "timeout"); release != nil {
				release()
			}
			continue
		case <-done:
		case <-moved:
			task.reg.mu.Lock()
			reason := task.movedReason
			task.reg.mu.Unlock()
			return &tools.Result{Content: []llm.Content{llm.Text("[task " + id + "] " + backgroundedText(reason, task.reg.cfg.AutoBackgroundAfter.Milliseconds()))},
				Details: task.details(StatusRunning, llm.Usage{}, llm.StopStop), AsText: true}
		case <-ctx.Done():
			task.Abort()
			<-done
			res := task.Result()
			r := tools.ErrorResult(abortedText)
			r.Details, r.AsText = task.details(res.Status, res.Usage, res.StopReason), true
			return r
		}
		break
	}
	res := task.Result()
	text := res.Text
	if strings.TrimSpace(text) == "" {
		text = emptyText
	}
	if ctx.Err() != nil {
		r := tools.ErrorResult(abortedText)
		r.Details, r.AsText = task.details(res.Status, res.Usage, res.StopReason), true
		return r
	}
	return &tools.Result{Content: []llm.Content{llm.Text("[task " + id + "] " + text)}, IsError: res.IsError,
		Details: task.details(res.Status, res.Usage, res.StopReason), AsText: true}
}

// TaskCtlTool is the task_ctl tool.
type TaskCtlTool struct{}

// Decl implements tools.Tool.
func (TaskCtlTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: ToolTaskCtl, Parameters: json.RawMessage(taskCtlSchema),
		Description: "Manage sub-agent tasks: list them, wait for one (timeoutMs, default 30000, max 600000), stop one, read its output, or send a finished task a new prompt (runs in the background)."}
}

// Permission implements tools.Tool.
func (TaskCtlTool) Permission() string { return tools.PermRead }

// Pollable marks task_ctl exempt from repeated-call detection.
func (TaskCtlTool) Pollable() bool { return true }

// Execute implements tools.Tool.
func (TaskCtlTool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	reg := registryOf(call)
	if reg == nil {
		return tools.ErrorResult(strings.Replace(nestedText, "task is", "task_ctl is", 1)), nil
	}
	var a struct {
		Action    string   `json:"action"`
		TaskID    string   `json:"taskId"`
		TimeoutMs *float64 `json:"timeoutMs"`
		Prompt    string   `json:"prompt"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tools.ErrorResult("Invalid arguments for task_ctl: " + err.Error()), nil
	}
	if a.Action == "list" {
		return tools.TextResult(listText(reg)), nil
	}
	if a.TaskID == "" {
		return tools.ErrorResult(fmt.Sprintf("task_ctl %s needs taskId", a.Action)), nil
	}
	task := reg.Get(a.TaskID)
	if task == nil {
		return tools.ErrorResult("Unknown task " + a.TaskID + "."), nil
	}
	switch a.Action {
	case "wait":
		timeout := 30 * time.Second
		if a.TimeoutMs != nil {
			ms := min(max(*a.TimeoutMs, 0), 600000)
			timeout = time.Duration(ms) * time.Millisecond
		}
		done, moved := task.channels()
		wasBg := task.Background()
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		var movedCh <-chan struct{} = moved
		if wasBg {
			movedCh = nil
		}
		select {
		case <-done:
			res := task.Result()
			return &tools.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("[task %s %s]\n%s", a.TaskID, res.Status, res.Text))}, IsError: res.IsError}, nil
		case <-movedCh:
			return tools.TextResult(waitDetachedText), nil
		case <-timer.C:
			turns := 0
			if info := task.Info(); info.Turns != nil {
				turns = *info.Turns
			}
			return tools.TextResult(fmt.Sprintf("Task %s is still running (%d turns so far). Wait again or stop it.", a.TaskID, turns)), nil
		case <-ctx.Done():
			return tools.ErrorResult(abortedText), nil
		}
	case "stop":
		return tools.TextResult(fmt.Sprintf("Task %s %s.", a.TaskID, task.Stop())), nil
	case "output":
		if task.Info().Status == StatusRunning {
			return tools.TextResult("Task " + a.TaskID + " is running; output so far:\n" + task.OutputSoFar()), nil
		}
		text := task.Result().Text
		if strings.TrimSpace(text) == "" {
			text = emptyText
		}
		return tools.TextResult(text), nil
	case "send":
		if strings.TrimSpace(a.Prompt) == "" {
			return tools.ErrorResult("task_ctl send needs a non-empty prompt"), nil
		}
		bg := true
		t2, err := reg.Launch(Request{TaskID: a.TaskID, Prompt: a.Prompt, Background: &bg, ParentToolCallID: call.ID})
		if err != nil {
			if text, ok := Refusal(err); ok {
				return tools.ErrorResult(text), nil
			}
			return nil, err
		}
		return tools.TextResult("[task " + a.TaskID + "] " + startedText(a.TaskID, t2.Info().Agent)), nil
	}
	return tools.ErrorResult("unknown task_ctl action " + a.Action), nil
}

// listText is task_ctl list.
func listText(reg *Registry) string {
	infos := reg.List()
	if len(infos) == 0 {
		return "No tasks in this session."
	}
	now := reg.cfg.Now().UnixMilli()
	var b strings.Builder
	for i, in := range infos {
		if i > 0 {
			b.WriteByte('\n')
		}
		parts := []string{in.TaskID, in.Agent, in.Status}
		if in.Turns != nil {
			parts = append(parts, fmt.Sprintf("%d turns", *in.Turns))
		}
		if in.Usage != nil {
			parts = append(parts, fmt.Sprintf("%d tokens", in.Usage.TotalTokens))
		}
		end := now
		if in.EndedAt != nil {
			end = *in.EndedAt
		}
		parts = append(parts, fmt.Sprintf("%ds", (end-in.StartedAt)/1000))
		if in.Background {
			parts = append(parts, "background")
		}
		b.WriteString(strings.Join(parts, " · "))
		if in.Description != "" {
			b.WriteString(" — " + in.Description)
		}
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

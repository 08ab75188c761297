package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/armadra/ama-rpc/agents/claudestream"
	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/llm"
)

// This file is the Claude Code stream-json driver (agents.md §8.4): one
// long-lived `claude -p --input-format stream-json --output-format
// stream-json` process per task run; a turn is one user line, ended by the
// result line; approvals arrive as control_request{can_use_tool}
// (--permission-prompt-tool stdio) and are answered allow (echoing the
// input as updatedInput) or deny; an interrupt is
// control_request{interrupt}.
//
// Message shapes: the public Claude Agent SDK (Python
// claude_agent_sdk/_internal/query.py and subprocess_cli.py: the flags, the
// user line {type:"user", message:{role, content}, parent_tool_use_id},
// the can_use_tool request {tool_name, input, permission_suggestions} and
// its response {behavior:"allow", updatedInput} / {behavior:"deny",
// message}), the SDK message types (system init with session_id,
// stream_event with Anthropic content_block_delta events under
// --include-partial-messages, assistant with text/tool_use blocks, user
// with tool_result blocks, result with subtype, total_cost_usd and usage).
// The mode names and the --permission-prompts none switch for unattended
// runs are ama's (src/drivers/native/claude-stream.ts); not verified
// against a real CLI here (it cannot log in on these machines).

// claudeQuestionTools ask the user a question: ama does not answer for
// the user (agents.md §8.4).
var claudeQuestionTools = map[string]bool{"AskUserQuestion": true}

type claudeDriver struct {
	run  *extRun
	c    candidate
	conn *claudestream.Conn

	mu          sync.Mutex
	sessionID   string
	manual      string // the name of the asking mode on this CLI
	turnDone    chan claudeResult
	interrupted bool
	sawPartial  bool
	lastCost    float64
}

// claudeResult is the result line of a turn.
type claudeResult struct {
	Subtype      string   `json:"subtype"`
	IsError      bool     `json:"is_error"`
	Result       string   `json:"result"`
	SessionID    string   `json:"session_id"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	Usage        *struct {
		InputTokens          int `json:"input_tokens"`
		OutputTokens         int `json:"output_tokens"`
		CacheReadInputTokens int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Errors []string `json:"errors"`
}

// claudeMode maps an ama mode to --permission-mode (never a bypass mode).
func claudeMode(mode, manual string) string {
	switch mode {
	case "plan", "allowlist":
		return "plan"
	case "auto-edit":
		return "acceptEdits"
	case "auto", "full-auto":
		return "auto"
	}
	return manual
}

func (d *claudeDriver) argv(o *extOpen) []string {
	d.manual = "default"
	if help := cliHelp(d.c.program, o.cwd); strings.Contains(help, "manual") {
		d.manual = "manual" // newer CLIs call the asking mode manual
	}
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--permission-mode", claudeMode(o.mode, d.manual)}
	if o.unattended {
		args = append(args, "--permission-prompts", "none")
	} else {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if o.resume != "" {
		args = append(args, "--resume", o.resume)
		d.sessionID = o.resume
	} else {
		d.sessionID = uuid.NewString()
		args = append(args, "--session-id", d.sessionID)
	}
	if o.model != "" {
		args = append(args, "--model", o.model)
	}
	if o.budgetUSD > 0 {
		args = append(args, "--max-budget-usd", fmt.Sprint(o.budgetUSD))
	}
	return args
}

func (d *claudeDriver) attach(stdin io.WriteCloser, stdout io.Reader) {
	d.conn = claudestream.New(stdout, stdin, d)
}

// open sends the SDK handshake; older CLIs that do not answer it within
// 10 s are used anyway.
func (d *claudeDriver) open(ctx context.Context, _ *extOpen) (string, error) {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := d.conn.Control(hctx, map[string]any{"subtype": "initialize", "hooks": nil})
	switch {
	case errors.Is(err, claudestream.ErrClosed):
		return "", fmt.Errorf("initialize: the CLI exited")
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		d.run.notice("claude did not accept initialize: " + err.Error())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sessionID, nil
}

func (d *claudeDriver) prompt(text string) (string, error) {
	done := make(chan claudeResult, 1)
	d.mu.Lock()
	d.turnDone, d.interrupted, d.sawPartial = done, false, false
	d.mu.Unlock()
	line := map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "text", "text": text}}}, "parent_tool_use_id": nil}
	if err := d.conn.Send(line); err != nil {
		return "", err
	}
	var res claudeResult
	select {
	case res = <-done:
	case <-d.conn.Done():
		return "", fmt.Errorf("the claude process exited during the turn")
	}
	d.mu.Lock()
	interrupted := d.interrupted
	if res.SessionID != "" {
		d.sessionID = res.SessionID
	}
	var cost *float64
	if res.TotalCostUSD != nil { // cumulative in the process: this turn is the difference
		c := max(0, *res.TotalCostUSD-d.lastCost)
		d.lastCost, cost = *res.TotalCostUSD, &c
	}
	d.mu.Unlock()
	var u llm.Usage
	if res.Usage != nil {
		u = llm.Usage{Input: res.Usage.InputTokens, Output: res.Usage.OutputTokens, CacheRead: res.Usage.CacheReadInputTokens}
	}
	d.run.setUsage(u, cost)
	if res.Result != "" {
		d.run.finalText(res.Result)
	}
	if res.Subtype == "error_max_budget_usd" {
		d.run.notice("claude reached its USD budget and stopped")
	}
	switch {
	case interrupted:
		return "cancelled", nil
	case res.Subtype == "success" && !res.IsError:
		return "end_turn", nil
	case res.Subtype == "error_max_turns":
		return "max_turn_requests", nil
	}
	detail := res.Subtype
	if len(res.Errors) > 0 {
		detail = strings.Join(res.Errors, "; ")
	} else if res.Result != "" {
		detail = res.Result
	}
	return "", fmt.Errorf("the claude turn failed: %s", cut(oneLine(detail), 300))
}

func (d *claudeDriver) cancel() {
	d.mu.Lock()
	d.interrupted = true
	d.mu.Unlock()
	go func() { // the answer comes on the read goroutine; the watchdog bounds the turn
		ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		defer cancel()
		_, _ = d.conn.Control(ctx, map[string]any{"subtype": "interrupt"})
	}()
}

func (d *claudeDriver) close() {}

// Message implements claudestream.Handler.
func (d *claudeDriver) Message(typ string, line json.RawMessage) {
	switch typ {
	case "system":
		var m struct {
			Subtype   string `json:"subtype"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(line, &m) == nil && m.Subtype == "init" && m.SessionID != "" {
			d.mu.Lock()
			d.sessionID = m.SessionID
			d.mu.Unlock()
		}
	case "stream_event":
		var m struct {
			Parent *string `json:"parent_tool_use_id"`
			Event  struct {
				Type  string `json:"type"`
				Delta struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"delta"`
			} `json:"event"`
		}
		if json.Unmarshal(line, &m) != nil || m.Parent != nil { // a nested (Task) agent's stream is not the reply
			return
		}
		if m.Event.Type == "content_block_delta" && m.Event.Delta.Type == "text_delta" {
			d.mu.Lock()
			d.sawPartial = true
			d.mu.Unlock()
			d.run.textDelta(m.Event.Delta.Text)
		}
	case "assistant":
		var m struct {
			Parent  *string `json:"parent_tool_use_id"`
			Message struct {
				Content []struct {
					Type  string          `json:"type"`
					Text  string          `json:"text"`
					ID    string          `json:"id"`
					Name  string          `json:"name"`
					Input json.RawMessage `json:"input"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &m) != nil {
			return
		}
		nested := m.Parent != nil && *m.Parent != ""
		d.mu.Lock()
		partial := d.sawPartial
		if !nested {
			d.sawPartial = false // the next message's stream counts afresh
		}
		d.mu.Unlock()
		for _, b := range m.Message.Content {
			switch {
			case b.Type == "text" && !nested && !partial:
				d.run.textDelta(b.Text)
			case b.Type == "tool_use":
				title, kind := claudeToolTitle(b.Name, b.Input), claudeToolKind(b.Name)
				// Claude runs the tool right after an allowed ask, so the
				// call counts as started when it is announced.
				status := "in_progress"
				d.run.toolUpdate(b.ID, &title, &kind, &status, claudeToolPaths(b.Input))
			}
		}
	case "user":
		var m struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		var blocks []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			IsError   bool   `json:"is_error"`
		}
		if json.Unmarshal(line, &m) != nil || json.Unmarshal(m.Message.Content, &blocks) != nil {
			return
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			if _, _, _, ok := d.run.tool(b.ToolUseID); !ok {
				continue
			}
			status := "completed"
			if b.IsError {
				status = "failed"
			}
			d.run.toolUpdate(b.ToolUseID, nil, nil, &status, nil)
		}
	case "result":
		var res claudeResult
		if json.Unmarshal(line, &res) != nil {
			return
		}
		d.mu.Lock()
		ch := d.turnDone
		d.turnDone = nil
		d.mu.Unlock()
		if ch != nil {
			ch <- res
		}
	}
}

// ControlRequest implements claudestream.Handler: can_use_tool goes to
// the parent's approvals; a denied or cancelled call is answered deny, so
// Claude does not run it.
func (d *claudeDriver) ControlRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var req struct {
		Subtype     string          `json:"subtype"`
		ToolName    string          `json:"tool_name"`
		Input       json.RawMessage `json:"input"`
		Suggestions []struct {
			Destination string `json:"destination"`
		} `json:"permission_suggestions"`
	}
	if json.Unmarshal(raw, &req) != nil || req.Subtype != "can_use_tool" {
		return nil, fmt.Errorf("ama does not handle %s", req.Subtype)
	}
	if claudeQuestionTools[req.ToolName] {
		d.run.notice("claude asked the user a question (" + req.ToolName + "); ama does not answer for the user")
		return map[string]any{"behavior": "deny", "message": "Questions cannot be relayed to the user. Put your questions in your final reply and stop."}, nil
	}
	d.mu.Lock()
	interrupted := d.interrupted
	d.mu.Unlock()
	if interrupted {
		return map[string]any{"behavior": "deny", "message": "Cancelled", "interrupt": true}, nil
	}
	input := req.Input
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	opts := []option{{"allow", "allow_once"}, {"deny", "reject_once"}}
	view := toolView{Title: claudeToolTitle(req.ToolName, input), Kind: claudeToolKind(req.ToolName),
		Locations: claudeToolPaths(input), InputSummary: compactJSON(input)}
	kind := d.run.ask(ctx, view, opts)
	if ctx.Err() != nil && !d.isInterrupted() {
		return nil, claudestream.ErrNoReply // Claude withdrew the request
	}
	if kind == "allow_once" || kind == "allow_always" {
		return map[string]any{"behavior": "allow", "updatedInput": input}, nil
	}
	if kind == "" {
		return map[string]any{"behavior": "deny", "message": "Cancelled by the user", "interrupt": true}, nil
	}
	return map[string]any{"behavior": "deny", "message": "The user denied this action"}, nil
}

func (d *claudeDriver) isInterrupted() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.interrupted
}

// claudeToolKind is the ACP tool kind of a Claude Code tool.
func claudeToolKind(name string) string {
	switch name {
	case "Bash", "BashOutput", "KillShell":
		return "execute"
	case "Read":
		return "read"
	case "Grep", "Glob", "LS":
		return "search"
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		return "edit"
	case "WebFetch", "WebSearch":
		return "fetch"
	}
	return "other"
}

// claudeToolTitle is "<Tool>: <main argument>".
func claudeToolTitle(name string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	for _, k := range []string{"command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description"} {
		if s, ok := in[k].(string); ok && s != "" {
			return name + ": " + cut(oneLine(s), 100)
		}
	}
	return name
}

// claudeToolPaths are the files a tool call names.
func claudeToolPaths(input json.RawMessage) []string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	var out []string
	for _, k := range []string{"file_path", "notebook_path"} {
		if s, ok := in[k].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// cliHelp is a program's --help output (bounded, memoised per process),
// the program found on PATH outside cwd (childenv.LookPath: never one
// planted in the project).
func cliHelp(program, cwd string) string {
	path, err := childenv.LookPath(program, cwd)
	if err != nil {
		return ""
	}
	helpMu.Lock()
	defer helpMu.Unlock()
	if h, ok := helpMemo[path]; ok {
		return h
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	out, _ := runVersion(ctx, path, "--help")
	helpMemo[path] = string(out)
	return string(out)
}

var (
	helpMu   sync.Mutex
	helpMemo = map[string]string{}
)

package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/armadra/ama-rpc/agents/codexrpc"
	"github.com/armadra/ama-rpc/llm"
)

// This file is the Codex app-server driver (agents.md §8.5): `codex
// app-server` on stdio; initialize{clientInfo, capabilities}, the
// initialized notification, thread/start (or thread/resume{threadId,
// excludeTurns}, falling back to a new thread), then turn/start{threadId,
// input} per turn until the matching turn/completed; turn/interrupt
// cancels. The server's approval requests go to the parent's approvals
// and are answered accept / acceptForSession / decline (cancel when the
// task ends), so a declined command is not run.
//
// Message shapes: OpenAI's app-server documentation
// (developers.openai.com/codex/app-server and codex-rs/app-server/README.md
// in openai/codex: the method names, thread/start → {thread:{id}},
// turn/start → {turn:{id}}, notifications turn/started, item/started,
// item/completed, item/agentMessage/delta {itemId, delta},
// thread/tokenUsage/updated {tokenUsage:{total:{…}}}, turn/completed
// {turn:{id, status}}; "Approvals": item/commandExecution/requestApproval
// {itemId, threadId, turnId, reason?, command, cwd} and
// item/fileChange/requestApproval {itemId, threadId, turnId, reason?},
// answered {decision}). The approvalPolicy/sandbox values per mode, the
// text_elements field of a text input and the capabilities of initialize
// are ama's (src/drivers/native/codex-normalize.ts, codex-app-server.ts);
// not verified against a real CLI here (it cannot log in on these
// machines).

// codexPolicy is the approvalPolicy and sandbox of an ama mode (never
// danger-full-access; unattended: never ask).
func codexPolicy(mode string, unattended bool) (approval, sandbox string) {
	switch mode {
	case "plan", "allowlist":
		approval, sandbox = "never", "read-only"
	case "auto-edit":
		approval, sandbox = "untrusted", "workspace-write"
	case "auto":
		approval, sandbox = "on-request", "workspace-write"
	case "full-auto":
		approval, sandbox = "never", "workspace-write"
	default:
		approval, sandbox = "on-request", "read-only"
	}
	if unattended {
		approval = "never"
	}
	return approval, sandbox
}

type codexTokens struct {
	TotalTokens       int `json:"totalTokens"`
	InputTokens       int `json:"inputTokens"`
	CachedInputTokens int `json:"cachedInputTokens"`
	OutputTokens      int `json:"outputTokens"`
}

type codexDriver struct {
	run  *extRun
	c    candidate
	conn *codexrpc.Conn

	mu          sync.Mutex
	threadID    string
	turnID      string
	running     bool
	interrupt   bool // cancel asked before the turn id was known
	turnDone    chan codexTurn
	messages    map[string]string // agentMessage items of the turn
	order       []string
	itemPaths   map[string][]string // fileChange paths (approvals name the item only)
	total, base *codexTokens
}

type codexTurn struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (d *codexDriver) argv(*extOpen) []string { return nil }

func (d *codexDriver) attach(stdin io.WriteCloser, stdout io.Reader) {
	d.conn = codexrpc.New(stdout, stdin, d)
}

func (d *codexDriver) open(ctx context.Context, o *extOpen) (string, error) {
	if err := d.conn.Call(ctx, "initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "ama", "title": "ama", "version": "ama-rpc"},
		"capabilities": map[string]any{"experimentalApi": false, "requestAttestation": false}}, nil); err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	if err := d.conn.Notify("initialized", nil); err != nil {
		return "", err
	}
	approval, sandbox := codexPolicy(o.mode, o.unattended)
	params := map[string]any{"cwd": o.cwd, "approvalPolicy": approval, "sandbox": sandbox}
	if o.model != "" {
		params["model"] = o.model
	}
	var res struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if o.resume != "" {
		rp := map[string]any{"threadId": o.resume, "excludeTurns": true}
		for k, v := range params {
			rp[k] = v
		}
		err := d.conn.Call(ctx, "thread/resume", rp, &res)
		var rpcErr *codexrpc.Error
		switch {
		case err == nil:
			if res.Thread.ID == "" {
				res.Thread.ID = o.resume
			}
			d.setThread(res.Thread.ID)
			return res.Thread.ID, nil
		case !errors.As(err, &rpcErr) || ctx.Err() != nil:
			return "", fmt.Errorf("thread/resume: %w", err)
		}
		d.run.notice(fmt.Sprintf("codex has no thread %s; a new one was started", o.resume))
	}
	if err := d.conn.Call(ctx, "thread/start", params, &res); err != nil {
		return "", fmt.Errorf("thread/start: %w", err)
	}
	if res.Thread.ID == "" {
		return "", fmt.Errorf("thread/start returned no thread id")
	}
	d.setThread(res.Thread.ID)
	return res.Thread.ID, nil
}

func (d *codexDriver) setThread(id string) {
	d.mu.Lock()
	d.threadID = id
	d.mu.Unlock()
}

func (d *codexDriver) prompt(text string) (string, error) {
	done := make(chan codexTurn, 1)
	d.mu.Lock()
	d.turnDone, d.running, d.turnID, d.interrupt = done, true, "", false
	d.messages, d.order = map[string]string{}, nil
	d.base = d.total
	tid := d.threadID
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.running, d.turnDone = false, nil
		d.mu.Unlock()
	}()
	var res struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	if err := d.conn.Call(context.Background(), "turn/start", map[string]any{"threadId": tid,
		"input": []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}}, &res); err != nil {
		return "", fmt.Errorf("turn/start: %w", err)
	}
	d.setTurn(res.Turn.ID)
	var turn codexTurn
	select {
	case turn = <-done:
	case <-d.conn.Done():
		return "", fmt.Errorf("the codex process exited during the turn")
	}
	d.mu.Lock()
	end, start := d.total, d.base
	var last string
	if n := len(d.order); n > 0 {
		last = d.messages[d.order[n-1]]
	}
	d.mu.Unlock()
	if end != nil { // totals of the thread: this turn is the difference
		var s codexTokens
		if start != nil {
			s = *start
		}
		d.run.setUsage(llm.Usage{Input: end.InputTokens - s.InputTokens, Output: end.OutputTokens - s.OutputTokens,
			CacheRead: end.CachedInputTokens - s.CachedInputTokens}, nil)
	}
	if last != "" {
		d.run.finalText(last)
	}
	switch turn.Status {
	case "interrupted":
		return "cancelled", nil
	case "failed":
		msg := "unknown error"
		if turn.Error != nil {
			msg = turn.Error.Message
		}
		return "", fmt.Errorf("the codex turn failed: %s", cut(oneLine(msg), 300))
	}
	return "end_turn", nil
}

// setTurn records the running turn's id (it may come from turn/started
// or a request before the turn/start response); a cancel that came
// earlier is sent now.
func (d *codexDriver) setTurn(id string) {
	if id == "" {
		return
	}
	d.mu.Lock()
	if !d.running || d.turnID != "" {
		d.mu.Unlock()
		return
	}
	d.turnID = id
	pending := d.interrupt
	tid := d.threadID
	d.mu.Unlock()
	if pending {
		d.sendInterrupt(tid, id)
	}
}

func (d *codexDriver) sendInterrupt(threadID, turnID string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		defer cancel()
		_ = d.conn.Call(ctx, "turn/interrupt", map[string]any{"threadId": threadID, "turnId": turnID}, nil)
	}()
}

func (d *codexDriver) cancel() {
	d.mu.Lock()
	d.interrupt = true
	tid, turn := d.threadID, d.turnID
	d.mu.Unlock()
	if turn != "" {
		d.sendInterrupt(tid, turn)
	}
}

func (d *codexDriver) close() {}

// Notification implements codexrpc.Handler.
func (d *codexDriver) Notification(method string, params json.RawMessage) {
	switch method {
	case "thread/tokenUsage/updated":
		var p struct {
			TokenUsage struct {
				Total *codexTokens `json:"total"`
			} `json:"tokenUsage"`
		}
		if json.Unmarshal(params, &p) == nil && p.TokenUsage.Total != nil {
			d.mu.Lock()
			d.total = p.TokenUsage.Total
			d.mu.Unlock()
		}
	case "turn/started":
		var p struct {
			Turn codexTurn `json:"turn"`
		}
		if json.Unmarshal(params, &p) == nil {
			d.setTurn(p.Turn.ID)
		}
	case "turn/completed":
		var p struct {
			Turn codexTurn `json:"turn"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		d.mu.Lock()
		ch := d.turnDone
		mine := d.turnID == "" || p.Turn.ID == d.turnID
		if mine {
			d.turnDone = nil
		}
		d.mu.Unlock()
		if ch != nil && mine {
			ch <- p.Turn
		}
	case "item/agentMessage/delta":
		var p struct {
			ItemID string `json:"itemId"`
			Delta  string `json:"delta"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		d.mu.Lock()
		if _, ok := d.messages[p.ItemID]; !ok {
			d.order = append(d.order, p.ItemID)
		}
		d.messages[p.ItemID] += p.Delta
		d.mu.Unlock()
		d.run.textDelta(p.Delta)
	case "item/started", "item/completed":
		var p struct {
			Item json.RawMessage `json:"item"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		d.item(p.Item, method == "item/started")
	}
}

// item maps a thread item: the final text of an agent message, or a tool
// call (command, file change, MCP/dynamic tool, web search).
func (d *codexDriver) item(raw json.RawMessage, started bool) {
	var it struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Status  string `json:"status"`
		Text    string `json:"text"`
		Command string `json:"command"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
		Server string `json:"server"`
		Tool   string `json:"tool"`
		Query  string `json:"query"`
	}
	if json.Unmarshal(raw, &it) != nil || it.ID == "" {
		return
	}
	var title, kind string
	var paths []string
	switch it.Type {
	case "agentMessage":
		if !started {
			d.mu.Lock()
			if _, ok := d.messages[it.ID]; !ok {
				d.order = append(d.order, it.ID)
			}
			d.messages[it.ID] = it.Text
			d.mu.Unlock()
		}
		return
	case "commandExecution":
		kind, title = "execute", "$ "+cut(oneLine(it.Command), 100)
	case "fileChange":
		kind = "edit"
		for _, c := range it.Changes {
			if c.Path != "" {
				paths = append(paths, c.Path)
			}
		}
		title = "edit"
		if len(paths) > 0 {
			title = "edit " + strings.Join(paths, ", ")
		}
		d.mu.Lock()
		if d.itemPaths == nil {
			d.itemPaths = map[string][]string{}
		}
		d.itemPaths[it.ID] = paths
		d.mu.Unlock()
	case "mcpToolCall":
		kind, title = "other", it.Server+"."+it.Tool
	case "dynamicToolCall":
		kind, title = "other", it.Tool
	case "webSearch":
		kind, title = "fetch", "search "+cut(oneLine(it.Query), 80)
	default:
		return
	}
	status := "in_progress"
	if !started {
		status = "completed"
		if it.Status == "failed" || it.Status == "declined" {
			status = "failed"
		}
	}
	d.run.toolUpdate(it.ID, &title, &kind, &status, paths)
}

// codexDecisions are the options of command and file approvals.
var codexDecisions = []option{{"accept", "allow_once"}, {"acceptForSession", "allow_always"}, {"decline", "reject_once"}}

// Request implements codexrpc.Handler: approvals go to the parent; a
// decline or a cancel keeps the action from running.
func (d *codexDriver) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p struct {
		ItemID  string `json:"itemId"`
		TurnID  string `json:"turnId"`
		Reason  string `json:"reason"`
		Command string `json:"command"`
		Cwd     string `json:"cwd"`
	}
	_ = json.Unmarshal(params, &p)
	d.setTurn(p.TurnID)
	decision := func(kind string) any {
		id := optionID(codexDecisions, kind)
		if id == "" {
			id = "cancel"
		}
		return map[string]any{"decision": id}
	}
	switch method {
	case "item/commandExecution/requestApproval":
		summary := p.Command
		if p.Reason != "" {
			summary += " — " + p.Reason
		}
		view := toolView{Title: "$ " + cut(oneLine(p.Command), 100), Kind: "execute", InputSummary: oneLine(summary)}
		if p.Cwd != "" {
			view.Locations = []string{p.Cwd}
		}
		return decision(d.run.ask(ctx, view, codexDecisions)), nil
	case "item/fileChange/requestApproval":
		d.mu.Lock()
		paths := d.itemPaths[p.ItemID]
		d.mu.Unlock()
		view := toolView{Title: "edit files", Kind: "edit", Locations: paths, InputSummary: oneLine(p.Reason)}
		if len(paths) > 0 {
			view.Title = "edit " + strings.Join(paths, ", ")
		}
		return decision(d.run.ask(ctx, view, codexDecisions)), nil
	case "item/permissions/requestApproval":
		var q struct {
			Permissions map[string]json.RawMessage `json:"permissions"`
		}
		_ = json.Unmarshal(params, &q)
		granted := map[string]json.RawMessage{}
		for k, v := range q.Permissions {
			if string(v) != "null" {
				granted[k] = v
			}
		}
		asked, _ := json.Marshal(granted)
		opts := []option{{"turn", "allow_once"}, {"session", "allow_always"}, {"deny", "reject_once"}}
		view := toolView{Title: "request additional permissions", Kind: "other", InputSummary: oneLine(string(asked) + " " + p.Reason)}
		switch scope := optionID(opts, d.run.ask(ctx, view, opts)); scope {
		case "turn", "session":
			return map[string]any{"permissions": granted, "scope": scope}, nil
		}
		return map[string]any{"permissions": map[string]any{}, "scope": "turn"}, nil
	case "item/tool/requestUserInput", "mcpServer/elicitation/request":
		d.run.notice("codex asked for user input (" + method + "); ama does not answer for the user")
		return nil, &codexrpc.Error{Code: -32601, Message: "interactive input cannot be relayed to the user"}
	}
	return nil, &codexrpc.Error{Code: -32601, Message: "method not supported: " + method}
}

package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/armadra/ama-rpc/agents/acpclient"
)

// This file is the ACP client driver (agents.md §8.3, clients.md): an agent
// that speaks the Agent Client Protocol on stdio, itself (acp:<program>,
// gemini, …) or through an installed adapter (claude-agent-acp,
// codex-acp). initialize, session/new or session/resume|load, the mode via
// session/set_mode, then session/prompt per turn; session/update becomes
// the run's text and tool events, session/request_permission goes to the
// parent's approvals.

// acpDriver is one ACP session.
type acpDriver struct {
	run  *extRun
	c    candidate
	conn *acpclient.Client

	mu        sync.Mutex
	sessionID string
	caps      acpCaps
}

type acpCaps struct {
	LoadSession         bool `json:"loadSession"`
	SessionCapabilities struct {
		Resume *struct{} `json:"resume"`
		Close  *struct{} `json:"close"`
	} `json:"sessionCapabilities"`
}

func (d *acpDriver) argv(*extOpen) []string { return nil }

func (d *acpDriver) attach(stdin io.WriteCloser, stdout io.Reader) {
	d.conn = acpclient.New(stdout, stdin, d)
}

type acpModes struct {
	AvailableModes []struct {
		ID string `json:"id"`
	} `json:"availableModes"`
}

func (d *acpDriver) open(ctx context.Context, o *extOpen) (string, error) {
	var initRes struct {
		ProtocolVersion   int     `json:"protocolVersion"`
		AgentCapabilities acpCaps `json:"agentCapabilities"`
	}
	if err := d.conn.Call(ctx, "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false}}, &initRes); err != nil {
		return "", d.wrap(err, "initialize")
	}
	d.caps = initRes.AgentCapabilities
	var res struct {
		SessionID string    `json:"sessionId"`
		Modes     *acpModes `json:"modes"`
	}
	opened := false
	if o.resume != "" {
		params := map[string]any{"sessionId": o.resume, "cwd": o.cwd, "mcpServers": []any{}}
		switch {
		case d.caps.SessionCapabilities.Resume != nil:
			opened = d.conn.Call(ctx, "session/resume", params, &res) == nil
		case d.caps.LoadSession:
			opened = d.conn.Call(ctx, "session/load", params, &res) == nil
		}
		if opened && res.SessionID == "" {
			res.SessionID = o.resume
		}
		if !opened {
			d.run.notice(fmt.Sprintf("%s could not continue session %s; a new one was started", o.agent, o.resume))
		}
	}
	if !opened {
		if err := d.conn.Call(ctx, "session/new", map[string]any{"cwd": o.cwd, "mcpServers": []any{}}, &res); err != nil {
			return "", d.wrap(err, "session/new")
		}
	}
	d.mu.Lock()
	d.sessionID = res.SessionID
	d.mu.Unlock()
	want := o.mode
	if m, ok := d.c.modes[o.mode]; ok {
		want = m
	}
	found := false
	if res.Modes != nil {
		for _, m := range res.Modes.AvailableModes {
			if m.ID == want {
				found = true
				if err := d.conn.Call(ctx, "session/set_mode", map[string]any{"sessionId": res.SessionID, "modeId": want}, nil); err != nil {
					found = false
				}
				break
			}
		}
	}
	switch {
	case !found && o.mode == "plan":
		// A read-only task never runs in a mode that may write.
		return "", fmt.Errorf("%s offers no read-only mode (%s); a plan-mode task does not start on it", o.agent, want)
	case !found:
		d.run.notice(fmt.Sprintf("%s has no mode %s; it runs in its own default mode", o.agent, want))
	}
	return res.SessionID, nil
}

func (d *acpDriver) wrap(err error, step string) error {
	if acpclient.AuthRequired(err) {
		return fmt.Errorf("%w (%s): %v", errAuthRequired, step, err)
	}
	return fmt.Errorf("%s: %w", step, err)
}

func (d *acpDriver) prompt(text string) (string, error) {
	var res struct {
		StopReason string `json:"stopReason"`
	}
	d.mu.Lock()
	sid := d.sessionID
	d.mu.Unlock()
	err := d.conn.Call(context.Background(), "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "text", "text": text}}}, &res)
	if err != nil {
		return "", err
	}
	return res.StopReason, nil
}

func (d *acpDriver) cancel() {
	d.mu.Lock()
	sid := d.sessionID
	d.mu.Unlock()
	_ = d.conn.Notify(context.Background(), "session/cancel", map[string]any{"sessionId": sid})
}

func (d *acpDriver) close() {
	if d.conn == nil {
		return
	}
	d.mu.Lock()
	sid := d.sessionID
	d.mu.Unlock()
	if d.caps.SessionCapabilities.Close != nil && sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		_ = d.conn.Call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)
		cancel()
	}
	_ = d.conn.Close()
}

// acpToolUpdate is the tool part of a session/update.
type acpToolUpdate struct {
	ToolCallID string          `json:"toolCallId"`
	Title      *string         `json:"title"`
	Kind       *string         `json:"kind"`
	Status     *string         `json:"status"`
	RawInput   json.RawMessage `json:"rawInput"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
}

func (u *acpToolUpdate) paths() []string {
	out := make([]string, 0, len(u.Locations))
	for _, l := range u.Locations {
		out = append(out, l.Path)
	}
	return out
}

// Update implements acpclient.Handler: a session/update of the agent.
func (d *acpDriver) Update(raw json.RawMessage) {
	var head struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Content       json.RawMessage `json:"content"` // a block, or a list for tool updates
	}
	if json.Unmarshal(raw, &head) != nil {
		return
	}
	switch head.SessionUpdate {
	case "agent_message_chunk":
		var block struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(head.Content, &block) == nil && block.Type == "text" {
			d.run.textDelta(block.Text)
		}
	case "tool_call", "tool_call_update":
		var u acpToolUpdate
		if json.Unmarshal(raw, &u) == nil {
			d.run.toolUpdate(u.ToolCallID, u.Title, u.Kind, u.Status, u.paths())
		}
	case "usage_update":
		var u struct {
			Used int `json:"used"`
			Size int `json:"size"`
			Cost *struct {
				Amount   float64 `json:"amount"`
				Currency string  `json:"currency"`
			} `json:"cost"`
		}
		if json.Unmarshal(raw, &u) == nil && u.Cost != nil && u.Cost.Currency == "USD" {
			d.run.mu.Lock()
			usage := d.run.usage
			d.run.mu.Unlock()
			cost := u.Cost.Amount
			d.run.setUsage(usage, &cost)
		}
	}
}

// RequestPermission implements acpclient.Handler: the agent's own approval
// request goes to the parent's approvals; the answer is one of the
// agent's options, or cancelled.
func (d *acpDriver) RequestPermission(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ToolCall acpToolUpdate `json:"toolCall"`
		Options  []option      `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	title, kind, _, _ := d.run.tool(p.ToolCall.ToolCallID)
	if kind == "" {
		kind = "other"
	}
	if p.ToolCall.Title != nil {
		title = *p.ToolCall.Title
	}
	if p.ToolCall.Kind != nil {
		kind = *p.ToolCall.Kind
	}
	view := toolView{Title: title, Kind: kind, Locations: p.ToolCall.paths()}
	if len(view.Locations) == 0 {
		view.Locations = nil
	}
	if len(p.ToolCall.RawInput) > 0 && string(p.ToolCall.RawInput) != "null" {
		view.InputSummary = compactJSON(p.ToolCall.RawInput)
	}
	if id := optionID(p.Options, d.run.ask(ctx, view, p.Options)); id != "" {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": id}}, nil
	}
	return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
}

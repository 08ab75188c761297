package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/armadra/ama-rpc/agents/acpclient"
	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

// This file is the ACP client driver: an external agent `acp:<program>`
// runs as a child process that speaks the Agent Client Protocol on stdio
// (agents.md §8.2–8.3). One process per task run: spawn, initialize,
// session/new, session/set_mode, session/prompt; session/update becomes
// subagent_update, session/request_permission goes to the parent's
// approvals as toolName "agent:<id>".

// acpArgs are the arguments of known ACP programs (others get none).
var acpArgs = map[string][]string{
	"ama":          {"--mode", "acp"},
	"gemini":       {"--acp"},
	"qwen":         {"--acp"},
	"copilot":      {"--acp", "--stdio"},
	"opencode":     {"acp"},
	"cursor-agent": {"acp"},
}

// cancelGrace is how long a cancelled turn may take before the process is
// killed; closeGrace bounds the exit after stdin closes.
const (
	cancelGrace = 15 * time.Second
	closeGrace  = 2 * time.Second
)

// The external agents with native drivers (agents.md §8.4, §8.5).
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// IsExternal reports whether agent names an external agent: acp:<program>
// or an id of the driver table (claude, codex, gemini, …; not bare ama).
func IsExternal(agent string) bool { return candidatesFor(agent) != nil }

// noteLabel is the label in the first-run note ("the ACP agent x").
func noteLabel(agent string) string {
	if strings.HasPrefix(agent, "acp:") {
		return "the " + agentLabel(agent)
	}
	return agentLabel(agent)
}

// externalType is the catalog entry of acp:<program>.
func externalType(agent string) *Type {
	return &Type{Name: agent, Runner: agent, Source: SourceBuiltin, MaxTurns: DefaultMaxTurns,
		Description: "External " + agentLabel(agent) + " CLI: it works with its own login, model and permission settings; put the full instructions in the prompt."}
}

// childEnv is the environment of an external agent: the provider keys,
// base URLs and ama/Armadra settings of this process are removed.
func childEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasSuffix(k, "_API_KEY"), strings.HasSuffix(k, "_BASE_URL"), strings.HasPrefix(k, "AMA_"),
			k == "ANTHROPIC_AUTH_TOKEN",
			strings.HasPrefix(k, "ARMADRA_") && !strings.HasPrefix(k, "ARMADRA_ASKPASS_"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

// acpTool is one tool call the external agent reported.
type acpTool struct {
	id, title, kind, status string
	locations               []string
	reported                bool
}

// acpRun is the client side of one external turn.
type acpRun struct {
	t         *Task
	agent     string
	conn      *acpclient.Client
	sessionID string

	mu    sync.Mutex
	tools []*acpTool
	byID  map[string]*acpTool
	text  strings.Builder
}

// runExternal runs the task's prompt on an ACP agent.
func (t *Task) runExternal() Result {
	r := t.reg
	fail := func(format string, args ...any) Result {
		return Result{Status: StatusFailed, IsError: true, Text: fmt.Sprintf(format, args...), StopReason: llm.StopError}
	}
	agent := t.typ.Name
	if r.cfg.HostRunners != nil { // hosted mode: ama spawns no external CLI itself (host-api.md §4.12)
		return fail("The external agent %s is not available: with a host adapter active, external agents are provided by the host, and it provides no runner %s.", agent, agent)
	}
	if !r.cfg.Trusted {
		return fail("agent_untrusted: %s runs only in a trusted project (start ama-rpc with --trust).", agent)
	}
	mode, refused := r.confirmExternal(t, agent)
	if refused != "" {
		return fail("%s", refused)
	}
	program := strings.TrimPrefix(agent, "acp:")
	path, err := exec.LookPath(program)
	if err != nil {
		return fail("The external agent %s is not available: %s was not found on PATH.", agent, program)
	}
	cmd := exec.Command(path, acpArgs[program]...)
	cmd.Dir, cmd.Env = t.cwd, childEnv(os.Environ())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail("The external agent %s could not start: %v", agent, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail("The external agent %s could not start: %v", agent, err)
	}
	if err := cmd.Start(); err != nil {
		return fail("The external agent %s could not start: %v", agent, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { // close: stdin first, then the process after a grace
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(closeGrace):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	run := &acpRun{t: t, agent: agent, byID: map[string]*acpTool{}}
	run.conn = acpclient.New(stdout, stdin, run)
	defer run.conn.Close()

	ctx := t.ctx
	call := func(method string, params, result any) error {
		return run.conn.Call(ctx, method, params, result)
	}
	var initRes struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	if err := call("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false}}, &initRes); err != nil {
		return run.failed(err, "initialize")
	}
	var newRes struct {
		SessionID string `json:"sessionId"`
		Modes     *struct {
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	if err := call("session/new", map[string]any{"cwd": t.cwd, "mcpServers": []any{}}, &newRes); err != nil {
		return run.failed(err, "session/new")
	}
	run.sessionID = newRes.SessionID
	if newRes.Modes != nil {
		for _, m := range newRes.Modes.AvailableModes {
			if m.ID == mode {
				_ = call("session/set_mode", map[string]any{"sessionId": run.sessionID, "modeId": mode}, nil)
				break
			}
		}
	}
	r.mu.Lock()
	t.info.SessionRef = &SessionRef{Runner: agent, SessionID: run.sessionID}
	info, bg, parentCall := t.info, t.background, t.req.ParentToolCallID
	r.mu.Unlock()
	r.parent.Emit(events.SubagentStart{TaskID: info.TaskID, ParentToolCallID: parentCall, Agent: info.Agent, Runner: info.Runner,
		Description: info.Description, Background: bg, Cwd: t.cwd})
	// External runners report the turn when it starts.
	t.smu.Lock()
	t.turns++
	turn := t.turns
	t.smu.Unlock()
	r.mu.Lock()
	t.info.Turns = &turn
	r.mu.Unlock()
	r.parent.Emit(events.SubagentUpdate{TaskID: info.TaskID, Kind: "turn", Turn: turn})

	var promptRes struct {
		StopReason string `json:"stopReason"`
	}
	done := make(chan error, 1)
	go func() {
		done <- run.conn.Call(context.Background(), "session/prompt", map[string]any{"sessionId": run.sessionID,
			"prompt": []any{map[string]any{"type": "text", "text": t.req.Prompt}}}, &promptRes)
	}()
	var perr error
	select {
	case perr = <-done:
	case <-ctx.Done():
		_ = run.conn.Notify(context.Background(), "session/cancel", map[string]any{"sessionId": run.sessionID})
		select {
		case perr = <-done:
		case <-time.After(cancelGrace):
			_ = cmd.Process.Kill()
		}
		promptRes.StopReason = "cancelled"
	}
	t.smu.Lock()
	t.flushLocked(r.cfg.Now())
	t.smu.Unlock()
	if perr != nil && ctx.Err() == nil {
		return run.failed(perr, "session/prompt")
	}
	res := Result{Text: run.report(), StopReason: promptRes.StopReason, Usage: llm.Usage{}}
	switch promptRes.StopReason {
	case "end_turn", "max_tokens":
		res.Status = StatusCompleted
	case "max_turn_requests":
		res.Status = StatusMaxTurns
	case "cancelled":
		res.Status = StatusFailed
		if ctx.Err() != nil {
			res.Status = StatusAborted
		}
	default:
		res.Status, res.IsError = StatusFailed, true
	}
	r.mu.Lock()
	u := res.Usage
	t.info.Usage = &u
	r.mu.Unlock()
	return res
}

// failed is the result of a protocol failure (-32000 on open: the agent
// needs a login).
func (run *acpRun) failed(err error, step string) Result {
	text := fmt.Sprintf("The external agent %s failed (%s): %v", run.agent, step, err)
	if acpclient.AuthRequired(err) {
		text = fmt.Sprintf("agent_auth_required: %s needs a login; sign in with its own CLI first.", run.agent)
	}
	return Result{Status: StatusFailed, IsError: true, Text: text, StopReason: llm.StopError}
}

// report is the task's result text: the agent's reply, the tool calls and
// the files changed (agents.md §8.2).
func (run *acpRun) report() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	parts := []string{}
	if s := strings.TrimSpace(run.text.String()); s != "" {
		parts = append(parts, s)
	}
	if len(run.tools) > 0 {
		var b strings.Builder
		b.WriteString("Tool calls:")
		for i, tc := range run.tools {
			if i == 19 && len(run.tools) > 20 {
				fmt.Fprintf(&b, "\n- … %d more", len(run.tools)-19)
				break
			}
			mark := "…"
			switch tc.status {
			case "completed":
				mark = "✓"
			case "failed":
				mark = "✗"
			}
			fmt.Fprintf(&b, "\n- %s %s %s", mark, tc.kind, tc.title)
		}
		parts = append(parts, b.String())
	}
	var changed []string
	for _, tc := range run.tools {
		if tc.status == "completed" && (tc.kind == "edit" || tc.kind == "delete" || tc.kind == "move") {
			changed = append(changed, tc.locations...)
		}
	}
	if len(changed) > 0 {
		parts = append(parts, "Files changed:\n- "+strings.Join(changed, "\n- "))
	}
	return strings.Join(parts, "\n\n")
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

// Update implements acpclient.Handler: a session/update of the agent.
func (run *acpRun) Update(raw json.RawMessage) {
	t, r := run.t, run.t.reg
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
		if json.Unmarshal(head.Content, &block) != nil || block.Type != "text" || block.Text == "" {
			return
		}
		head := struct{ Content struct{ Text string } }{}
		head.Content.Text = block.Text
		run.mu.Lock()
		run.text.WriteString(head.Content.Text)
		run.mu.Unlock()
		t.smu.Lock()
		t.text.WriteString(head.Content.Text)
		t.pending.WriteString(head.Content.Text)
		if now := r.cfg.Now(); !t.flushed || now.Sub(t.lastFlush) >= r.cfg.TextThrottle {
			t.flushLocked(now)
		}
		t.smu.Unlock()
	case "tool_call", "tool_call_update":
		var u acpToolUpdate
		if json.Unmarshal(raw, &u) != nil || u.ToolCallID == "" {
			return
		}
		run.mu.Lock()
		tc := run.byID[u.ToolCallID]
		if tc == nil {
			tc = &acpTool{id: u.ToolCallID, kind: "other", status: "pending"}
			run.byID[u.ToolCallID] = tc
			run.tools = append(run.tools, tc)
		}
		if u.Title != nil {
			tc.title = oneLine(*u.Title)
		}
		if u.Kind != nil {
			tc.kind = *u.Kind
		}
		if u.Status != nil {
			tc.status = *u.Status
		}
		for _, l := range u.Locations {
			tc.locations = append(tc.locations, l.Path)
		}
		report := !tc.reported && tc.status != "pending"
		if report {
			tc.reported = true
		}
		title := tc.title
		run.mu.Unlock()
		if report {
			run.reportTool(title)
		}
	}
}

// reportTool tells the parent that a tool started.
func (run *acpRun) reportTool(title string) {
	t, r := run.t, run.t.reg
	r.mu.Lock()
	progress, id := t.progress, t.info.TaskID
	r.mu.Unlock()
	if progress != nil {
		progress("[task] " + title)
	}
	t.smu.Lock()
	turn := t.turns
	t.smu.Unlock()
	r.parent.Emit(events.SubagentUpdate{TaskID: id, Kind: "tool", ToolName: title, Turn: turn})
}

// permission passes the agent's own approval request to the parent's
// approvals (toolName agent:<id>, context.origin).
func (run *acpRun) RequestPermission(ctx context.Context, params json.RawMessage) (any, error) {
	t, r := run.t, run.t.reg
	var p struct {
		SessionID string        `json:"sessionId"`
		ToolCall  acpToolUpdate `json:"toolCall"`
		Options   []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	run.mu.Lock()
	tc := run.byID[p.ToolCall.ToolCallID]
	title, kind := "", "other"
	if tc != nil {
		title, kind = tc.title, tc.kind
	}
	run.mu.Unlock()
	if p.ToolCall.Title != nil {
		title = oneLine(*p.ToolCall.Title)
	}
	if p.ToolCall.Kind != nil {
		kind = *p.ToolCall.Kind
	}
	type toolView struct {
		Title        string   `json:"title"`
		Kind         string   `json:"kind"`
		Locations    []string `json:"locations,omitempty"`
		InputSummary string   `json:"inputSummary,omitempty"`
	}
	view := toolView{Title: title, Kind: kind}
	for _, l := range p.ToolCall.Locations {
		view.Locations = append(view.Locations, l.Path)
	}
	if len(p.ToolCall.RawInput) > 0 && string(p.ToolCall.RawInput) != "null" {
		view.InputSummary = cut(compactJSON(p.ToolCall.RawInput), 300)
	}
	type option struct {
		OptionID string `json:"optionId"`
		Kind     string `json:"kind"`
	}
	opts := make([]option, 0, len(p.Options))
	for _, o := range p.Options {
		opts = append(opts, option(o))
	}
	r.mu.Lock()
	id := t.info.TaskID
	r.mu.Unlock()
	input, _ := json.Marshal(view)
	pr := &events.PermissionRequest{RequestID: r.cfg.newID(), ToolName: "agent:" + run.agent, Input: input, Reason: "mode",
		TimeoutMs: r.cfg.approvalTimeout().Milliseconds(),
		Context: &events.PermissionCtx{Depth: 1, TaskID: id, Origin: struct {
			Agent     string   `json:"agent"`
			SessionID string   `json:"sessionId"`
			ToolCall  toolView `json:"toolCall"`
			Options   []option `json:"options"`
		}{run.agent, run.sessionID, view, opts}}}
	decision := r.ask(t.ctx, pr)
	want := map[string]string{"allow": "allow_once", "allow_session": "allow_always", "deny": "reject_once"}[decision]
	if decision == "allow_session" && !hasOption(p.Options, "allow_always") {
		want = "allow_once"
	}
	for _, o := range p.Options {
		if o.Kind == want {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}, nil
		}
	}
	return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
}

func hasOption(opts []struct {
	OptionID string `json:"optionId"`
	Kind     string `json:"kind"`
}, kind string) bool {
	for _, o := range opts {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// confirmation is one first-run confirmation of an external agent;
// concurrent first runs of the agent wait for the same one.
type confirmation struct {
	done chan struct{}
	ok   bool
}

// confirmExternal decides whether an external agent may run (agents.md §7
// first-run confirmation): a deny rule matching task(<id>) refuses; an
// allow rule task or task(<id>), or full-auto, allows silently; allowlist
// mode or nobody to answer refuses; otherwise the user is asked once per
// agent per session. It returns the mode the agent runs in, and the
// refusal text when it may not run.
func (r *Registry) confirmExternal(t *Task, agent string) (string, string) {
	po, err := r.parent.Settings()
	if err != nil {
		return "", "permission_denied: " + err.Error()
	}
	mode := po.PermissionMode
	if mode == "" {
		mode = "default"
	}
	if mode == "allowlist" {
		mode = "plan"
	}
	var pol approvals.Policy
	if r.cfg.Deps != nil && r.cfg.Deps.Policy != nil {
		pol = *r.cfg.Deps.Policy
	}
	if rule := approvals.AgentRule(pol.Deny, agent, true); rule != nil {
		return mode, fmt.Sprintf("permission_denied: running %s is denied by the rule %s.", agent, rule)
	}
	if approvals.AgentRule(pol.Allow, agent, false) != nil || po.PermissionMode == "full-auto" {
		return mode, ""
	}
	notAsked := fmt.Sprintf("permission_denied: running %s needs approval and nobody can give it here. To allow it without asking, add the rule task(%s).", agent, agent)
	if po.PermissionMode == "allowlist" || pol.Unattended {
		return mode, notAsked
	}
	r.mu.Lock()
	if r.confirms == nil {
		r.confirms = map[string]*confirmation{}
	}
	c := r.confirms[agent]
	owner := c == nil
	if owner {
		c = &confirmation{done: make(chan struct{})}
		r.confirms[agent] = c
	}
	id := t.info.TaskID
	r.mu.Unlock()
	if !owner {
		select {
		case <-c.done:
		case <-t.ctx.Done():
			return mode, abortedText
		}
		if c.ok {
			return mode, ""
		}
		return mode, fmt.Sprintf("permission_denied: running %s was not approved. To allow it without asking, add the rule task(%s).", agent, agent)
	}
	input, _ := json.Marshal(struct {
		Agent string `json:"agent"`
		Mode  string `json:"mode"`
		Note  string `json:"note"`
	}{agent, mode, fmt.Sprintf("Starts %s, which works with its own login and settings (mode %s).", noteLabel(agent), mode)})
	pr := &events.PermissionRequest{RequestID: r.cfg.newID(), ToolName: ToolTask, Input: input, Reason: "mode",
		TimeoutMs: r.cfg.approvalTimeout().Milliseconds(), Context: &events.PermissionCtx{TaskID: id}}
	c.ok = r.ask(t.ctx, pr) != "deny"
	r.mu.Lock()
	if !c.ok { // a refusal is not remembered: the next first run asks again
		delete(r.confirms, agent)
	}
	r.mu.Unlock()
	close(c.done)
	if !c.ok {
		return mode, fmt.Sprintf("permission_denied: running %s was not approved. To allow it without asking, add the rule task(%s).", agent, agent)
	}
	return mode, ""
}

// ask publishes an approval request on the parent and waits for the
// parent's approver.
func (r *Registry) ask(ctx context.Context, pr *events.PermissionRequest) string {
	r.parent.Emit(*pr)
	decision := "deny"
	if ap := r.parent.Approver(); ap != nil && ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, r.cfg.approvalTimeout())
		decision = ap.Ask(actx, pr)
		cancel()
	}
	if ctx.Err() != nil || (decision != "allow" && decision != "allow_session") {
		decision = "deny"
	}
	r.parent.Emit(events.PermissionResolved{RequestID: pr.RequestID, Decision: decision})
	return decision
}

func (c Config) approvalTimeout() time.Duration {
	if c.Deps != nil && c.Deps.Settings.ApprovalTimeout > 0 {
		return c.Deps.Settings.ApprovalTimeout
	}
	return 10 * time.Minute
}

func (c Config) newID() string {
	if c.Deps != nil && c.Deps.NewUUID != nil {
		return c.Deps.NewUUID()
	}
	return uuid.NewString()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/llm"
)

// This file runs external agents (agents.md §8): the checks before a start
// (host, trust, first-run confirmation), the choice of a driver from the
// candidate chain, the child process, and what every driver reports
// through extRun: text, tool calls, approvals, usage. One process per task
// run. The drivers (acp.go, claude.go, codex.go) speak the protocols.

// The external agents with native drivers (agents.md §8.4, §8.5).
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// cancelGrace is how long a cancelled turn may take before the process is
// killed; closeGrace bounds the exit after the session is closed.
const (
	cancelGrace = 15 * time.Second
	closeGrace  = 2 * time.Second
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

// externalType is the catalog entry of an external agent.
func externalType(agent string) *Type {
	return &Type{Name: agent, Runner: agent, Source: SourceBuiltin, MaxTurns: DefaultMaxTurns,
		Description: "External " + agentLabel(agent) + " CLI: it works with its own login, model and permission settings; put the full instructions in the prompt."}
}

// ExternalSettings are agents.<id> of an external agent.
type ExternalSettings struct {
	// Model is the agent's model unless the call names one.
	Model string
	// MaxMode caps the mode it runs in ("": the parent's mode).
	MaxMode string
	// Passthrough are environment variables kept although the scrub
	// (internal/childenv, ModelClient) removes them.
	Passthrough []string
	// MaxConcurrent bounds the processes of this agent running at once
	// (agents.<id>.maxConcurrent; 0: no own limit, claude: 2).
	MaxConcurrent int
}

// modeRank orders the modes from the narrowest (allowlist runs as plan).
var modeRank = map[string]int{"plan": 0, "allowlist": 0, "default": 1, "auto-edit": 2, "auto": 3, "full-auto": 4}

// clampMode is the narrower of two modes (an unknown cap: no cap);
// allowlist is shown and run as plan.
func clampMode(mode, maxMode string) string {
	if r, ok := modeRank[maxMode]; ok && r < modeRank[mode] {
		mode = maxMode
	}
	if mode == "allowlist" {
		mode = "plan"
	}
	return mode
}

// spentExternal is what the session's external tasks cost so far.
func (r *Registry) spentExternal() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum float64
	for _, t := range r.tasks {
		if t.info.CostUSD != nil && IsExternal(t.typ.Runner) && t.typ.Source != SourceHost {
			sum += *t.info.CostUSD
		}
	}
	return sum
}

// extOpen is what a driver opens a session with.
type extOpen struct {
	agent, cwd string
	// mode is the ama mode the agent runs in (allowlist already plan).
	mode string
	// model is the requested model ("": the agent's own).
	model string
	// resume is the agent's session id to continue ("": a new session).
	resume     string
	budgetUSD  float64
	unattended bool
}

// extDriver is the protocol side of one external agent session on a
// started process. The runner calls argv, then attach, open, prompt (once
// per turn, with cancel from another goroutine while it runs) and close,
// in that order; prompt returns when the turn ended or the process's
// output closed.
type extDriver interface {
	// argv is the program's arguments for this session.
	argv(o *extOpen) []string
	// attach gives the driver the process's stdin and stdout.
	attach(stdin io.WriteCloser, stdout io.Reader)
	// open does the handshake and opens or resumes the session; it
	// returns the agent's session id.
	open(ctx context.Context, o *extOpen) (string, error)
	// prompt runs one turn and returns the agent's stop reason (end_turn,
	// max_tokens, max_turn_requests, cancelled, refusal).
	prompt(text string) (string, error)
	// cancel asks the running turn to stop.
	cancel()
	// close ends the session at the protocol level (bounded).
	close()
}

// errAuthRequired is a driver's "the agent needs a login" (ACP -32000).
var errAuthRequired = errors.New("authentication required")

// newDriver returns the driver of a candidate.
func newDriver(c candidate, run *extRun) extDriver {
	switch c.kind {
	case kindClaudeStream:
		return &claudeDriver{run: run, c: c}
	case kindCodexApp:
		return &codexDriver{run: run, c: c}
	}
	return &acpDriver{run: run, c: c}
}

// pickCandidate is the first installed candidate that can run mode (a
// plan-only candidate runs only read-only tasks), with its program path.
func pickCandidate(cands []candidate, mode string, lookPath func(string) (string, error)) (candidate, string, bool) {
	for _, c := range cands {
		if c.planOnly && mode != "plan" {
			continue
		}
		if p, err := lookPath(c.program); err == nil {
			return c, p, true
		}
	}
	return candidate{}, "", false
}

// extTool is one tool call the external agent reported.
type extTool struct {
	id, title, kind, status string
	locations               []string
	reported                bool
}

// extRun is one external turn as the drivers report it.
type extRun struct {
	t         *Task
	agent     string
	sessionID string // (mu) once open

	mu      sync.Mutex
	tools   []*extTool
	byID    map[string]*extTool
	text    strings.Builder
	final   string // the agent's own final text ("": the streamed text)
	usage   llm.Usage
	costUSD *float64
}

// toolView is the tool part of an external approval request.
type toolView struct {
	Title        string   `json:"title"`
	Kind         string   `json:"kind"`
	Locations    []string `json:"locations,omitempty"`
	InputSummary string   `json:"inputSummary,omitempty"`
}

// option is one answer an external agent offers.
type option struct {
	OptionID string `json:"optionId"`
	Kind     string `json:"kind"`
}

// textDelta reports streamed reply text.
func (run *extRun) textDelta(s string) {
	if s == "" {
		return
	}
	t, r := run.t, run.t.reg
	run.mu.Lock()
	run.text.WriteString(s)
	run.mu.Unlock()
	t.smu.Lock()
	t.text.WriteString(s)
	t.pending.WriteString(s)
	if now := r.cfg.Now(); !t.flushed || now.Sub(t.lastFlush) >= r.cfg.TextThrottle {
		t.flushLocked(now)
	}
	t.smu.Unlock()
}

// finalText sets the agent's own final reply (drivers whose protocol
// reports it at the end); it replaces the streamed text in the report.
func (run *extRun) finalText(s string) {
	run.mu.Lock()
	run.final = s
	run.mu.Unlock()
}

// toolUpdate reports a tool call (nil fields: unchanged); the parent hears
// of it once, when it is no longer pending (agents.md §6.2).
func (run *extRun) toolUpdate(id string, title, kind, status *string, locations []string) {
	if id == "" {
		return
	}
	run.mu.Lock()
	if run.byID == nil {
		run.byID = map[string]*extTool{}
	}
	tc := run.byID[id]
	if tc == nil {
		tc = &extTool{id: id, kind: "other", status: "pending"}
		run.byID[id] = tc
		run.tools = append(run.tools, tc)
	}
	if title != nil {
		tc.title = oneLine(*title)
	}
	if kind != nil {
		tc.kind = *kind
	}
	if status != nil {
		tc.status = *status
	}
	for _, l := range locations {
		if !contains(tc.locations, l) {
			tc.locations = append(tc.locations, l)
		}
	}
	report := !tc.reported && tc.status != "pending"
	if report {
		tc.reported = true
	}
	title2 := tc.title
	run.mu.Unlock()
	if report {
		run.reportTool(title2)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tool returns a known tool call's title and kind.
func (run *extRun) tool(id string) (title, kind string, locations []string, ok bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if tc := run.byID[id]; tc != nil {
		return tc.title, tc.kind, append([]string(nil), tc.locations...), true
	}
	return "", "", nil, false
}

// reportTool tells the parent that a tool started.
func (run *extRun) reportTool(title string) {
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

// setUsage records the turn's usage (and the USD cost the agent reported).
func (run *extRun) setUsage(u llm.Usage, costUSD *float64) {
	u.CacheWrite = 0
	u.TotalTokens = u.Input + u.Output + u.CacheRead
	if costUSD != nil {
		u.Cost = &llm.Cost{Total: *costUSD}
	}
	run.mu.Lock()
	run.usage, run.costUSD = u, costUSD
	run.mu.Unlock()
}

// notice is a driver's diagnostic (agents.md §6.2 notice: a log line).
func (run *extRun) notice(text string) {
	run.t.reg.cfg.Log.Info(fmt.Sprintf("[task %s] %s", run.t.ID(), text))
}

// ask passes the agent's own approval request to the parent's approvals
// (toolName agent:<id>, context.origin; agents.md §7) and returns the
// kind of the option to answer with: allow_once, allow_always,
// reject_once, or "" (cancelled: the task ended, or no such option).
func (run *extRun) ask(ctx context.Context, view toolView, opts []option) string {
	t, r := run.t, run.t.reg
	actx, cancel := context.WithCancel(t.ctx) // the task ending or the agent withdrawing the request
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	view.Title = oneLine(view.Title)
	if view.Kind == "" {
		view.Kind = "other"
	}
	view.InputSummary = cut(view.InputSummary, 300)
	r.mu.Lock()
	id := t.info.TaskID
	r.mu.Unlock()
	run.mu.Lock()
	sid := run.sessionID
	run.mu.Unlock()
	input, _ := json.Marshal(view)
	pr := &events.PermissionRequest{RequestID: r.cfg.newID(), ToolName: "agent:" + run.agent, Input: input, Reason: "mode",
		TimeoutMs: r.cfg.approvalTimeout().Milliseconds(),
		Context: &events.PermissionCtx{Depth: 1, TaskID: id, Origin: struct {
			Agent     string   `json:"agent"`
			SessionID string   `json:"sessionId"`
			ToolCall  toolView `json:"toolCall"`
			Options   []option `json:"options"`
		}{run.agent, sid, view, opts}}}
	decision := r.ask(actx, pr)
	if actx.Err() != nil {
		return ""
	}
	want := map[events.Approval]string{events.ApprovalAllow: "allow_once", events.ApprovalAllowSession: "allow_always", events.ApprovalDeny: "reject_once"}[decision]
	if want == "allow_always" && !hasKind(opts, want) {
		want = "allow_once"
	}
	if !hasKind(opts, want) {
		return ""
	}
	return want
}

func hasKind(opts []option, kind string) bool {
	for _, o := range opts {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// optionID is the id of the first option of a kind ("": none).
func optionID(opts []option, kind string) string {
	for _, o := range opts {
		if o.Kind == kind {
			return o.OptionID
		}
	}
	return ""
}

// runExternal runs the task's prompt on an external agent.
func (t *Task) runExternal() Result {
	r := t.reg
	fail := func(format string, args ...any) Result {
		return Result{Status: StatusFailed, IsError: true, Text: fmt.Sprintf(format, args...), StopReason: llm.StopError}
	}
	agent := t.typ.Runner
	if r.cfg.HostRunners != nil { // hosted mode: ama spawns no external CLI itself (host-api.md §4.12)
		return fail("The external agent %s is not available: with a host adapter active, external agents are provided by the host, and it provides no runner %s.", agent, agent)
	}
	if !r.cfg.Trusted {
		return fail("agent_untrusted: %s runs only in a trusted project (start ama-rpc with --trust).", agent)
	}
	set := r.cfg.External[agent]
	if b := r.cfg.ExternalBudgetUSD; b > 0 && r.spentExternal() >= b {
		return fail("budget_exhausted: external agents have used the session budget of $%.2f (agents.sessionBudgetUsd).", b)
	}
	mode, refused := r.confirmExternal(t, agent)
	if refused != "" {
		return fail("%s", refused)
	}
	cands := candidatesFor(agent)
	c, path, ok := pickCandidate(cands, mode, func(p string) (string, error) { return childenv.LookPath(p, t.cwd) })
	if !ok {
		programs := make([]string, 0, len(cands))
		for _, c := range cands {
			programs = append(programs, c.program)
		}
		return fail("The external agent %s is not available: %s was not found on PATH.", agent, strings.Join(programs, " or "))
	}
	run := &extRun{t: t, agent: agent}
	d := newDriver(c, run)
	var pol approvals.Policy
	if r.cfg.Deps != nil && r.cfg.Deps.Policy != nil {
		pol = *r.cfg.Deps.Policy
	}
	o := &extOpen{agent: agent, cwd: t.cwd, mode: mode, model: t.req.Model, budgetUSD: t.req.BudgetUSD, unattended: pol.Unattended}
	if o.model == "" {
		o.model = set.Model
	}
	if t.resumeExt != "" {
		o.resume = t.resumeExt
	}
	if c.verified != "" && r.cfg.Probe != nil {
		if loc := r.cfg.Probe.Locate(c.program); loc != nil && loc.Version != "" && !VersionIn(loc.Version, c.verified) {
			run.notice(fmt.Sprintf("%s %s is outside the verified range %s; it may not work", c.program, loc.Version, c.verified))
		}
	}
	// One slot of the external pool while the process runs (released
	// after the deferred close below, which runs first).
	max, own := r.cfg.externalLimits(agent)
	release, err := r.cfg.extPool.acquire(t.ctx, agent, max, own, func() {
		if r.cfg.extWaiting != nil {
			r.cfg.extWaiting(t.ID())
		}
	})
	if err != nil {
		return Result{Status: StatusAborted, Text: abortedText, IsError: true, StopReason: llm.StopAborted}
	}
	defer release()
	cmd := exec.Command(path, append(append([]string(nil), c.args...), d.argv(o)...)...)
	var hide []string
	if r.cfg.Deps != nil {
		hide = r.cfg.Deps.Settings.ToolEnv.Hide
	}
	// The agent is another model client: internal/childenv removes the
	// model's credentials and ama's endpoint and settings variables; only
	// agents.<id>.env.passthrough re-adds one (its own login's key).
	cmd.Dir, cmd.Env = t.cwd, childenv.Environ(childenv.Policy{Hide: hide, Pass: set.Passthrough, ModelClient: true})
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
	defer func() { // close: the session, stdin, then the process after a grace
		d.close()
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(closeGrace):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	d.attach(stdin, stdout)

	ctx := t.ctx
	sid, err := d.open(ctx, o)
	if err != nil {
		return run.failed(err, "open")
	}
	run.mu.Lock()
	run.sessionID = sid
	run.mu.Unlock()
	r.mu.Lock()
	t.resumeExt = sid // a continuation resumes this session
	t.info.SessionRef = &SessionRef{Runner: agent, SessionID: sid}
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

	turnStarted := r.cfg.Now().UnixMilli()
	var stop string
	var perr error
	done := make(chan struct{})
	go func() { stop, perr = d.prompt(t.req.Prompt); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		d.cancel()
		select {
		case <-done:
		case <-time.After(cancelGrace): // the watchdog: the agent did not stop
			r.cfg.Log.Warn("external agent did not stop after cancel; killing it", zap.String("agent", agent))
			_ = cmd.Process.Kill()
			<-done
		}
		stop = "cancelled"
	}
	t.smu.Lock()
	t.flushLocked(r.cfg.Now())
	t.smu.Unlock()
	if perr != nil && ctx.Err() == nil {
		return run.failed(perr, "prompt")
	}
	res := Result{Text: run.report(), StopReason: stop}
	switch stop {
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
	run.mu.Lock()
	u, cost := run.usage, run.costUSD
	run.mu.Unlock()
	res.Usage = plainUsage(u)
	r.mu.Lock()
	pu := res.Usage
	t.info.Usage = &pu
	t.extTurns = append(t.extTurns, run.turnRecord(turn, res, turnStarted, r.cfg.Now().UnixMilli()))
	if cost != nil {
		total := *cost
		if t.info.CostUSD != nil {
			total += *t.info.CostUSD
		}
		t.info.CostUSD = &total
	}
	r.mu.Unlock()
	return res
}

// turnRecord is the get_trace skeleton of the finished turn.
func (run *extRun) turnRecord(turn int, res Result, started, ended int64) ExternalTurn {
	run.mu.Lock()
	defer run.mu.Unlock()
	tt := ExternalTurn{Turn: turn, Status: res.Status, StopReason: res.StopReason, StartedAt: started, EndedAt: ended, Tools: []ExternalTool{}}
	if res.Usage.TotalTokens > 0 {
		u := res.Usage
		tt.Usage = &u
	}
	for _, tc := range run.tools {
		tt.Tools = append(tt.Tools, ExternalTool{ID: tc.id, Title: tc.title, Kind: tc.kind, Status: tc.status})
	}
	return tt
}

// failed is the result of a protocol failure.
func (run *extRun) failed(err error, step string) Result {
	text := fmt.Sprintf("The external agent %s failed (%s): %v", run.agent, step, err)
	if errors.Is(err, errAuthRequired) {
		text = fmt.Sprintf("agent_auth_required: %s needs a login; sign in with its own CLI first. %v", run.agent, err)
	}
	return Result{Status: StatusFailed, IsError: true, Text: text, StopReason: llm.StopError}
}

// report is the task's result text: the agent's reply, the tool calls and
// the files changed (agents.md §8.2).
func (run *extRun) report() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	parts := []string{}
	reply := run.final
	if reply == "" {
		reply = run.text.String()
	}
	if s := strings.TrimSpace(reply); s != "" {
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
	mode = clampMode(mode, r.cfg.External[agent].MaxMode)
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
	c.ok = r.ask(t.ctx, pr) != events.ApprovalDeny
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
func (r *Registry) ask(ctx context.Context, pr *events.PermissionRequest) events.Approval {
	r.parent.Emit(*pr)
	decision := events.ApprovalDeny
	if ap := r.parent.Approver(); ap != nil && ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, r.cfg.approvalTimeout())
		decision = ap.Ask(actx, pr)
		cancel()
	}
	if ctx.Err() != nil || !decision.Allows() {
		decision = events.ApprovalDeny
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

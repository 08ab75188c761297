package agents

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// Task is one delegated job. Fields marked (mu) are guarded by reg.mu.
type Task struct {
	reg *Registry
	typ *Type
	req Request // (mu) prompt and parent call of the current run
	cwd string

	info        TaskInfo      // (mu)
	background  bool          // (mu)
	movedReason string        // (mu)
	stopped     bool          // (mu) task_ctl stop: no notification
	progress    func(string)  // (mu) foreground progress callback
	done, moved chan struct{} // (mu) of the current run
	result      Result        // (mu) set before done is closed
	child       *session.Session
	outputFile  string
	model       llm.ModelRef
	wt          *worktree      // isolation worktree of the first run (nil: none)
	wantFork    bool           // context:"fork" was asked for (the first run decides)
	brief       string         // the first prompt of a fork child (the <task> message)
	resumeFile  string         // child session file to reopen (resumed parent, or released child)
	resumeExt   string         // an external agent's or host runner's session id to continue ("": none)
	hostHandle  string         // a host runner's kept handle (HostSender; "": none)
	closing     chan struct{}  // closed once a released child's session is closed
	extTurns    []ExternalTurn // (mu) the turns of an external task (get_trace skeleton)

	ctx    context.Context
	cancel context.CancelFunc

	// Stream state, touched on the child's bus goroutine and by finish
	// (after the child settled); smu makes the hand-over explicit.
	smu       sync.Mutex
	text      strings.Builder // text of the current turn's reply so far
	pending   strings.Builder // text not yet flushed
	lastFlush time.Time
	flushed   bool
	turns     int
	usage     llm.Usage
	last      *llm.AssistantMessage
	limitHit  bool
	settled   chan struct{}
	// cacheSum are the child's cache totals already added to the parent
	// (cacheAdded: counted once as a sub-session).
	cacheSum   [3]int
	cacheAdded bool
}

// ID returns the task id.
func (t *Task) ID() string {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	return t.info.TaskID
}

// Info returns a snapshot of the task.
func (t *Task) Info() TaskInfo {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	return t.info
}

// OutputFile is the planned or written output file ("" for a foreground
// result that was not cut).
func (t *Task) OutputFile() string { return t.outputFile }

// Background reports whether the current run is a background one.
func (t *Task) Background() bool {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	return t.background
}

// channels returns the done and moved channels of the current run.
func (t *Task) channels() (done, moved chan struct{}) {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	return t.done, t.moved
}

// Result returns the result of the finished run.
func (t *Task) Result() Result {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	return t.result
}

// Abort cancels the task (and its queued slot wait).
func (t *Task) Abort() { t.cancel() }

// Stop aborts the task without a notification and waits for it.
func (t *Task) Stop() string {
	t.reg.mu.Lock()
	t.stopped = true
	done := t.done
	t.reg.mu.Unlock()
	t.cancel()
	<-done
	return t.Info().Status
}

// SessionFile is the child's session file ("" before the child exists).
func (t *Task) SessionFile() string {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	if t.info.SessionRef == nil {
		return ""
	}
	return t.info.SessionRef.SessionFile
}

// OutputSoFar is the text the child produced in this run so far.
func (t *Task) OutputSoFar() string {
	t.smu.Lock()
	defer t.smu.Unlock()
	return t.text.String()
}

// run is the task goroutine: slot, child, prompt, finish.
func (t *Task) run() {
	r := t.reg
	defer r.wg.Done()
	if t.typ.Source != SourceHost && IsExternal(t.typ.Runner) {
		// External agents wait for a slot of their own pool instead
		// (runExternal, extpool.go).
		t.finish(t.runChild())
		return
	}
	select {
	case r.slots <- struct{}{}:
	case <-t.ctx.Done():
		t.finish(Result{Status: StatusAborted, Text: abortedText, IsError: true, StopReason: llm.StopAborted})
		return
	}
	defer func() { <-r.slots }() // after finish: the next task starts after this one ended
	t.finish(t.runChild())
}

// runChild starts (or reuses) the child session and runs one prompt.
func (t *Task) runChild() Result {
	r := t.reg
	if t.typ.Source == SourceHost {
		return t.runHost()
	}
	if IsExternal(t.typ.Runner) {
		return t.runExternal()
	}
	if t.child == nil && t.resumeFile != "" {
		if err := t.reopenChild(); err != nil {
			return Result{Status: StatusFailed, IsError: true, Text: "The sub-agent could not be continued: " + err.Error(), StopReason: llm.StopError}
		}
	}
	if t.child == nil {
		iso := t.req.Isolation
		if iso == "" {
			iso = t.typ.Isolation
		}
		if iso == "worktree" {
			if r.parent.PermissionMode() == approvals.ModePlan {
				// Plan mode creates nothing: no branch, no .ama/worktrees.
				return Result{Status: StatusFailed, IsError: true, Text: worktreePlanText, StopReason: llm.StopError}
			}
			w, dir, err := addWorktree(t.cwd, shortID(r.parent.ID())+"-"+t.ID())
			if err != nil {
				return Result{Status: StatusFailed, IsError: true, Text: "The sub-agent could not start: " + err.Error(), StopReason: llm.StopError}
			}
			t.wt, t.cwd = w, dir
		}
		if err := t.openChild(); err != nil {
			return Result{Status: StatusFailed, IsError: true, Text: "The sub-agent could not start: " + err.Error(), StopReason: llm.StopError}
		}
	}
	r.mu.Lock()
	info, bg, call := t.info, t.background, t.req.ParentToolCallID
	r.mu.Unlock()
	sf := ""
	if info.SessionRef != nil {
		sf = info.SessionRef.SessionFile
	}
	r.parent.Emit(events.SubagentStart{TaskID: info.TaskID, ParentToolCallID: call, Agent: info.Agent, Runner: info.Runner,
		Description: info.Description, Background: bg, Cwd: t.cwd, Model: t.model.Provider + "/" + t.model.ID, SessionFile: sf})

	t.smu.Lock()
	t.text.Reset()
	t.limitHit = false
	t.smu.Unlock()
	maxTurns := t.req.MaxTurns
	if maxTurns <= 0 {
		maxTurns = t.typ.MaxTurns
	}
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	t.child.SetLimits(maxTurns, t.req.BudgetUSD)
	first := t.req.Prompt
	if t.brief != "" { // a fork child's first run: task and role in one <task> message
		first, t.brief = t.brief, ""
	}
	if err := t.prompt(first); err != nil {
		return Result{Status: StatusFailed, IsError: true, Text: "The sub-agent could not start: " + err.Error(), StopReason: llm.StopError}
	}
	t.smu.Lock()
	hit := t.limitHit
	t.smu.Unlock()
	if hit && t.ctx.Err() == nil {
		// Out of turns with tool results pending: one more turn asking for
		// the report, without tools being run (agents.md §4 Max turns).
		t.child.SetLimits(1, t.req.BudgetUSD)
		t.smu.Lock()
		t.limitHit = false
		t.smu.Unlock()
		_ = t.prompt(finalReportText)
		res := t.collect()
		res.Status = StatusMaxTurns
		t.smu.Lock()
		again := t.limitHit || (t.last != nil && len(t.last.ToolCalls()) > 0)
		t.smu.Unlock()
		if again || strings.TrimSpace(res.Text) == "" {
			res.Text = emptyText
		} else {
			res.Text = maxTurnsNote + "\n\n" + res.Text
		}
		return res
	}
	return t.collect()
}

// prompt sends text to the child and waits until it settles (aborting it
// when the task is cancelled).
func (t *Task) prompt(text string) error {
	for len(t.settled) > 0 {
		<-t.settled
	}
	errc := make(chan error, 1)
	t.child.Prompt(session.KindPrompt, session.PromptInput{Message: text}, func(_ session.Disposition, err error) { errc <- err })
	if err := <-errc; err != nil {
		return err
	}
	select {
	case <-t.settled:
	case <-t.ctx.Done():
		aborted := make(chan struct{})
		t.child.Abort(func() { close(aborted) })
		<-aborted
		<-t.settled
	}
	return nil
}

// collect builds the result of the run from the child's last reply.
func (t *Task) collect() Result {
	t.smu.Lock()
	defer t.smu.Unlock()
	res := Result{Status: StatusCompleted, Usage: plainUsage(t.usage), StopReason: llm.StopStop}
	if t.last != nil {
		res.StopReason = t.last.StopReason
		res.Text = t.last.Text("")
		if t.last.StopReason == llm.StopError {
			res.Status, res.IsError = StatusFailed, true
			res.Text = "The sub-agent failed: " + t.last.ErrorMessage
		}
	}
	if t.ctx.Err() != nil {
		res.Status, res.IsError, res.Text = StatusAborted, true, abortedText
	}
	return res
}

// openChild creates the child session (in the parent's session directory,
// linked to the parent file) and subscribes to it.
func (t *Task) openChild() error {
	r := t.reg
	po, err := r.parent.Settings()
	if err != nil {
		return err
	}
	pfile, _ := r.parent.SessionFile()
	t.model = t.childModel(po.Model)
	thinking := po.ThinkingLevel
	if t.req.Thinking != "" {
		thinking = t.req.Thinking
	} else if t.typ.Thinking != "" {
		thinking = t.typ.Thinking
	}
	mode := po.PermissionMode
	if t.typ.ReadOnly {
		mode = "plan"
	}
	r.mu.Lock()
	info := t.info
	call := t.req.ParentToolCallID
	r.mu.Unlock()
	opts := session.Options{
		Cwd: t.cwd, Model: t.model, ThinkingLevel: thinking, PermissionMode: mode,
		ActiveTools: childTools(po.ActiveTools, t.typ, t.req.Tools), EagerFile: true,
		Approver: r.parent.Approver(), ReadOnly: t.typ.ReadOnly, Role: t.typ.Role(),
		Parent: &session.ParentLink{ParentFile: pfile, TaskData: childTaskData{TaskID: info.TaskID, Agent: info.Agent,
			ParentToolCallID: call, Description: info.Description, ParentSession: pfile}, Mode: r.parent.PermissionMode, TaskID: info.TaskID},
	}
	var child *session.Session
	if t.wantFork {
		child, err = t.forkChild(opts, po.ActiveTools)
		if err != nil {
			return err
		}
	}
	if child == nil {
		child, err = session.New(r.cfg.Deps, opts)
		if err != nil {
			return err
		}
	}
	child.Subscribe(t.onChild)
	if err := child.Start("startup"); err != nil {
		child.Close()
		return err
	}
	file, _ := child.SessionFile()
	r.mu.Lock()
	t.child = child
	t.info.SessionRef = &SessionRef{Runner: RunnerAma, SessionID: child.ID(), SessionFile: file}
	r.mu.Unlock()
	return nil
}

// reopenChild opens the session file of a task rebuilt after the parent
// was resumed.
func (t *Task) reopenChild() error {
	r := t.reg
	r.mu.Lock()
	closing, taskID := t.closing, t.info.TaskID
	r.mu.Unlock()
	if closing != nil {
		<-closing // the released session's file lock is gone
	}
	pfile, _ := r.parent.SessionFile()
	po, err := r.parent.Settings()
	if err != nil {
		return err
	}
	// The parent's current tools and mode bound the reopened child, as at
	// its start: it never does more than the parent.
	mode := po.PermissionMode
	if t.typ.ReadOnly {
		mode = "plan"
	}
	child, err := session.Open(r.cfg.Deps, t.resumeFile, session.Options{Approver: r.parent.Approver(), ReadOnly: t.typ.ReadOnly,
		PermissionMode: mode, ActiveTools: childTools(po.ActiveTools, t.typ, nil), Parent: &session.ParentLink{ParentFile: pfile, Mode: r.parent.PermissionMode, TaskID: taskID}})
	if err != nil {
		return err
	}
	child.Subscribe(t.onChild)
	if err := child.Start("resume"); err != nil {
		child.Close()
		return err
	}
	if o, err := child.Settings(); err == nil {
		t.model = o.Model
	}
	r.mu.Lock()
	t.child, t.resumeFile = child, ""
	t.info.SessionRef = &SessionRef{Runner: RunnerAma, SessionID: child.ID(), SessionFile: t.info.SessionRef.SessionFile}
	r.mu.Unlock()
	return nil
}

// childTools is the child's active tool set: an allow-list (never the task
// tools), the parent's set minus disallowed tools, or the parent's set as
// it is (task tools kept for identical tool tables, refused at run time).
func childTools(parent []string, typ *Type, param []string) []string {
	allow := param
	if len(allow) == 0 {
		allow = typ.Tools
	}
	in := map[string]bool{}
	for _, n := range parent {
		in[n] = true
	}
	if len(allow) > 0 {
		out := map[string]bool{}
		for _, n := range allow {
			if in[n] && n != ToolTask && n != ToolTaskCtl {
				out[n] = true
			}
		}
		return sortedKeys(out)
	}
	for _, n := range typ.Disallowed {
		delete(in, n)
	}
	return sortedKeys(in)
}

// onChild turns the child's events into subagent_* events of the parent.
func (t *Task) onChild(e events.Event) {
	r := t.reg
	switch e := e.(type) {
	case events.PermissionDecision:
		// The child's decision record (its taskId and session id in it)
		// reaches the client through the parent; the child counts it.
		r.parent.Emit(e)
	case events.MessageUpdate:
		ev := e.AssistantMessageEvent
		if ev.Type != llm.EvTextDelta {
			return
		}
		t.smu.Lock()
		t.text.WriteString(ev.Delta)
		t.pending.WriteString(ev.Delta)
		now := r.cfg.Now()
		if !t.flushed || now.Sub(t.lastFlush) >= r.cfg.TextThrottle {
			t.flushLocked(now)
		}
		t.smu.Unlock()
	case events.ToolExecutionStart:
		r.mu.Lock()
		progress, id := t.progress, t.info.TaskID
		r.mu.Unlock()
		if progress != nil {
			progress("[task] " + e.ToolName)
		}
		t.smu.Lock()
		turn := t.turns
		t.smu.Unlock()
		r.parent.Emit(events.SubagentUpdate{TaskID: id, Kind: "tool", ToolName: e.ToolName, Turn: turn})
	case events.TurnEnd:
		t.smu.Lock()
		t.flushLocked(r.cfg.Now())
		if e.Message != nil {
			t.last = e.Message
			t.usage = addUsage(t.usage, e.Message.Usage)
		}
		t.turns++
		turns, usage := t.turns, plainUsage(t.usage)
		t.smu.Unlock()
		r.mu.Lock()
		// costUsd is for runners that report USD; an ama child's cost
		// reaches the parent's statistics through RecordUsage.
		t.info.Turns, t.info.Usage = &turns, &usage
		id := t.info.TaskID
		r.mu.Unlock()
		r.parent.Emit(events.SubagentUpdate{TaskID: id, Kind: "turn", Turn: turns, Usage: &usage})
	case events.LimitReached:
		t.smu.Lock()
		t.limitHit = t.limitHit || e.Kind == "turns"
		t.smu.Unlock()
	case events.PermissionRequest:
		r.mu.Lock()
		id := t.info.TaskID
		r.mu.Unlock()
		ctx := events.PermissionCtx{Depth: 1, TaskID: id}
		if e.Context != nil {
			ctx.ToolCallID = e.Context.ToolCallID
		}
		e.Context = &ctx
		r.parent.Emit(e)
	case events.PermissionResolved:
		r.parent.Emit(e)
	case events.AgentSettled:
		select {
		case t.settled <- struct{}{}:
		default:
		}
	}
}

// flushLocked emits the pending text (smu held).
func (t *Task) flushLocked(now time.Time) {
	if t.pending.Len() == 0 {
		return
	}
	text := t.pending.String()
	t.pending.Reset()
	t.lastFlush, t.flushed = now, true
	t.reg.mu.Lock()
	id := t.info.TaskID
	t.reg.mu.Unlock()
	t.reg.parent.Emit(events.SubagentUpdate{TaskID: id, Kind: "text", TextDelta: &text, Turn: t.turns})
}

// plainUsage is usage as tasks report it: tokens only (the USD amount is
// TaskInfo.costUsd).
func plainUsage(u llm.Usage) llm.Usage {
	u.Cost = nil
	return u
}

func addUsage(a, b llm.Usage) llm.Usage {
	a.Input += b.Input
	a.Output += b.Output
	a.CacheRead += b.CacheRead
	a.CacheWrite += b.CacheWrite
	a.TotalTokens += b.TotalTokens
	if b.Cost != nil {
		c := llm.Cost{}
		if a.Cost != nil {
			c = *a.Cost
		}
		c.Input += b.Cost.Input
		c.Output += b.Cost.Output
		c.CacheRead += b.Cost.CacheRead
		c.CacheWrite += b.Cost.CacheWrite
		c.Total += b.Cost.Total
		a.Cost = &c
	}
	return a
}

// finish records the result: status, output file, snapshot,
// subagent_end, the parent's usage, and the notification of a background
// task.
func (t *Task) finish(res Result) {
	r := t.reg
	t.smu.Lock()
	t.flushLocked(r.cfg.Now())
	t.smu.Unlock()
	if t.ctx.Err() != nil {
		res.Status = StatusAborted
	}
	r.mu.Lock()
	bg, stopped := t.background, t.stopped
	t.info.Status = res.Status
	end := r.cfg.Now().UnixMilli()
	t.info.EndedAt = &end
	id := t.info.TaskID
	r.mu.Unlock()
	full := res.Text
	if strings.TrimSpace(full) == "" {
		full = emptyText
	}
	var kept *events.SubagentWorktree
	if w := t.wt; w != nil && !t.noChild() {
		changed, note, err := w.finish()
		switch {
		case err != nil:
			r.cfg.Log.Warn("task worktree", zap.String("task", id), zap.Error(err))
		case changed:
			full += note
			kept = &events.SubagentWorktree{Branch: w.branch, Changed: true}
		default:
			t.wt = nil // removed
		}
	}
	plan := t.outputFile
	if plan == "" {
		plan = r.outputPath(id)
	}
	text, cut := capResult(full, plan)
	if cut || bg {
		if err := writeOutput(plan, full); err != nil {
			r.cfg.Log.Warn("task output file", zap.String("task", id), zap.Error(err))
		} else {
			t.outputFile = plan
		}
	}
	res.Text = text
	r.mu.Lock()
	t.result = res
	if t.outputFile != "" && (cut || bg) {
		t.info.OutputFile = t.outputFile
	}
	info := t.info
	done := t.done
	r.live--
	r.mu.Unlock()
	r.snapshot(t)
	r.mu.Lock()
	open := t.child != nil
	r.mu.Unlock()
	if open && !t.noChild() {
		r.retain(t)
	}
	end2 := events.SubagentEnd{TaskID: id, Status: res.Status, OutputFile: info.OutputFile, Worktree: kept}
	if info.Usage != nil && t.noChild() {
		u := *info.Usage
		end2.Usage = &u
	} else if info.Usage != nil {
		u := *info.Usage
		end2.Usage = &u
		cache := &events.SubagentCache{}
		if den := u.Input + u.CacheRead + u.CacheWrite; u.CacheRead+u.CacheWrite > 0 && den > 0 {
			hr := float64(u.CacheRead) / float64(den)
			cache.HitRate = &hr
		}
		end2.Cache = cache
		t.smu.Lock()
		paid := t.usage
		t.smu.Unlock()
		r.parent.RecordUsage("subagent", t.model, paid)
		t.addCache()
	}
	r.parent.Emit(end2)
	if stop := r.cfg.SubagentStop; stop != nil {
		stop(info, res) // hooks: SubagentStop
	}
	close(done)
	if bg && !stopped && res.Status != StatusAborted {
		r.notify(notificationText(&info, text))
	}
	if IsExternal(t.typ.Runner) && t.typ.Source != SourceHost {
		r.refreshExternal() // as ama: get_agents is re-read when an external task ends
	}
}

// addCache adds what this run of the child cost in cache terms to the
// parent's SessionStats.cache.subagents (the difference since the last
// run: a continued child's totals include its earlier runs).
func (t *Task) addCache() {
	r := t.reg
	r.mu.Lock()
	child := t.child
	r.mu.Unlock()
	if child == nil {
		return
	}
	read, prompt, rb, err := child.CacheTotals()
	if err != nil {
		return
	}
	t.smu.Lock()
	first := !t.cacheAdded
	d := [3]int{max(0, read-t.cacheSum[0]), max(0, prompt-t.cacheSum[1]), max(0, rb-t.cacheSum[2])}
	t.cacheAdded, t.cacheSum = true, [3]int{read, prompt, rb}
	t.smu.Unlock()
	r.parent.AddSubagentCache(first, d[0], d[1], d[2])
}

// noChild: the task runs outside ama (an external agent or a host
// runner), so there is no child session to keep or bill.
func (t *Task) noChild() bool { return t.typ.Source == SourceHost || IsExternal(t.typ.Runner) }

// shortID is the first 8 characters of a session id.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func writeOutput(path, text string) error {
	// $TMPDIR/ama-outputs (--no-session) is writable by sandboxed
	// commands: never write through a link planted there.
	return ownfs.WriteAtomic(filepath.Dir(path), filepath.Base(path), []byte(text))
}

// details is the details of a task result: a running task (started or
// moved to the background) names its output file; a finished one its
// session file and the output file when one was written.
func (t *Task) details(status string, usage llm.Usage, stop string) taskDetails {
	r := t.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	d := taskDetails{TaskID: t.info.TaskID, Status: status, Usage: usage, StopReason: stop, Context: t.info.Context}
	if status == StatusRunning {
		d.OutputFile = t.outputFile
		return d
	}
	if t.info.SessionRef != nil {
		d.SessionFile = t.info.SessionRef.SessionFile
	}
	d.OutputFile = t.info.OutputFile
	return d
}

// taskDetails is the details of a task result (key order of ama).
type taskDetails struct {
	TaskID      string    `json:"taskId,omitempty"`
	Status      string    `json:"status,omitempty"`
	SessionFile string    `json:"sessionFile,omitempty"`
	OutputFile  string    `json:"outputFile,omitempty"`
	Context     string    `json:"context,omitempty"`
	Usage       llm.Usage `json:"usage"`
	StopReason  string    `json:"stopReason"`
}

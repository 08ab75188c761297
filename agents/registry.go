package agents

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// Pool and merge defaults (agents.md §1).
const (
	DefaultMaxConcurrent = 4
	DefaultMaxPending    = 16
	DefaultTextThrottle  = 250 * time.Millisecond
	// DefaultRetain finished ama children stay open; older ones are closed
	// and reopened from their file when continued.
	DefaultRetain = 4
)

// Task statuses.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusAborted     = "aborted"
	StatusMaxTurns    = "max_turns"
	StatusInterrupted = "interrupted"
)

// Config configures the registries of a process.
type Config struct {
	// Deps create the child sessions (the parent's deps).
	Deps    *session.Deps
	Catalog *Catalog
	// MaxConcurrent children run at once; MaxPending more wait; beyond
	// that a task is refused (0: the defaults).
	MaxConcurrent, MaxPending int
	// Background is subagents.background: auto (default), always, never.
	Background string
	// Unattended is -p: auto means foreground.
	Unattended bool
	// Trusted is a trusted project (--trust): external agents may run.
	Trusted bool
	// AutoBackgroundAfter moves a foreground task to the background once it
	// has run this long (reason "timeout"; 0: never).
	AutoBackgroundAfter time.Duration
	// SubagentStop is called once per finished task run, after
	// subagent_end and before the notification, on the task's goroutine
	// (nil: none). The SubagentStop hook does not use it: it fires at the
	// child session's own settle point (session/hooks.go stopHook), where
	// a block can still continue the child; this is too late for that.
	SubagentStop func(info TaskInfo, res Result)
	// HostRunners are a host adapter's runners (nil: no host): an agent
	// name no catalog type has runs on the host runner of that id.
	HostRunners HostRunners
	// Probe finds external agent programs for get_agents (nil: none, as
	// with AMA_NO_AGENT_PROBE=1). Not used with HostRunners: a host
	// provides the external agents then.
	Probe *Prober
	// External are the settings agents.<id> by agent id: of external
	// agents, and (Model only) of ama types by type name.
	External map[string]ExternalSettings
	// DefaultModel is subagents.defaultModel: the model of ama children
	// that nothing else names ("": the parent's).
	DefaultModel string
	// ExternalBudgetUSD bounds the USD external agents may cost per
	// session (agents.sessionBudgetUsd; 0: none).
	ExternalBudgetUSD float64
	// ExternalMaxConcurrent bounds the external agent processes running
	// at once in the process (agents.maxConcurrent; 0: 3). The limit of
	// one agent is ExternalSettings.MaxConcurrent.
	ExternalMaxConcurrent int
	// extPool counts the running external agents (set by withDefaults:
	// shared by the registries of one Factory); extWaiting, when set, is
	// told of a task waiting for an external slot (tests).
	extPool    *extPool
	extWaiting func(taskID string)
	// Retain bounds the finished children kept open (0: DefaultRetain).
	Retain int
	// ForkRatio is subagents.forkMaxContextRatio (0: 0.5).
	ForkRatio float64
	// TextThrottle merges text deltas (0: 250 ms); Now is the clock.
	TextThrottle time.Duration
	Now          func() time.Time
	Log          *zap.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.Retain <= 0 {
		c.Retain = DefaultRetain
	}
	if c.TextThrottle <= 0 {
		c.TextThrottle = DefaultTextThrottle
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.Catalog == nil {
		c.Catalog = NewCatalog(nil)
	}
	if c.extPool == nil {
		c.extPool = newExtPool()
	}
	return c
}

// Factory returns the session.Deps.Tasks hook: one Registry per root
// session.
func Factory(cfg Config) func(*session.Session) session.Tasks {
	cfg = cfg.withDefaults()
	return func(s *session.Session) session.Tasks { return newRegistry(cfg, s) }
}

// Registry is the task registry of one root session.
type Registry struct {
	cfg    Config
	parent *session.Session
	slots  chan struct{}

	mu     sync.Mutex
	seq    int
	tasks  []*Task
	live   int // task runs launched and not finished (running or waiting for a slot)
	closed bool
	wg     sync.WaitGroup

	restoreOnce sync.Once // tasks of a resumed parent are rebuilt on first use
	retained    []*Task   // (mu) finished tasks with an open child, oldest first

	probed   chan struct{} // closed once external is set (nil: no probe)
	external []AgentInfo   // (mu) the last probe of external agents

	notifyMu sync.Mutex               // one serial chain of notifications
	confirms map[string]*confirmation // (mu) first-run confirmations of external agents in this session
}

func newRegistry(cfg Config, parent *session.Session) *Registry {
	r := &Registry{cfg: cfg, parent: parent, slots: make(chan struct{}, cfg.MaxConcurrent)}
	if cfg.Probe != nil && cfg.HostRunners == nil {
		// The external part of get_agents is probed in the background;
		// until it is ready get_agents lists the catalog only.
		r.probed = make(chan struct{})
		go func() {
			infos := cfg.Probe.ExternalInfos()
			r.mu.Lock()
			r.external = infos
			r.mu.Unlock()
			close(r.probed)
		}()
	}
	return r
}

// refreshExternal probes the external agents again (after an external
// task ended); the process-wide memo keeps it cheap.
func (r *Registry) refreshExternal() {
	if r.probed == nil {
		return
	}
	<-r.probed
	infos := r.cfg.Probe.ExternalInfos()
	r.mu.Lock()
	r.external = infos
	r.mu.Unlock()
}

// Catalog returns the agent types.
func (r *Registry) Catalog() *Catalog { return r.cfg.Catalog }

// Request is one task call.
type Request struct {
	Prompt, Agent, Description string
	Background                 *bool
	TaskID                     string
	Tools                      []string
	Model, Thinking            string
	MaxTurns                   int
	BudgetUSD                  float64
	Context                    string
	Isolation                  string // none or worktree
	ParentToolCallID           string
	// Progress receives tool_execution_update partials of a foreground
	// task (nil: none).
	Progress func(partial string)
}

// SessionRef and TaskInfo are the registry's get_tasks values, declared
// by the seam the session and the protocols see (session.Tasks).
type (
	SessionRef = session.SessionRef
	TaskInfo   = session.TaskInfo
)

// Result is the outcome of one task run.
type Result struct {
	Text       string
	IsError    bool
	Status     string
	StopReason string
	Usage      llm.Usage
}

// errRefused is a launch the registry refuses (the model sees the text).
type refusal struct{ text string }

func (e *refusal) Error() string { return e.text }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// Refusal reports whether err is a refusal whose text the model sees.
func Refusal(err error) (string, bool) {
	var r *refusal
	if errors.As(err, &r) {
		return r.text, true
	}
	return "", false
}

// backgroundDefault resolves the background choice of a launch.
func (r *Registry) backgroundDefault(req *Request, t *Type) bool {
	if req.Background != nil {
		return *req.Background
	}
	if t.Background != nil {
		return *t.Background
	}
	switch r.cfg.Background {
	case "always":
		return true
	case "never":
		return false
	}
	return !r.cfg.Unattended
}

// Launch starts a task (or continues one, with req.TaskID).
func (r *Registry) Launch(req Request) (*Task, error) {
	r.restore()
	if req.TaskID != "" {
		return r.continueTask(req)
	}
	name := req.Agent
	if name == "" {
		name = "general"
	}
	typ := r.cfg.Catalog.Lookup(name)
	if typ == nil {
		typ = r.hostType(name)
	}
	if typ == nil && IsExternal(name) {
		typ = externalType(name)
	}
	if typ == nil {
		return nil, refuse("Unknown agent %q. Available agents: %s.", name, strings.Join(r.cfg.Catalog.Names(), ", "))
	}
	if iso := cmp.Or(req.Isolation, typ.Isolation); iso == "worktree" && typ.Source != SourceHost && !IsExternal(typ.Runner) &&
		r.parent.PermissionMode() == approvals.ModePlan {
		return nil, refuse("%s", worktreePlanText) // checked again when the child is created
	}
	bg := r.backgroundDefault(&req, typ)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, refuse("%s", abortedText)
	}
	if r.live >= r.cfg.MaxConcurrent+r.cfg.MaxPending {
		r.mu.Unlock()
		return nil, refuse("The sub-agent pool is full (%d running, %d waiting). Do not retry now; wait for the running tasks to finish first (task_ctl wait).",
			r.cfg.MaxConcurrent, r.cfg.MaxPending)
	}
	r.seq++
	t := &Task{reg: r, typ: typ, req: req, background: bg, done: make(chan struct{}), moved: make(chan struct{}),
		settled: make(chan struct{}, 8), progress: req.Progress}
	t.info = TaskInfo{TaskID: fmt.Sprintf("t%d", r.seq), Agent: typ.Name, Runner: typ.Runner, Description: req.Description,
		Background: bg, Status: StatusRunning, StartedAt: r.cfg.Now().UnixMilli()}
	if req.Context == "fork" || (req.Context == "" && typ.Context == "fork") {
		// Decided when the child opens (openChild); external and host
		// runners never fork (agents.md §5.3).
		t.wantFork = true
		t.info.Context = "fresh"
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	r.tasks = append(r.tasks, t)
	r.live++
	r.wg.Add(1)
	r.mu.Unlock()
	t.cwd = r.parent.Cwd()
	if bg {
		t.outputFile = r.outputPath(t.info.TaskID)
	}
	r.snapshot(t)
	go t.run()
	return t, nil
}

// continueTask sends a new prompt to a finished task's child.
func (r *Registry) continueTask(req Request) (*Task, error) {
	t := r.Get(req.TaskID)
	if t == nil {
		return nil, refuse("Unknown task %s.", req.TaskID)
	}
	r.mu.Lock()
	if t.info.Status == StatusRunning {
		r.mu.Unlock()
		return nil, refuse("Task %s is still running; wait for it or stop it first.", req.TaskID)
	}
	if t.child == nil && t.resumeFile == "" && t.resumeExt == "" && t.hostHandle == "" {
		r.mu.Unlock()
		return nil, refuse("Task %s cannot be continued: its session is gone.", req.TaskID)
	}
	bg := r.backgroundDefault(&req, t.typ)
	t.background, t.stopped = bg, false
	t.info.Background, t.info.Status, t.info.EndedAt = bg, StatusRunning, nil
	t.done, t.moved, t.progress = make(chan struct{}), make(chan struct{}), req.Progress
	t.req.Prompt, t.req.ParentToolCallID = req.Prompt, req.ParentToolCallID
	if req.MaxTurns > 0 {
		t.req.MaxTurns = req.MaxTurns
	}
	if req.Description != "" {
		t.info.Description = req.Description
	}
	if r.live >= r.cfg.MaxConcurrent+r.cfg.MaxPending {
		r.mu.Unlock()
		return nil, refuse("Too many sub-agents are running or waiting; wait for one to finish before continuing task %s.", req.TaskID)
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	r.live++
	r.wg.Add(1)
	r.mu.Unlock()
	if bg && t.outputFile == "" {
		t.outputFile = r.outputPath(t.info.TaskID)
	}
	go t.run()
	return t, nil
}

// restore rebuilds the tasks recorded in the parent (the last ama.task
// snapshot of each id): running ones become interrupted, and the id
// counter continues after the highest tN (agents.md §6.5).
func (r *Registry) restore() {
	r.restoreOnce.Do(func() {
		entries, _, err := r.parent.Entries("")
		if err != nil {
			return
		}
		last := map[string]*taskSnapshot{}
		var order []string
		for _, e := range entries {
			if e.Type != store.TypeCustom || e.CustomType() != taskCustomType {
				continue
			}
			d, err := store.CustomData[taskSnapshot](e)
			if err != nil || d.TaskID == "" {
				continue
			}
			if last[d.TaskID] == nil {
				order = append(order, d.TaskID)
			}
			last[d.TaskID] = &d
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, id := range order {
			s := last[id]
			var n int
			if _, err := fmt.Sscanf(id, "t%d", &n); err == nil && n > r.seq {
				r.seq = n
			}
			typ := r.cfg.Catalog.Lookup(s.Agent)
			if typ == nil {
				typ = r.hostType(s.Agent)
			}
			if typ == nil && IsExternal(s.Agent) {
				typ = externalType(s.Agent)
			}
			if typ == nil {
				typ = &Type{Name: s.Agent, Runner: s.Runner, MaxTurns: DefaultMaxTurns}
			}
			info := s.TaskInfo
			if info.Status == StatusRunning {
				info.Status = StatusInterrupted
			}
			t := &Task{reg: r, typ: typ, info: info, cwd: s.Cwd, done: make(chan struct{}), moved: make(chan struct{}),
				settled: make(chan struct{}, 8), outputFile: info.OutputFile, background: info.Background}
			t.req.ParentToolCallID = s.ParentToolCallID
			t.ctx, t.cancel = context.WithCancel(context.Background())
			close(t.done)
			if info.SessionRef != nil && info.SessionRef.Runner == RunnerAma {
				t.resumeFile = info.SessionRef.SessionFile
			} else if info.SessionRef != nil && info.SessionRef.SessionID != "" {
				t.resumeExt = info.SessionRef.SessionID
			}
			r.tasks = append(r.tasks, t)
		}
	})
}

// Get returns the task with the id.
func (r *Registry) Get(id string) *Task {
	r.restore()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tasks {
		if t.info.TaskID == id {
			return t
		}
	}
	return nil
}

// Tasks returns snapshots of every task, in launch order.
func (r *Registry) List() []TaskInfo {
	r.restore()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]TaskInfo, 0, len(r.tasks))
	for _, t := range r.tasks {
		out = append(out, t.info)
	}
	return out
}

// Agents returns the get_agents list: the catalog, the host runners, then
// the probed external agents (installed, version) once the probe is done;
// an external agent the catalog already lists gets its probe fields.
func (r *Registry) Agents() []AgentInfo {
	out := append(r.cfg.Catalog.Infos(), r.hostInfos()...)
	r.mu.Lock()
	ext := r.external
	r.mu.Unlock()
next:
	for _, e := range ext {
		for i := range out {
			if out[i].Name == e.Name {
				out[i].Installed, out[i].Version = e.Installed, e.Version
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// Background moves running foreground tasks (all, or the one with id) to
// the background. It returns the ids moved and a release function that
// lets their waiting tool calls return: call it after the answer to the
// host is written, so the answer precedes the calls' results.
func (r *Registry) Background(id, reason string) ([]string, func()) {
	r.mu.Lock()
	var moved []*Task
	for _, t := range r.tasks {
		if (id == "" || t.info.TaskID == id) && t.info.Status == StatusRunning && !t.background {
			t.background, t.info.Background, t.progress = true, true, nil
			t.movedReason = reason
			moved = append(moved, t)
		}
	}
	r.mu.Unlock()
	ids := make([]string, 0, len(moved))
	for _, t := range moved {
		if t.outputFile == "" {
			t.outputFile = r.outputPath(t.info.TaskID)
		}
		ids = append(ids, t.info.TaskID)
		r.snapshot(t)
		r.parent.Emit(events.SubagentBackground{TaskID: t.info.TaskID, ParentToolCallID: t.req.ParentToolCallID, Reason: reason})
	}
	return ids, func() {
		for _, t := range moved {
			close(t.moved)
		}
	}
}

// retain records that t finished with its child open and closes the
// children beyond cfg.Retain, oldest first (they reopen from their file
// when continued).
func (r *Registry) retain(t *Task) {
	r.mu.Lock()
	kept := r.retained[:0]
	for _, x := range r.retained {
		if x != t {
			kept = append(kept, x)
		}
	}
	r.retained = append(kept, t)
	type eviction struct {
		child *session.Session
		done  chan struct{}
	}
	var evict []eviction
	for len(r.retained) > r.cfg.Retain {
		old := r.retained[0]
		r.retained = r.retained[1:]
		if old.child == nil || old.info.Status == StatusRunning || old.info.SessionRef == nil || old.info.SessionRef.SessionFile == "" {
			continue
		}
		e := eviction{old.child, make(chan struct{})}
		old.child, old.resumeFile, old.closing = nil, old.info.SessionRef.SessionFile, e.done
		evict = append(evict, e)
	}
	r.mu.Unlock()
	for _, e := range evict {
		e.child.Close()
		close(e.done)
	}
}

// Close aborts every task and waits for them (the parent is closing).
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	tasks := append([]*Task(nil), r.tasks...)
	r.mu.Unlock()
	for _, t := range tasks {
		t.cancel()
	}
	r.wg.Wait()
	for _, t := range tasks {
		if c := t.child; c != nil {
			c.Close()
		}
	}
}

// outputPath is <sessionDir>/outputs/<parentSessionId>-<taskId>.md.
func (r *Registry) outputPath(id string) string {
	dir := filepath.Join(os.TempDir(), "ama-outputs")
	if f, err := r.parent.SessionFile(); err == nil && f != "" {
		dir = filepath.Join(filepath.Dir(f), "outputs")
	}
	return filepath.Join(dir, r.parent.ID()+"-"+id+".md")
}

// taskSnapshot is the data of a task's ama.task entry in the parent.
type taskSnapshot struct {
	TaskInfo
	ParentToolCallID string `json:"parentToolCallId"`
	Cwd              string `json:"cwd"`
}

// snapshot persists the task in the parent (custom ama.task entry).
func (r *Registry) snapshot(t *Task) {
	r.mu.Lock()
	data := taskSnapshot{t.info, t.req.ParentToolCallID, t.cwd}
	r.mu.Unlock()
	r.parent.AppendCustom(taskCustomType, data)
}

// taskCustomType is the customType of task snapshots and of a child's
// first entry.
const taskCustomType = store.TaskCustomType

// notify reports a finished background task to the parent, in completion
// order.
func (r *Registry) notify(text string) {
	r.notifyMu.Lock()
	defer r.notifyMu.Unlock()
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return
	}
	r.parent.Notify(text, llm.OriginTask, func(err error) {
		r.cfg.Log.Debug("task notification not delivered", zap.Error(err))
	})
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

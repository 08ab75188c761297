package session

import (
	"errors"
	"fmt"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/classifier"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/telemetry"
	"github.com/armadra/ama-rpc/tools"
)

// state is everything a session owns. Only the actor goroutine touches it.
type state struct {
	s *Session
	// hookContext is the system prompt's hooks section (SessionStart).
	hookContext string
	id, cwd     string
	created     time.Time

	// tree holds every entry; its leaf is where new entries attach (nil:
	// before the root, an empty branch).
	tree *store.Tree
	// ctx is the projection of the active branch, kept (context.go).
	ctx ctxCache
	// usage sums the usage of every entry (stats.go).
	usage usageTotals

	disk          diskState
	tenv          *tools.Env
	parentSession string // header parentSession (forks)
	announceModel bool   // Start appends a model_change (resume with a new model)
	announceMode  bool   // Start records the mode (resume with an explicit --permission-mode)
	eagerFile     bool   // Start creates the session file (Options.EagerFile)

	model         *llm.Model
	provider      *llm.ProviderEntry
	thinkingLevel string
	mode          approvals.Mode
	memory        *approvals.Memory // "allow for this session" grants
	judge         *classifier.Classifier
	activeTools   map[string]bool
	lateTools     []string        // tools the set gained while this session lived, in that order (late.go)
	lateSeen      map[string]bool // the set's late tools this session has taken up
	mcpTools      *tools.Registry // the MCP servers' tools as of the last request (mcp.go)
	mcpSeen       map[string]bool // MCP tool names this session has taken up

	steering, followUp []queued
	steeringMode       QueueMode
	followUpMode       QueueMode
	autoCompaction     bool
	autoRetry          bool

	plan        planState
	ckpt        *turnCheckpoint // checkpoint of the current turn (nil: off)
	rewindNote  string          // told to the model before the next prompt
	compacting  bool
	pressure    float64 // context percent at the last context_pressure check (0 after a compaction)
	run         *runState
	idleWaiters []func()       // called once no run is active
	onSettle    []func()       // called when the current run settles (abort)
	starts      []pendingStart // runs waiting for the current one to settle
	interrupt   *pendingInterrupt
	closing     bool            // Close was called: no new run starts
	preset      int             // entries written before Start (a child's ama.task entry)
	role        string          // role section of a sub-agent's system prompt
	unavailable map[string]bool // tools in the table but refused (fork children)

	durable durableState // durable approvals (durable.go)

	cache *telemetry.Cache // prompt-cache accounting (telemetry.go)
	warm  warmState
	sub   subtask
}

// pendingStart is a run that starts once the session is free.
type pendingStart struct {
	start func()
	fail  func(error) // told when the session closes instead
}

// pendingInterrupt collects interrupts that arrive before the aborted run
// has settled: they start one run together.
type pendingInterrupt struct {
	parts   []string
	images  []*llm.ImageContent
	started []func()
	fail    []func(error)
}

// queued is a steering or follow-up message waiting for delivery.
type queued struct {
	text   string
	images []*llm.ImageContent
	origin llm.Origin         // overrides the queue's origin (steer, followUp)
	after  *llm.CustomMessage // appended right after the message
}

// newState prepares the state of session s over tree (its entries so
// far; store.NewTree(nil, nil) for none).
func newState(s *Session, id, cwd string, tree *store.Tree) *state {
	st := &state{
		s: s, id: id, cwd: cwd, created: s.deps.Now(),
		tree:           tree,
		steeringMode:   OneAtATime,
		followUpMode:   OneAtATime,
		autoCompaction: !s.deps.Settings.NoAutoCompaction,
		autoRetry:      !s.deps.Settings.NoAutoRetry,
		thinkingLevel:  "medium",
		mode:           s.deps.Policy.Mode,
		memory:         approvals.NewMemory(),
		cache:          telemetry.NewCache(s.deps.reporting(), s.deps.Settings.CacheWarming),
	}
	st.cache.Warm.Decider = s.deps.WarmingDecider
	d := s.deps
	out := filepath.Join(d.Dirs.Data, "tool-output", id)
	st.tenv = &tools.Env{Cwd: cwd, Home: d.Dirs.Home, OutputDir: out, Private: d.private(), Reads: tools.NewReadTracker(), Todos: s, EnvPolicy: d.Settings.ToolEnv,
		Jobs: tools.NewJobs(out, func(ev tools.JobEvent) {
			s.publish(events.BackgroundJob{JobID: ev.JobID, Phase: ev.Phase, Command: ev.Command, PID: ev.PID,
				OutputPath: ev.OutputPath, ExitCode: ev.ExitCode})
		})}
	st.plan.book = plan.NewBook()
	if d.Settings.Persist {
		st.disk.path = filepath.Join(store.SessionDir(d.Dirs.Sessions, cwd), store.FileName(st.created, id))
	}
	return st
}

// initSettings applies the options of a new session.
func (st *state) initSettings(o Options) error {
	if o.ThinkingLevel != "" {
		if !llm.ValidThinkingLevel(o.ThinkingLevel) {
			return fmt.Errorf("%w: unknown thinking level %q", ErrInvalidArguments, o.ThinkingLevel)
		}
		st.thinkingLevel = o.ThinkingLevel
	}
	if o.PermissionMode != "" {
		m, err := parseMode(o.PermissionMode)
		if err != nil {
			return err
		}
		st.mode = m
	}
	if o.ActiveTools != nil {
		st.activeTools = map[string]bool{}
		known := map[string]bool{}
		for _, t := range st.allTools() {
			known[t.Decl().Name] = true
		}
		for _, n := range o.ActiveTools {
			if !known[n] {
				return fmt.Errorf("%w: unknown tool %q", ErrInvalidArguments, n)
			}
			st.activeTools[n] = true
		}
	}
	if o.Model.Provider != "" {
		m, p, err := st.s.deps.Models.Find(o.Model.Provider, o.Model.ID)
		if err != nil {
			return err
		}
		st.model, st.provider = m, p
	}
	return nil
}

func (st *state) now() time.Time { return st.s.deps.Now() }

// nowMs is the epoch-ms timestamp of messages.
func (st *state) nowMs() int64 { return st.now().UnixMilli() }

// isoNow is the ISO timestamp of entries.
func (st *state) isoNow() string { return store.FormatTime(st.now()) }

// newEntryID returns an id not used in this session.
func (st *state) newEntryID() string {
	for {
		id := st.s.deps.NewEntryID()
		if st.tree.Get(id) == nil {
			return id
		}
	}
}

// appendEntry attaches e to the current leaf, persists it (when the
// session has a file) and reports entry_appended. While a persisting
// session has no file yet, the report waits until the file is created, so
// every announced entry is on disk (a SIGKILL loses only what was never
// announced).
func (st *state) appendEntry(e *store.Entry) {
	if e.ID == "" { // an id chosen beforehand (a compaction naming itself) stays
		e.ID = st.newEntryID()
	}
	if leaf := st.tree.Leaf(); leaf != nil {
		p := *leaf
		e.ParentID = &p
	}
	if e.Timestamp == "" { // likewise a time chosen with the id
		e.Timestamp = st.isoNow()
	}
	st.tree.Append(e)
	if resetPoint(e) {
		st.resetCache()
	}
	// The announcement carries the entry as it is now: a huge one leaves
	// the heap once written (store/spill.go), and the event should write
	// out the copy in hand rather than read the moved one back.
	view := e.Snapshot()
	if !st.persist(e) && st.disk.file != nil {
		return // not on disk yet (a failed write): announced once written
	}
	if st.disk.pending() {
		// The file does not exist yet (lazy creation): the entry is
		// announced once it is on disk (ensureFile), never before.
		st.disk.unannounced = append(st.disk.unannounced, view)
		return
	}
	st.s.publish(events.EntryAppended{Entry: view})
}

// appendMessage records a complete message: message_start (unless the
// message was already started by a stream), entry_appended, message_end.
func (st *state) appendMessage(m llm.Message, started bool) *store.Entry {
	if !started {
		st.s.publish(events.MessageStart{Message: m})
	}
	var e *store.Entry
	if cm, ok := m.(*llm.CustomMessage); ok {
		e = store.CustomMessageEntry(cm)
	} else {
		e = store.MessageEntry(m)
	}
	st.appendEntry(e)
	st.s.publish(events.MessageEnd{Message: m})
	return e
}

// branch returns the entries from the root to the leaf.
func (st *state) branch() []*store.Entry { return st.tree.Branch() }

// queueUpdate reports the queues.
func (st *state) queueUpdate() {
	st.s.publish(events.QueueUpdate{Steering: texts(st.steering), FollowUp: texts(st.followUp)})
}

func texts(q []queued) []string {
	out := make([]string, 0, len(q))
	for _, m := range q {
		out = append(out, m.text)
	}
	return out
}

// takeQueue removes queued messages: the first one, or all in DeliverAll.
func takeQueue(q *[]queued, mode QueueMode) []queued {
	if len(*q) == 0 {
		return nil
	}
	n := 1
	if mode == DeliverAll {
		n = len(*q)
	}
	out := append([]queued(nil), (*q)[:n]...)
	*q = append((*q)[:0:0], (*q)[n:]...)
	return out
}

// whenIdle runs f now if no run is active, else once the session is idle
// (after the current run and any run queued behind it).
func (st *state) whenIdle(f func()) {
	if st.run == nil {
		f()
		return
	}
	st.idleWaiters = append(st.idleWaiters, f)
}

// whenSettled runs f now if no run is active, else when the current run
// settles.
func (st *state) whenSettled(f func()) {
	if st.run == nil {
		f()
		return
	}
	st.onSettle = append(st.onSettle, f)
}

// settled is called on the actor when a run (or compaction) has ended:
// the next queued run starts (unless the session is closing), then those
// waiting for this run, then, if nothing runs, those waiting for idle.
func (st *state) settled() {
	st.run = nil
	if st.closing {
		for _, p := range st.starts {
			p.fail(ErrClosed)
		}
		st.starts = nil
	} else if len(st.starts) > 0 {
		next := st.starts[0]
		st.starts = st.starts[1:]
		next.start()
	}
	settle := st.onSettle
	st.onSettle = nil
	for _, f := range settle {
		f()
	}
	if st.run != nil {
		return
	}
	waiters := st.idleWaiters
	st.idleWaiters = nil
	for _, f := range waiters {
		f()
	}
}

// shutdown releases resources when the actor stops: background jobs are
// stopped, the classifier and the session file closed.
func (st *state) shutdown() {
	st.cancelWarmTimer()
	if st.tenv != nil && st.tenv.Jobs != nil {
		st.tenv.Jobs.StopAll()
	}
	if st.tenv != nil {
		// Its pre-started sandbox launchers end with it.
		st.s.deps.Sandbox.CloseSession(st.tenv.Cwd, st.tenv.OutputDir)
	}
	if st.judge != nil {
		st.judge.Close()
	}
	if st.disk.file != nil && len(st.disk.unsynced) > 0 {
		st.flushUnsynced() // a last try; the disk may have recovered
		if n := len(st.disk.unsynced); n > 0 {
			st.s.log.Error("session closed with lines the disk refused", zap.String("path", st.disk.path), zap.Int("lines", n))
		}
	}
	if st.disk.file != nil && len(st.disk.unsynced) == 0 {
		// A file changed under an idle session is put back before the
		// process lets go of it (issue 36): no announced entry is lost.
		if err := st.disk.file.Check(); errors.Is(err, store.ErrFileChanged) {
			st.rewriteFile(err)
		}
	}
	if err := st.disk.close(); err != nil {
		st.s.log.Warn("close session file", zap.Error(err))
	}
}

package session

import (
	"fmt"
	"sync"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// This file is the session side of sub-agents (package agents owns the
// rest): a child session is an ordinary session with a parent link, and a
// root session carries the registry the task tools reach through
// tools.Env.Tasks.

// readOnlyDenial is what the model of a read-only sub-agent sees for a call
// that would have needed approval.
const readOnlyDenial = "Not run: this is a read-only sub-agent; it cannot make changes or run commands that need approval. Report what you found instead."

// runLimits are the turn and cost limits of a session's runs.
type runLimits struct {
	mu    sync.Mutex
	turns int
	cost  float64
}

// linkTask applies the sub-agent options before the actor starts: the
// child's parent link and first entry, its limits and read-only pipeline,
// or (root sessions) the task registry.
func (s *Session) linkTask(st *state, opts Options) {
	s.limits.turns, s.limits.cost = opts.MaxTurns, opts.MaxCost
	s.readOnly = opts.ReadOnly
	st.role = opts.Role
	for _, n := range opts.Unavailable {
		if st.unavailable == nil {
			st.unavailable = map[string]bool{}
		}
		st.unavailable[n] = true
	}
	if p := opts.Parent; p != nil {
		st.tenv.Depth = 1
		s.parent = true
		s.bound = p.Mode
		s.taskID = p.TaskID
		if st.tree.Len() == 0 {
			st.parentSession = p.ParentFile
			st.appendEntry(store.CustomEntry(store.TaskCustomType, p.TaskData))
			st.preset = 1
		}
		return
	}
	if s.deps.Tasks != nil {
		s.tasks = s.deps.Tasks(s)
		st.tenv.Tasks = s.tasks
	}
}

// Tasks returns the session's sub-agent registry (nil: none). It never
// changes after the session is created.
func (s *Session) Tasks() Tasks { return s.tasks }

// limitsNow returns the limits that apply to the next check.
func (s *Session) limitsNow() Settings {
	set := s.deps.Settings
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	if s.limits.turns > 0 {
		set.MaxTurns = s.limits.turns
	}
	if s.limits.cost > 0 {
		set.MaxCost = s.limits.cost
	}
	return set
}

// SetLimits changes the session's turn and cost limits for later checks
// (0: the settings' value).
func (s *Session) SetLimits(turns int, cost float64) {
	s.limits.mu.Lock()
	s.limits.turns, s.limits.cost = turns, cost
	s.limits.mu.Unlock()
}

// Emit publishes e on the session's bus (sub-agent events the registry
// produces for this session's subscribers).
func (s *Session) Emit(e events.Event) { s.publish(e) }

// Approver returns the approver that answers this session's asks; a
// child session asks through its parent's.
func (s *Session) Approver() Approver { return s.approver }

// Notify starts a run with a user message of the given origin
// (llm.OriginTask notifications). When a run is active it starts once that run has
// settled, as its own run.
func (s *Session) Notify(text string, origin llm.Origin, failed func(error)) {
	if failed == nil {
		failed = func(error) {}
	}
	if !s.post(func(st *state) { st.startPrompt(text, nil, origin, nil, failed) }) {
		failed(ErrClosed)
	}
}

// RecordUsage adds usage paid outside the session's own requests (a
// sub-agent's) to its statistics, as a usage entry of the given kind.
func (s *Session) RecordUsage(kind string, m llm.ModelRef, u llm.Usage) {
	_ = s.do(func(st *state) { st.appendEntry(store.UsageEntry(kind, m.Provider, m.ID, u)) })
}

// AppendCustom appends a custom entry (not part of the context).
func (s *Session) AppendCustom(customType string, data any) {
	_ = s.do(func(st *state) { st.appendEntry(store.CustomEntry(customType, data)) })
}

// forkReserveTokens is the compaction reserve of the fork budget
// (agents.md §5.3: (window − reserveTokens) × ratio). ama-rpc compacts by a
// percentage of the window and has no reserve setting, so this is ama's
// default reserve.
const forkReserveTokens = 16384

// DefaultForkRatio is subagents.forkMaxContextRatio's default.
const DefaultForkRatio = 0.5

// ForkRequest asks for a child session that starts from a copy of this
// session's context (task context:"fork", agents.md §5.3).
type ForkRequest struct {
	// ParentToolCallID is the task call: the copy ends at the entry before
	// the assistant message that issued it.
	ParentToolCallID string
	// Ratio is subagents.forkMaxContextRatio (outside (0,1): the default).
	Ratio float64
	// TaskData is the data of the child's first entry, custom{ama.task},
	// given the id of the last copied entry.
	TaskData func(forkedFrom string) any
	// Options of the child: Cwd, Model, ThinkingLevel, PermissionMode,
	// ActiveTools, Unavailable, Approver, ReadOnly, Parent.ParentFile.
	// Model and ThinkingLevel must be the parent's, else the fork falls
	// back.
	Options Options
}

// ForkChild creates the child of a fork task: its file holds
// custom{ama.task} (with the caller's data) followed by the parent's
// branch up to the entry before the assistant message that made the task
// call, so the child's system prompt and history are the parent's. When
// the fork is not possible it returns no session and the reason
// (fallback): the model or thinking level differs, the parent has sent no
// request yet, its last prompt is over the budget, or the call is not in
// the branch. The child is not started.
func (s *Session) ForkChild(req ForkRequest) (child *Session, forkedFrom, fallback string, err error) {
	type src struct {
		path     []*store.Entry
		file     string
		fallback string
	}
	o := req.Options
	ratio := req.Ratio
	if ratio <= 0 || ratio >= 1 {
		ratio = DefaultForkRatio
	}
	got, err := call(s, func(st *state) src {
		switch {
		case st.model == nil || o.Model.Provider != st.model.Provider || o.Model.ID != st.model.ID:
			return src{fallback: fmt.Sprintf("model %s/%s differs from the parent", o.Model.Provider, o.Model.ID)}
		case o.ThinkingLevel != "" && o.ThinkingLevel != st.thinkingLevel:
			return src{fallback: fmt.Sprintf("thinking level %s differs from the parent", o.ThinkingLevel)}
		}
		last := st.cache.Last()
		if last == nil {
			return src{fallback: "the parent has not sent a request yet"}
		}
		if w := st.model.ContextWindow; w > 0 {
			limit := ratio * float64(max(0, w-forkReserveTokens))
			if float64(last.PromptTokens()) > limit {
				return src{fallback: fmt.Sprintf("parent context %d tokens exceeds %d", last.PromptTokens(), int(limit))}
			}
		}
		branch := st.branch()
		at := -1
		for i, e := range branch {
			if e.Type != store.TypeMessage {
				continue
			}
			if m, err := e.Message(); err == nil {
				if a, ok := m.(*llm.AssistantMessage); ok && hasToolCall(a, req.ParentToolCallID) {
					at = i
					break
				}
			}
		}
		if at <= 0 {
			return src{fallback: "the task call was not found in the parent's transcript"}
		}
		return src{path: append([]*store.Entry(nil), branch[:at]...), file: st.filePath()}
	})
	if err != nil {
		return nil, "", "", err
	}
	if got.fallback != "" {
		return nil, "", got.fallback, nil
	}
	forkedFrom = got.path[len(got.path)-1].ID
	d := s.deps
	cwd := o.Cwd
	if cwd == "" {
		cwd = s.cwd
	}
	id := d.sessionID(o.SessionID)
	n := newSession(d, id, cwd, o.Approver)
	st := newState(n, id, cwd, store.NewTree(nil, nil))
	if o.Parent != nil && o.Parent.ParentFile != "" {
		st.parentSession = o.Parent.ParentFile
	} else {
		st.parentSession = got.file
	}
	head := store.CustomEntry(store.TaskCustomType, req.TaskData(forkedFrom))
	head.ID, head.Timestamp = st.newEntryID(), st.isoNow()
	leaf := forkedFrom
	from := store.NewTree(got.path, &leaf)
	if st.disk.path != "" {
		f, entries, err := store.Fork(from, forkedFrom, st.disk.path, st.header(), head)
		if err != nil {
			return nil, "", "", fmt.Errorf("fork the parent's context: %w", err)
		}
		st.disk.file = f
		st.tree = store.NewTree(entries, &leaf)
	} else {
		entries, err := store.ForkEntries(from, forkedFrom, head)
		if err != nil {
			return nil, "", "", fmt.Errorf("fork the parent's context: %w", err)
		}
		st.tree = store.NewTree(entries, &leaf)
	}
	o.Role, o.ForceModel = "", true
	if err := st.restore(st.branch(), o); err != nil {
		st.shutdown()
		return nil, "", "", err
	}
	n.linkTask(st, o)
	return n.launch(st), forkedFrom, "", nil
}

func hasToolCall(a *llm.AssistantMessage, id string) bool {
	for _, tc := range a.ToolCalls() {
		if tc.ID == id {
			return true
		}
	}
	return false
}

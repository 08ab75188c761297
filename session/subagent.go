package session

import (
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
	if p := opts.Parent; p != nil {
		st.tenv.Depth = 1
		s.parent = true
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
func (s *Session) Tasks() any { return s.tasks }

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

// Notify starts a run with a user message of the given origin ("task"
// notifications). When a run is active it starts once that run has
// settled, as its own run.
func (s *Session) Notify(text, origin string, failed func(error)) {
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

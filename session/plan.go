package session

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// planState is the session's plan-mode bookkeeping. Plans and todos are
// session entries (ama.plan, ama.plan_state, ama.todo), so a resumed
// session rebuilds all of it from its branch.
type planState struct {
	prePlanMode string // mode before plan mode was entered
	planID      string // id of the plan being drafted (same across versions)
	prompts     int    // prompts since plan mode was entered
	fullNext    bool   // the next reminder is the full text (after a compaction)
	exitPending bool   // plan mode was left without approval: note it once
	attended    bool   // a client answers plan proposals
	book        plan.Book
	todos       []plan.TodoItem
}

// PlanOutcome tells the host layer what plan_response did.
type PlanOutcome struct {
	PlanID   string
	Decision string
	// Fresh is set for approve_fresh: the host creates a new session and
	// calls AdoptPlan on it with this plan and mode.
	Fresh *FreshPlan
}

// FreshPlan is an approved plan to carry out in a new session.
type FreshPlan struct {
	Plan plan.Plan
	Mode string
}

// PlanDecision is a plan_response.
type PlanDecision struct {
	PlanID, Decision, Mode, Feedback, EditedMarkdown string
}

// branchSettings are the latest model_change and thinking_level_change
// entries of a branch (nil: none).
type branchSettings struct{ model, level *store.Entry }

// rebuildPlan restores plan state from branch (the active one), learns its
// approval requests (scanApprovals' work) and returns the latest valid
// permission mode and the settings entries recorded on it, all in one walk.
func (st *state) rebuildPlan(branch []*store.Entry) (recorded approvals.Mode, hasMode bool, settings branchSettings) {
	st.plan.book = plan.NewBook()
	st.plan.todos = nil
	active := false
	for _, e := range branch {
		switch e.Type {
		case store.TypeModelChange:
			settings.model = e
			continue
		case store.TypeThinkingLevelChange:
			settings.level = e
			continue
		case store.TypeCustom, store.TypeCustomMessage:
		default:
			continue
		}
		switch e.CustomType() {
		case CustomPermissionMode:
			if m, ok := permissionModeOf(e); ok {
				recorded, hasMode = m, true
			}
		case plan.CustomPlan:
			if p, err := store.CustomData[plan.Plan](e); err == nil {
				st.plan.book = st.plan.book.Add(p)
			}
		case plan.CustomPlanState:
			if ps, err := store.CustomData[plan.State](e); err == nil {
				active = ps.Active
				st.plan.prePlanMode = ps.PrePlanMode
				if ps.PlanID != "" {
					st.plan.planID = ps.PlanID
				}
			}
		case plan.CustomTodo:
			if tl, err := store.CustomData[plan.TodoList](e); err == nil {
				st.plan.todos = tl.Items
			}
		case CustomApproval, CustomApprovalResolved:
			if e.Type == store.TypeCustom {
				st.scanApproval(e)
			}
		}
	}
	if active {
		st.mode = approvals.ModePlan
	}
	return recorded, hasMode, settings
}

// setMode changes the permission mode. Entering plan mode records the mode
// before it and a fresh plan id; leaving it records that too and queues a
// note for the model (unless the exit comes from an approval).
func (st *state) setMode(mode approvals.Mode) { st.switchMode(mode, false) }

func (st *state) switchMode(mode approvals.Mode, approved bool) {
	if st.s.readOnly && mode != approvals.ModePlan {
		return // a read-only sub-agent's pipeline is plan's and stays so
	}
	old := st.mode
	st.mode = mode
	st.s.mirrorMode() // before anyone hears of the change
	st.s.publish(events.PermissionModeChanged{Mode: string(mode)})
	if mode != old {
		st.recordMode()
	}
	switch {
	case mode == approvals.ModePlan && old != approvals.ModePlan:
		st.plan.prePlanMode = string(old)
		st.plan.planID = st.s.deps.NewUUID()
		st.plan.prompts = 0
		st.plan.exitPending = false
		st.appendEntry(store.CustomEntry(plan.CustomPlanState, plan.State{Active: true, PrePlanMode: st.plan.prePlanMode, PlanID: st.plan.planID}))
	case old == approvals.ModePlan && mode != approvals.ModePlan:
		st.appendEntry(store.CustomEntry(plan.CustomPlanState, plan.State{Active: false, PrePlanMode: st.plan.prePlanMode}))
		st.plan.exitPending = !approved
	}
}

// planNotes appends the plan-mode notes due before a prompt: the exit note
// after plan mode was left, or the reminder while it is on.
func (st *state) planNotes() {
	if st.plan.exitPending {
		st.plan.exitPending = false
		st.appendMessage(llm.NewCustom(plan.CustomPlanModeExit, plan.ExitNote(), false, st.nowMs()), false)
	}
	if st.mode != approvals.ModePlan {
		return
	}
	st.plan.prompts++
	if text, ok := plan.Reminder(st.plan.prompts, st.plan.fullNext); ok {
		st.plan.fullNext = false
		st.appendMessage(llm.NewCustom(plan.CustomPlanMode, text, false, st.nowMs()), false)
	}
}

// planAfterTurn runs on the actor after a turn: in plan mode a plain reply
// with a complete <proposed_plan> block becomes a proposal; outside it,
// [DONE:<step>] lines advance the todos when the todo tool is not active.
func (st *state) planAfterTurn(tr turnReply, toolResults int) {
	msg := tr.msg
	if msg == nil || msg.Failed() {
		return
	}
	if st.mode == approvals.ModePlan {
		if msg.StopReason == llm.StopStop && toolResults == 0 {
			if md, ok := plan.Extract(msg.Text("")); ok {
				st.propose(md, tr.entryID)
			}
		}
		return
	}
	if st.isActive(tools.NameTodo) || len(st.plan.todos) == 0 {
		return
	}
	if ids := plan.DoneIDs(msg.Text("\n")); len(ids) > 0 {
		if items, changed := plan.ApplyDone(st.plan.todos, ids); changed {
			st.setTodos(items)
		}
	}
}

// propose records a new plan version: the pending one is superseded, the
// markdown file is written, ama.plan entries are appended and plan_proposed
// is reported. Without an attending client, plan.unattended decides.
func (st *state) propose(markdown, sourceEntryID string) plan.Plan {
	steps, warnings := plan.ParseSteps(markdown)
	for _, w := range warnings {
		st.s.log.Warn("plan steps", zap.String("warning", w))
	}
	if st.plan.planID == "" {
		st.plan.planID = st.s.deps.NewUUID()
	}
	if old, ok := st.plan.book.Pending(); ok { // a new version replaces it
		st.resolvePlan(old, plan.DecisionRevise, ResolvedSuperseded)
	}
	snaps := st.plan.book.Propose(plan.Plan{ID: st.plan.planID, Markdown: markdown, Steps: steps, SourceEntryID: sourceEntryID})
	p := &snaps[len(snaps)-1]
	p.FilePath = st.writePlanFile(p.Version, markdown)
	for _, sn := range snaps {
		st.appendEntry(store.CustomEntry(plan.CustomPlan, sn))
	}
	st.plan.book = st.plan.book.Add(snaps...)
	st.recordPlan(*p) // durable approvals: recorded before it is sent
	st.s.publish(events.PlanProposed{PlanID: p.ID, Version: p.Version, Markdown: p.Markdown, Steps: nonNilSteps(p.Steps), FilePath: p.FilePath})
	// A sub-agent's plan is its report: nobody approves it into execution
	// (a child inherits its parent's plan mode; explore and plan never
	// write, agents.md §5.1).
	if !st.plan.attended && st.s.deps.Settings.PlanUnattended == "approve" && !st.s.parent && !st.s.readOnly {
		st.resolvePlan(*p, plan.DecisionApprove, ResolvedAnswered)
		st.approve(*p, "", true)
	}
	return *p
}

func nonNilSteps(s []plan.Step) []plan.Step {
	if s == nil {
		return []plan.Step{}
	}
	return s
}

// writePlanFile writes <dir>/<sessionId>-v<version>.md and returns its path
// ("" when it could not be written; the plan still lives in the session).
func (st *state) writePlanFile(version int, markdown string) string {
	name := fmt.Sprintf("%s-v%d.md", st.id, version)
	dir := filepath.Join(st.s.deps.Dirs.Data, "plans")
	write := func() error { return ownfs.WriteAtomic(dir, name, []byte(markdown+"\n")) }
	if d := st.s.deps.Settings.PlanDirectory; d != "" {
		abs := d
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(st.cwd, d)
		}
		if rel, err := filepath.Rel(st.cwd, abs); err == nil && !strings.HasPrefix(rel, "..") {
			// Inside the project, which the model and its commands can
			// change: no link may lead the write out of it (issue 24).
			dir = abs
			write = func() error { return ownfs.WriteAtomicIn(st.cwd, filepath.Join(rel, name), []byte(markdown+"\n")) }
		}
	}
	if err := write(); err != nil {
		st.s.log.Warn("plan file", zap.Error(err))
		return ""
	}
	return filepath.Join(dir, name)
}

// setTodos records a new todo list (ama.todo) and reports todo_updated.
func (st *state) setTodos(items []plan.TodoItem) {
	if items == nil {
		items = []plan.TodoItem{}
	}
	st.plan.todos = items
	st.appendEntry(store.CustomEntry(plan.CustomTodo, plan.TodoList{Items: items}))
	st.s.publish(events.TodoUpdated{Items: items})
}

// approve marks p approved, turns its steps into todos, reports
// plan_resolved and the mode switch, and starts the execution turn (or, in
// the same run when unattended, queues the hand-off as a follow-up).
func (st *state) approve(p plan.Plan, mode string, unattended bool) string {
	approved := p.With(plan.StatusApproved)
	st.appendEntry(store.CustomEntry(plan.CustomPlan, approved))
	st.plan.book = st.plan.book.Add(approved)
	if len(p.Steps) > 0 {
		st.setTodos(plan.TodosFromSteps(p.Steps))
	}
	exec := plan.ExecutionMode(mode, st.plan.prePlanMode)
	st.s.publish(events.PlanResolved{PlanID: p.ID, Decision: string(plan.DecisionApprove), Mode: exec})
	if m, err := approvals.ParseMode(exec); err == nil {
		st.switchMode(m, true)
	}
	if unattended { // the hand-off continues the same run
		st.followUp = append(st.followUp, queued{text: plan.ApprovedUserText, origin: plan.OriginPlan, after: st.handoff(p)})
		st.queueUpdate()
	}
	return exec
}

// startApproved starts the execution turn of an approved plan.
func (st *state) startApproved(p plan.Plan) {
	st.startRun(plan.ApprovedUserText, []input{
		{msg: llm.NewUser(plan.ApprovedUserText, st.nowMs(), plan.OriginPlan), newRun: true},
		{msg: st.handoff(p)},
	}, nil, nil)
}

// handoff is the ama.plan_approved message that hands an approved plan to
// the model.
func (st *state) handoff(p plan.Plan) *llm.CustomMessage {
	return llm.NewCustom(plan.CustomPlanApproved,
		plan.ApprovedHandoff(p.Markdown, p.FilePath, len(p.Steps) > 0, st.isActive(tools.NameTodo)), false, st.nowMs())
}

// PlanResponse answers the pending plan. reply is called when the response
// is due: for approve and revise before the turn they start, for
// approve_fresh with the plan the host must adopt in a new session. A
// response that arrives while the proposing run is still settling waits
// for it.
func (s *Session) PlanResponse(d PlanDecision, reply func(PlanOutcome, error)) {
	if !s.post(func(st *state) { st.whenIdle(func() { st.planResponse(d, reply) }) }) {
		reply(PlanOutcome{}, ErrClosed)
	}
}

func (st *state) planResponse(d PlanDecision, reply func(PlanOutcome, error)) {
	decision := plan.Decision(d.Decision)
	if !decision.Valid() {
		reply(PlanOutcome{}, fmt.Errorf("%w: decision must be approve, approve_fresh, revise or reject", ErrInvalidArguments))
		return
	}
	if d.Mode != "" {
		if _, err := parseMode(d.Mode); err != nil {
			reply(PlanOutcome{}, err)
			return
		}
	}
	p, err := st.plan.book.Awaiting(d.PlanID)
	if err != nil {
		if st.planAnswered(d.PlanID) { // durable approvals: answered before
			reply(PlanOutcome{}, fmt.Errorf("%w: plan %q", ErrApprovalResolved, d.PlanID))
			return
		}
		reply(PlanOutcome{}, fmt.Errorf("%w: plan %q is not waiting for approval", ErrPlanNotFound, d.PlanID))
		return
	}
	out := PlanOutcome{PlanID: p.ID, Decision: d.Decision}
	if (decision == plan.DecisionApprove || decision == plan.DecisionApproveFresh) && d.EditedMarkdown != "" {
		if md := plan.FromEdited(d.EditedMarkdown); md != "" && md != p.Markdown {
			p = st.propose(md, p.SourceEntryID)
		}
	}
	st.resolvePlan(p, decision, ResolvedAnswered)
	switch decision {
	case plan.DecisionReject:
		rejected := p.With(plan.StatusRejected)
		st.appendEntry(store.CustomEntry(plan.CustomPlan, rejected))
		st.plan.book = st.plan.book.Add(rejected)
		st.s.publish(events.PlanResolved{PlanID: p.ID, Decision: d.Decision})
		reply(out, nil)
	case plan.DecisionRevise:
		st.s.publish(events.PlanResolved{PlanID: p.ID, Decision: d.Decision})
		reply(out, nil)
		if fb := strings.TrimSpace(d.Feedback); fb != "" {
			st.startPrompt(d.Feedback, nil, "", nil, nil)
		}
	case plan.DecisionApprove:
		st.approve(p, d.Mode, false)
		reply(out, nil)
		st.startApproved(p)
	case plan.DecisionApproveFresh:
		approved := p.With(plan.StatusApproved)
		st.appendEntry(store.CustomEntry(plan.CustomPlan, approved))
		st.plan.book = st.plan.book.Add(approved)
		exec := plan.ExecutionMode(d.Mode, st.plan.prePlanMode)
		st.s.publish(events.PlanResolved{PlanID: p.ID, Decision: d.Decision, Mode: exec})
		if m, err := approvals.ParseMode(exec); err == nil {
			st.switchMode(m, true)
		}
		out.Fresh = &FreshPlan{Plan: approved, Mode: exec}
		reply(out, nil)
	}
}

// AdoptPlan carries out an approved plan in this (fresh) session: the plan
// and its todos are recorded here, then a turn starts whose first user
// message is the plan. done is called once that turn has started (nil), or
// with the error when it cannot start.
func (s *Session) AdoptPlan(fp FreshPlan, done func(error)) {
	if !s.post(func(st *state) {
		p := fp.Plan
		st.plan.planID = p.ID
		st.appendEntry(store.CustomEntry(plan.CustomPlan, p))
		st.plan.book = st.plan.book.Add(p)
		if len(p.Steps) > 0 {
			st.setTodos(plan.TodosFromSteps(p.Steps))
		}
		text := plan.FreshHandoff(p.Markdown, p.FilePath, len(p.Steps) > 0, st.isActive(tools.NameTodo))
		st.startRun(text, []input{{msg: llm.NewUser(text, st.nowMs(), plan.OriginPlan), newRun: true}},
			func() { done(nil) }, done)
	}) {
		done(ErrClosed)
	}
}

// Plan returns the plan with the given id, or the latest one (nil when
// there is none).
func (s *Session) Plan(id string) (*plan.Plan, error) {
	return call(s, func(st *state) *plan.Plan {
		var p plan.Plan
		var ok bool
		if id == "" {
			p, ok = st.plan.book.Latest()
		} else {
			p, ok = st.plan.book.ByID(id)
		}
		if !ok {
			return nil
		}
		return &p
	})
}

// Todos returns the todo list.
func (s *Session) Todos() []plan.TodoItem {
	items, _ := call(s, func(st *state) []plan.TodoItem { return append([]plan.TodoItem{}, st.plan.todos...) })
	return items
}

// SetTodos replaces the todo list (the todo tool's set).
func (s *Session) SetTodos(items []plan.TodoItem) ([]plan.TodoItem, error) {
	return s.changeTodos(func(cur []plan.TodoItem) ([]plan.TodoItem, error) { return plan.Set(items) })
}

// UpdateTodos changes existing items (the todo tool's update).
func (s *Session) UpdateTodos(patches []plan.TodoPatch) ([]plan.TodoItem, error) {
	return s.changeTodos(func(cur []plan.TodoItem) ([]plan.TodoItem, error) { return plan.Update(cur, patches...) })
}

func (s *Session) changeTodos(f func([]plan.TodoItem) ([]plan.TodoItem, error)) ([]plan.TodoItem, error) {
	type out struct {
		items []plan.TodoItem
		err   error
	}
	o, err := call(s, func(st *state) out {
		items, err := f(st.plan.todos)
		if err != nil {
			return out{err: err}
		}
		st.setTodos(items)
		return out{items: items}
	})
	if err != nil {
		return nil, err
	}
	return o.items, o.err
}

// SetPlanAttended says whether a client answers plan proposals (the plans
// capability); without one, plan.unattended applies.
func (s *Session) SetPlanAttended(on bool) {
	s.post(func(st *state) { st.plan.attended = on })
}

// CustomPermissionMode is the custom entry that records the session's
// permission mode ({"mode": …}). ama's session format keeps custom entries
// of unknown types and ignores them, so the files stay readable by ama.
const CustomPermissionMode = "ama-rpc.permission_mode"

// permissionModeData is the data of an ama-rpc.permission_mode entry.
type permissionModeData struct {
	Mode string `json:"mode"`
}

// recordMode appends the current permission mode to the session.
func (st *state) recordMode() {
	st.appendEntry(store.CustomEntry(CustomPermissionMode, permissionModeData{string(st.mode)}))
}

// permissionModeOf reads a valid permission mode from a permission-mode
// entry.
func permissionModeOf(e *store.Entry) (approvals.Mode, bool) {
	d, err := store.CustomData[permissionModeData](e)
	if err == nil && approvals.Mode(d.Mode).Valid() {
		return approvals.Mode(d.Mode), true
	}
	return "", false
}

package session

import (
	"errors"
	"fmt"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/store"
)

// turnReply is the outcome of one model request.
type turnReply struct {
	msg     *llm.AssistantMessage
	entryID string
	trace   traceStep
	err     error // the provider failure, if any
	closed  bool  // the actor was gone before the turn's inputs were recorded
}

// turnStart is what the first request of a turn does on the actor before
// its snapshot: record the turn's inputs, decide on auto-compaction.
type turnStart struct {
	pending []input
}

// traceStep is the data of an ama.trace step entry (ids, times and counts
// only, never content).
type traceStep struct {
	Kind             string `json:"kind"`
	Attempt          int    `json:"attempt"`
	AssistantEntryID string `json:"assistantEntryId,omitempty"`
	RequestAt        int64  `json:"requestAt,omitempty"`
	FirstTokenAt     int64  `json:"firstTokenAt,omitempty"`
	DoneAt           int64  `json:"doneAt,omitempty"`
	OutputTokens     int    `json:"outputTokens"`
	Status           string `json:"status,omitempty"`
	// Permissions are the decision records of the reply's tool calls
	// (and their nested calls), PermissionsDropped those beyond
	// permlog.MaxPending; get_trace shows them on the calls.
	PermissionsDropped int               `json:"permissionsDropped,omitempty"`
	Permissions        []*permlog.Record `json:"permissions,omitempty"`
}

// requestSnapshot is what the runner needs from the actor to call a model.
type requestSnapshot struct {
	req      *llm.Request
	provider llm.Provider
	entry    *llm.ProviderEntry // nil: the session's provider
	err      error
	// compact: the context passed the auto-compaction threshold; there is
	// no request yet (compact, then ask again without the check).
	compact bool
}

// replyOnce performs one model request: message_start when the stream
// starts, message_update per step, then the entry and message_end, then the
// ama.trace step entry. For the first request of a turn (start != nil)
// the one actor call that takes the request snapshot also records the
// turn's inputs and decides on auto-compaction (issue 14, step 6): when
// the context is due, the runner compacts and then takes the snapshot.
func (s *Session) replyOnce(r *runState, attempt int, use *modelChoice, start *turnStart) turnReply {
	snapshot := func(start *turnStart) (requestSnapshot, error) {
		return call(s, func(st *state) requestSnapshot {
			if start != nil {
				st.appendInputs(start.pending)
				if st.compactionDue() {
					return requestSnapshot{compact: true}
				}
			}
			snap := st.requestSnapshot(llm.PurposeTurn)
			if use != nil && snap.err == nil {
				snap.req.Model, snap.provider, snap.entry = use.model, use.entry.Provider, use.entry
			}
			st.pauseWarm()
			return snap
		})
	}
	s.readyMCP(r.ctx)
	snap, err := snapshot(start)
	if err != nil && start != nil {
		return turnReply{closed: true}
	}
	if err == nil && snap.compact {
		s.autoCompact(r)
		snap, err = snapshot(nil)
	}
	if err != nil {
		return turnReply{msg: s.failedMessage(nil, llm.Aborted())}
	}
	if snap.err != nil {
		msg := s.failedMessage(snap.req, snap.err)
		s.publish(events.MessageStart{Message: startCopy(msg)})
		_ = s.do(func(st *state) { st.appendMessage(msg, true) })
		return turnReply{msg: msg, err: snap.err}
	}
	req := snap.req
	requestAt := s.deps.Now().UnixMilli()
	var firstTokenAt int64
	started := false
	s.tput.Begin()
	msg, streamErr := snap.provider.Stream(r.ctx, req, func(ev llm.StreamEvent, partial *llm.AssistantMessage) {
		if ev.Type == llm.EvStart {
			started = true
			s.publish(events.MessageStart{Message: startCopy(partial)})
			return
		}
		if firstTokenAt == 0 {
			firstTokenAt = s.deps.Now().UnixMilli()
		}
		u := partial.Usage
		s.publish(events.MessageUpdate{Partial: partial, AssistantMessageEvent: ev, Usage: &u})
		text := ev.Delta
		if ev.Type == llm.EvToolCallStart {
			text = ev.Name
		}
		if s.tput.Delta(ev.Type, text) {
			s.publish(events.TelemetryTick{})
		}
	})
	if msg == nil { // a provider bug; never leave the turn without a message
		msg = s.failedMessage(req, fmt.Errorf("provider returned no message: %w", streamErr))
	}
	if !started {
		s.publish(events.MessageStart{Message: startCopy(msg)})
	}
	doneAt := s.deps.Now().UnixMilli()
	s.tput.Finish(msg.Usage.Output, msg.StopReason == llm.StopError)
	entryID, _ := call(s, func(st *state) string {
		st.recordRequest(req, snap.entry, msg)
		return st.appendMessage(msg, true).ID
	})
	return turnReply{msg: msg, entryID: entryID, err: streamErr, trace: traceStep{
		Kind: "step", Attempt: attempt, AssistantEntryID: entryID,
		RequestAt: requestAt, FirstTokenAt: firstTokenAt, DoneAt: doneAt, OutputTokens: msg.Usage.Output,
	}}
}

// startCopy is the message as announced by message_start: the partial
// message without content.
func startCopy(m *llm.AssistantMessage) *llm.AssistantMessage {
	c := *m
	c.Content = []llm.Content{}
	c.Usage = llm.Usage{}
	c.StopReason = llm.StopStop
	c.ErrorMessage = ""
	c.RetryAfterMs = 0
	return &c
}

// failedMessage builds the assistant message of a request that could not be
// made (no model, no key, closed session).
func (s *Session) failedMessage(req *llm.Request, err error) *llm.AssistantMessage {
	m := &llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{}, StopReason: llm.StopError,
		Timestamp: s.deps.Now().UnixMilli(), ErrorMessage: err.Error()}
	if req != nil && req.Model != nil {
		m.API, m.Provider, m.Model = req.Model.API, req.Model.Provider, req.Model.ID
		m.ThinkingLevel = req.ThinkingLevel
	}
	var le *llm.Error
	if errors.As(err, &le) && le.Kind == llm.ErrAborted {
		m.StopReason, m.ErrorMessage = llm.StopAborted, llm.AbortMessage
	}
	m.Usage.Finalize(llm.Prices{})
	return m
}

// requestSnapshot builds the model request from the current branch. It also
// creates the session file, which happens just before the first request.
func (st *state) requestSnapshot(purpose string) requestSnapshot {
	st.ensureFile()
	req := &llm.Request{
		Model: st.model, ThinkingLevel: st.thinkingLevel, Purpose: purpose, SessionID: st.id,
		Timestamp: st.nowMs(),
	}
	if st.model == nil {
		return requestSnapshot{req: req, err: fmt.Errorf("%w: choose one with set_model", ErrNoModel)}
	}
	if st.provider == nil || st.provider.Provider == nil {
		return requestSnapshot{req: req, err: fmt.Errorf("provider %s is not available", st.model.Provider)}
	}
	if !st.provider.HasKey {
		return requestSnapshot{req: req, err: &llm.Error{Kind: llm.ErrNoKey,
			Message: fmt.Sprintf("no API key for provider %s (key source: %s)", st.provider.ID, st.provider.KeySource)}}
	}
	st.refreshTools() // tools a host adapter registered since the last request
	st.refreshMCP()   // the MCP servers' table now
	ctx := st.context()
	req.System = ctx.system
	req.Messages = ctx.messages
	req.Tools = st.activeDecls()
	return requestSnapshot{req: req, provider: st.provider.Provider, entry: st.provider}
}

// afterTurn records the trace step of the turn's reply, then lets plan
// mode look at it (proposals, [DONE:] markers).
func (st *state) afterTurn(tr turnReply, toolResults int) {
	if tr.entryID != "" {
		st.appendEntry(store.CustomEntry(customTrace, tr.trace))
	}
	st.planAfterTurn(tr, toolResults)
	st.checkPressure()
}

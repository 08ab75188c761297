package session

import (
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// Disposition says what a prompt command did.
type Disposition string

// Dispositions.
const (
	Started Disposition = "started"
	Queued  Disposition = "queued"
	Handled Disposition = "handled"
)

// PromptInput is the input of prompt, steer and follow_up.
type PromptInput struct {
	Message string
	Images  []*llm.ImageContent
	// StreamingBehavior is the queue that takes the message while a run
	// is active (empty: fail with ErrBusy).
	StreamingBehavior Queue
	// Interrupt aborts the active run and starts a new one with the queued
	// steering messages followed by this message.
	Interrupt bool
	// Origin marks the user message (llm.OriginHost for a host adapter's
	// messages.sendUser), queued or not; empty: plain input (a queued one
	// then takes its queue's origin).
	Origin llm.Origin
}

// Start announces the session: session_start, then (for a fresh session)
// the initial entries (model, thinking level, system prompt, and the
// permission mode when it is not default). With Options.EagerFile the
// session file is created here. Call it once, after subscribing. A root
// session is started by its Manager, which runs the SessionStart hooks
// between the two steps; a task child calls Start itself.
func (s *Session) Start(reason string) error {
	if err := s.announce(reason); err != nil {
		return err
	}
	return s.begin()
}

// announce publishes session_start (the stream's and the host's).
func (s *Session) announce(reason string) error {
	return s.do(func(st *state) {
		s.publish(events.SessionStart{SessionID: st.id, SessionFile: st.filePath(), Cwd: st.cwd, Reason: reason})
	})
}

// begin writes the initial entries of a fresh session (after the
// SessionStart hooks, whose context is the system prompt's hooks section).
func (s *Session) begin() error {
	return s.do(func(st *state) {
		if st.announceModel {
			st.announceModel = false
			st.appendEntry(store.ModelChangeEntry(st.model.Provider, st.model.ID, ""))
		}
		if st.announceMode {
			st.announceMode = false
			st.recordMode()
		}
		if st.tree.Len() == st.preset {
			if st.model != nil {
				st.appendEntry(store.ModelChangeEntry(st.model.Provider, st.model.ID, ""))
			}
			st.appendEntry(store.ThinkingLevelEntry(st.thinkingLevel))
			st.appendEntry(store.MessageEntry(st.systemMessage()))
			if st.mode != approvals.ModeDefault {
				st.recordMode()
			}
		}
		if st.eagerFile {
			st.ensureFile()
		}
	})
}

// filePath is the session file path once the file exists.
func (st *state) filePath() string {
	if st.disk.exists() {
		return st.disk.path
	}
	return ""
}

// Prompt handles prompt (KindPrompt), steer (KindSteer) and follow_up
// (KindFollowUp). reply is called once: with Started right after the run's
// first turn_start, with Queued after the queue_update, or with an error.
func (s *Session) Prompt(kind PromptKind, in PromptInput, reply func(Disposition, error)) {
	if !s.post(func(st *state) { st.prompt(kind, in, reply) }) {
		reply("", ErrClosed)
	}
}

func (st *state) prompt(kind PromptKind, in PromptInput, reply func(Disposition, error)) {
	started := func() { reply(Started, nil) }
	failed := func(err error) { reply("", err) }
	if st.run == nil {
		if st.slashCommand(in.Message, reply) {
			return
		}
		text, err := st.expandTemplate(in.Message)
		if err != nil {
			failed(err)
			return
		}
		st.startPrompt(text, in.Images, in.Origin, started, failed)
		return
	}
	if st.run.kind != runAgent {
		reply("", fmt.Errorf("%w: a %s is in progress", ErrBusy, st.run.kind))
		return
	}
	behavior := in.StreamingBehavior
	switch kind {
	case KindSteer:
		behavior = QueueSteer
	case KindFollowUp:
		behavior = QueueFollowUp
	}
	switch {
	case in.Interrupt:
		st.interruptRun(in, started, reply)
	case behavior == QueueSteer:
		st.steering = append(st.steering, queued{text: in.Message, images: in.Images, origin: in.Origin})
		st.queueUpdate()
		reply(Queued, nil)
	case behavior == QueueFollowUp:
		st.followUp = append(st.followUp, queued{text: in.Message, images: in.Images, origin: in.Origin})
		st.queueUpdate()
		reply(Queued, nil)
	case behavior != "":
		reply("", fmt.Errorf("%w: streamingBehavior must be steer or followUp", ErrInvalidArguments))
	default:
		reply("", fmt.Errorf("%w: a run is active; send steer/follow_up, or set streamingBehavior or interrupt", ErrBusy))
	}
}

// startPrompt starts a run whose first message is a new-turn user message.
func (st *state) startPrompt(text string, images []*llm.ImageContent, origin llm.Origin, started func(), failed func(error)) {
	m := userMessage(text, images, origin, st.nowMs())
	st.startRun(text, []input{{msg: m, newRun: true}}, started, failed)
}

// interruptRun takes the queued steering messages, aborts the active run
// and, once it has settled, starts a new run with those messages followed by
// in. Interrupts that arrive before that run starts join it.
func (st *state) interruptRun(in PromptInput, started func(), reply func(Disposition, error)) {
	var parts []string
	var images []*llm.ImageContent
	for _, q := range st.steering {
		parts = append(parts, q.text)
		images = append(images, q.images...)
	}
	if strings.TrimSpace(in.Message) != "" {
		parts = append(parts, in.Message)
	}
	images = append(images, in.Images...)
	if len(parts) == 0 && st.interrupt == nil {
		reply("", fmt.Errorf("%w: interrupt needs a message or queued steering messages", ErrInvalidArguments))
		return
	}
	st.steering = nil
	st.queueUpdate()
	failed := func(err error) { reply("", err) }
	if pi := st.interrupt; pi != nil {
		pi.parts = append(pi.parts, parts...)
		pi.images = append(pi.images, images...)
		pi.started = append(pi.started, started)
		pi.fail = append(pi.fail, failed)
		st.abortRun()
		return
	}
	pi := &pendingInterrupt{parts: parts, images: images, started: []func(){started}, fail: []func(error){failed}}
	st.interrupt = pi
	st.starts = append([]pendingStart{{
		start: func() {
			st.interrupt = nil
			st.startPrompt(strings.Join(pi.parts, "\n\n"), pi.images, llm.OriginInterrupt, func() {
				for _, f := range pi.started {
					f()
				}
			}, func(err error) {
				for _, f := range pi.fail {
					f(err)
				}
			})
		},
		fail: func(err error) {
			st.interrupt = nil
			for _, f := range pi.fail {
				f(err)
			}
		},
	}}, st.starts...)
	st.abortRun()
}

// Abort aborts the active run; done is called once the session is idle.
// Queues are kept.
func (s *Session) Abort(done func()) {
	if !s.post(func(st *state) {
		st.abortRun()
		st.whenSettled(done)
	}) {
		done()
	}
}

// ClearQueue empties both queues and returns what they held.
func (s *Session) ClearQueue() (steering, followUp []string, err error) {
	type out struct{ s, f []string }
	o, err := call(s, func(st *state) out {
		o := out{texts(st.steering), texts(st.followUp)}
		st.steering, st.followUp = nil, nil
		st.queueUpdate()
		return o
	})
	return o.s, o.f, err
}

// State is a snapshot of the session for get_state. Its JSON form is the
// wire shape (the protocols encode it as it is).
type State struct {
	IsStreaming         bool          `json:"isStreaming"`
	IsCompacting        bool          `json:"isCompacting"`
	IsRetrying          bool          `json:"isRetrying"`
	Model               *llm.ModelRef `json:"model,omitempty"`
	ThinkingLevel       string        `json:"thinkingLevel"`
	PermissionMode      string        `json:"permissionMode"`
	SessionID           string        `json:"sessionId"`
	SessionFile         string        `json:"sessionFile,omitempty"`
	Cwd                 string        `json:"cwd"`
	SessionName         string        `json:"sessionName,omitempty"`
	MessageCount        int           `json:"messageCount"`
	PendingMessageCount int           `json:"pendingMessageCount"`
	SteeringMode        QueueMode     `json:"steeringMode"`
	FollowUpMode        QueueMode     `json:"followUpMode"`
	AutoCompaction      bool          `json:"autoCompaction"`
	AutoRetry           bool          `json:"autoRetry"`
	// Status is "waiting_approval" while a run is parked on deferred
	// approvals (durable.go), which WaitingApproval lists; else omitted.
	Status          string            `json:"status,omitempty"`
	WaitingApproval []WaitingApproval `json:"waitingApproval,omitempty"`
}

// State returns a snapshot.
func (s *Session) State() (State, error) {
	return call(s, func(st *state) State { return st.snapshot() })
}

// snapshot is the session's State (actor only).
func (st *state) snapshot() State {
	out := State{
		IsStreaming: st.run != nil && st.run.kind == runAgent, IsCompacting: st.compacting,
		IsRetrying: st.run != nil && st.run.retrying,
		Model:      modelRef(st.model), ThinkingLevel: st.thinkingLevel, PermissionMode: string(st.mode),
		SessionID: st.id, SessionFile: st.filePath(), Cwd: st.cwd, SessionName: st.tree.Name(),
		MessageCount: st.messageCount(), PendingMessageCount: len(st.steering) + len(st.followUp),
		SteeringMode: st.steeringMode, FollowUpMode: st.followUpMode,
		AutoCompaction: st.autoCompaction, AutoRetry: st.autoRetry,
		WaitingApproval: st.waiting(),
	}
	if len(out.WaitingApproval) > 0 && st.run == nil {
		out.Status = warningWaiting
	}
	return out
}

// Messages returns the projected context of the active branch.
func (s *Session) Messages() ([]llm.Message, error) {
	return call(s, func(st *state) []llm.Message { return st.context().messages })
}

// LastAssistantText returns the text of the last assistant message on the
// branch, or nil when there is none.
func (s *Session) LastAssistantText() (*string, error) {
	return call(s, func(st *state) *string {
		msgs := st.context().messages
		for i := len(msgs) - 1; i >= 0; i-- {
			if a, ok := msgs[i].(*llm.AssistantMessage); ok {
				t := a.Text("")
				return &t
			}
		}
		return nil
	})
}

// SetModel switches the model.
func (s *Session) SetModel(provider, id string) (llm.ModelRef, error) {
	type out struct {
		ref llm.ModelRef
		err error
	}
	o, err := call(s, func(st *state) out {
		m, p, err := st.s.deps.Models.Find(provider, id)
		if err != nil {
			return out{err: err}
		}
		st.model, st.provider = m, p
		st.appendEntry(store.ModelChangeEntry(m.Provider, m.ID, ""))
		ref := *modelRef(m)
		s.publish(events.ModelChanged{Model: ref})
		return out{ref: ref}
	})
	if err != nil {
		return llm.ModelRef{}, err
	}
	return o.ref, o.err
}

// SetThinkingLevel sets the thinking level.
func (s *Session) SetThinkingLevel(level string) (string, error) {
	if !llm.ValidThinkingLevel(level) {
		return "", fmt.Errorf("%w: level must be one of %s", ErrInvalidArguments, strings.Join(llm.ThinkingLevels, ", "))
	}
	return call(s, func(st *state) string {
		if st.thinkingLevel != level {
			st.thinkingLevel = level
			st.appendEntry(store.ThinkingLevelEntry(level))
			s.publish(events.ThinkingLevelChanged{Level: level})
			st.pauseWarm() // a new thinking level makes the warm replay stale
		}
		return level
	})
}

// ThinkingLevels returns the levels the current model supports.
func (s *Session) ThinkingLevels() ([]string, error) {
	return call(s, func(st *state) []string { return llm.LevelsFor(st.model) })
}

// SetPermissionMode changes the permission mode and reports
// permission_mode_changed.
func (s *Session) SetPermissionMode(mode string) (string, error) {
	m, err := parseMode(mode)
	if err != nil {
		return "", err
	}
	return call(s, func(st *state) string {
		st.setMode(m)
		return mode
	})
}

// parseMode validates a permission mode name.
func parseMode(mode string) (approvals.Mode, error) {
	m, err := approvals.ParseMode(mode)
	if err != nil {
		names := make([]string, len(approvals.Modes))
		for i, x := range approvals.Modes {
			names[i] = string(x)
		}
		return "", fmt.Errorf("%w: unknown permission mode %q (one of %s)", ErrInvalidArguments, mode, strings.Join(names, ", "))
	}
	return m, nil
}

// SetQueueMode sets the delivery mode of the steering or follow-up queue.
func (s *Session) SetQueueMode(which Queue, mode QueueMode) (QueueMode, error) {
	if !mode.Valid() {
		return "", fmt.Errorf("%w: mode must be one-at-a-time or all", ErrInvalidArguments)
	}
	return call(s, func(st *state) QueueMode {
		if which == QueueSteer {
			st.steeringMode = mode
		} else {
			st.followUpMode = mode
		}
		return mode
	})
}

// SetAutoRetry turns automatic retries on or off.
func (s *Session) SetAutoRetry(on bool) (bool, error) {
	return call(s, func(st *state) bool { st.autoRetry = on; return on })
}

// SetAutoCompaction turns automatic compaction on or off.
func (s *Session) SetAutoCompaction(on bool) (bool, error) {
	return call(s, func(st *state) bool { st.autoCompaction = on; return on })
}

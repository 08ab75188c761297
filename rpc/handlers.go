package rpc

import (
	"encoding/json"
	"fmt"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

type handler func(s *Server, c *command)

// Every command is registered through one of two adapters, in the style of
// the go-sdk's newServerMethodInfo[P, R]: the adapter decodes the command
// into P (exact keys, see params; a bad one is invalid_arguments, answered
// at once), so no handler decodes by hand. A command without parameters
// takes none.
//
//   - typed: the handler answers at once: it validates, returns its result
//     or error, and the adapter answers exactly once.
//   - async: the handler answers through the reply it is handed, exactly
//     once, now or later (a run's callback); the reply is owed from the
//     start (s.later), so the shutdown waits for it.
//
// A result that writes its own response line (get_tree's, in pieces)
// implements selfWriting.

// none is the parameters of a command that takes none.
type none struct{}

// reply gives a command's one answer: data, or the error's wire code.
type reply = func(data any, err error)

func typed[P, R any](h func(s *Server, c *command, p *P) (R, error)) handler {
	return func(s *Server, c *command) {
		var p P
		if err := params(c, &p); err != nil {
			s.fail(c, err)
			return
		}
		r, err := h(s, c, &p)
		s.answer(c, r, err)
	}
}

func async[P any](h func(s *Server, c *command, p *P, r reply)) handler {
	return func(s *Server, c *command) {
		var p P
		if err := params(c, &p); err != nil {
			s.fail(c, err)
			return
		}
		h(s, c, &p, s.later(c))
	}
}

// handlers maps command names to their implementation.
var handlers map[string]handler

// init fills handlers because a literal initialiser would be an
// initialisation cycle: handlers → handlePlanResponse (approve_fresh) → endSwitch →
// dispatch → handlers.
func init() {
	handlers = map[string]handler{
		string(session.KindPrompt):      async(handlePrompt),
		string(session.KindSteer):       async(handlePrompt),
		string(session.KindFollowUp):    async(handlePrompt),
		"abort":                         async(handleAbort),
		"clear_queue":                   typed(handleClearQueue),
		"get_state":                     typed(handleGetState),
		"get_messages":                  typed(handleGetMessages),
		"get_last_assistant_text":       typed(handleLastText),
		"get_session_stats":             typed(handleStats),
		"permission_inspect":            typed(handleInspect),
		"set_model":                     typed(handleSetModel),
		"get_available_models":          typed(handleModels),
		"set_thinking_level":            typed(handleSetThinking),
		"get_available_thinking_levels": typed(handleThinkingLevels),
		"set_steering_mode":             typed(handleQueueMode),
		"set_follow_up_mode":            typed(handleQueueMode),
		"set_auto_compaction":           typed(handleToggle),
		"set_auto_retry":                typed(handleToggle),
		"set_client_capabilities":       async(handleCapabilities),
		"permission_response":           async(handlePermissionResponse),
		"get_tools":                     typed(handleGetTools),
		"set_active_tools":              typed(handleSetActiveTools),
		"set_permission_mode":           typed(handleSetMode),
		"get_commands":                  typed(handleCommands),
		"get_skills":                    typed(handleSkills),
		"abort_retry":                   async(handleAbortRetry),
		"plan_response":                 async(handlePlanResponse),
		"get_plan":                      typed(handleGetPlan),
		"get_todos":                     typed(handleGetTodos),
		"compact":                       async(handleCompact),
		"get_rewind_points":             typed(handleRewindPoints),
		"rewind":                        typed(handleRewind),
		"summarize_from":                async(handleSummarizeFrom),
		"summarize_up_to":               async(handleSummarizeUpTo),
		"get_tasks":                     typed(handleGetTasks),
		"get_agents":                    typed(handleGetAgents),
		"background_task":               async(handleBackgroundTask),
		"new_session":                   async(handleNewSession),
		"switch_session":                async(handleSwitchSession),
		"fork":                          async(handleFork),
		"get_entries":                   typed(handleGetEntries),
		"get_tree":                      typed(handleGetTree),
		"set_session_name":              typed(handleSetSessionName),
		"get_fork_messages":             typed(handleForkMessages),
		"get_trace":                     typed(handleGetTrace),
		"replay":                        typed(handleReplay),
	}
}

// pendingCommands are protocol commands that answer not_implemented until
// their issue lands (see the README status table).
var pendingCommands = map[string]bool{}

type imageParam struct {
	Type     string      `json:"type"`
	Data     jsonlit.Lit `json:"data"`
	MimeType string      `json:"mimeType"`
}

func toImages(in []imageParam) ([]*llm.ImageContent, error) {
	var out []*llm.ImageContent
	for i, im := range in {
		if im.Type != "" && im.Type != "image" {
			return nil, fmt.Errorf("%w: images[%d] has type %q; images must be {type:\"image\",data,mimeType}", errInvalidParams, i, im.Type)
		}
		if len(im.Data) <= len(`""`) || im.MimeType == "" {
			return nil, fmt.Errorf("%w: images[%d] needs data and mimeType", errInvalidParams, i)
		}
		data := im.Data.Text()
		if err := llm.ValidateImage(data, im.MimeType); err != nil {
			return nil, fmt.Errorf("%w: images[%d]: %v", errInvalidParams, i, err)
		}
		out = append(out, llm.Image(data, im.MimeType))
	}
	return out, nil
}

func handlePrompt(s *Server, c *command, p *promptParams, reply reply) {
	interrupt := false
	if len(p.Interrupt) > 0 && string(p.Interrupt) != "null" {
		if err := json.Unmarshal(p.Interrupt, &interrupt); err != nil {
			reply(nil, fmt.Errorf("%w: interrupt must be a boolean", errInvalidParams))
			return
		}
	}
	if p.Message == nil {
		reply(nil, fmt.Errorf("%w: message must be a string", errInvalidParams))
		return
	}
	if !session.Queue(p.StreamingBehavior).Valid() {
		reply(nil, fmt.Errorf("%w: streamingBehavior must be steer or followUp", errInvalidParams))
		return
	}
	images, err := toImages(p.Images)
	if err != nil {
		reply(nil, err)
		return
	}
	in := session.PromptInput{Message: p.Message.Text(), Images: images, StreamingBehavior: session.Queue(p.StreamingBehavior), Interrupt: interrupt}
	kind := session.PromptKind(c.name) // the command names are the kinds
	if kind == session.KindFollowUp {
		in.Interrupt = false
	}
	s.current().Prompt(kind, in, func(d session.Disposition, err error) {
		if err != nil {
			reply(nil, err)
			return
		}
		reply(promptResult{d}, nil)
	})
}

func handleAbort(s *Server, _ *command, _ *none, reply reply) {
	s.current().Abort(func() { reply(empty{}, nil) })
}

func handleClearQueue(s *Server, _ *command, _ *none) (any, error) {
	st, fu, err := s.current().ClearQueue()
	return clearQueueResult{st, fu}, err
}

func handleGetState(s *Server, _ *command, _ *none) (wireState, error) {
	st, err := s.current().State()
	ws := wireState{State: st}
	if s.opts.Sessions != nil {
		ws.Sandbox = s.opts.Sessions.Deps().Sandbox.Report()
	}
	return ws, err
}

func handleGetMessages(s *Server, _ *command, _ *none) (any, error) {
	msgs, err := s.current().Messages()
	if msgs == nil {
		msgs = []llm.Message{}
	}
	return messagesResult{msgs}, err
}

func handleLastText(s *Server, _ *command, _ *none) (any, error) {
	t, err := s.current().LastAssistantText()
	return lastTextResult{t}, err
}

func handleStats(s *Server, _ *command, _ *none) (any, error) {
	st, err := s.current().Stats()
	return toWireStats(st), err
}

type setModelParams struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

type modelResult struct {
	Model llm.ModelRef `json:"model"`
}

func handleSetModel(s *Server, _ *command, p *setModelParams) (modelResult, error) {
	ref, err := s.current().SetModel(p.Provider, p.ModelID)
	return modelResult{ref}, err
}

func handleModels(s *Server, _ *command, _ *none) (any, error) {
	return modelsResult{wireModels(s.opts.Models)}, nil
}

type levelParams struct {
	Level string `json:"level"`
}

func handleSetThinking(s *Server, _ *command, p *levelParams) (levelParams, error) {
	level, err := s.current().SetThinkingLevel(p.Level)
	return levelParams{level}, err
}

func handleThinkingLevels(s *Server, _ *command, _ *none) (any, error) {
	levels, err := s.current().ThinkingLevels()
	return levelsResult{levels}, err
}

type modeParams struct {
	Mode string `json:"mode"`
}

func handleQueueMode(s *Server, c *command, p *modeParams) (modeParams, error) {
	which := session.QueueSteer
	if c.name == "set_follow_up_mode" {
		which = session.QueueFollowUp
	}
	mode, err := s.current().SetQueueMode(which, session.QueueMode(p.Mode))
	return modeParams{string(mode)}, err
}

type toggleParams struct {
	Enabled *bool `json:"enabled"`
}

type toggleResult struct {
	Enabled bool `json:"enabled"`
}

func handleToggle(s *Server, c *command, p *toggleParams) (toggleResult, error) {
	if p.Enabled == nil {
		return toggleResult{}, fmt.Errorf("%w: enabled must be a boolean", errInvalidParams)
	}
	var on bool
	var err error
	if c.name == "set_auto_retry" {
		on, err = s.current().SetAutoRetry(*p.Enabled)
	} else {
		on, err = s.current().SetAutoCompaction(*p.Enabled)
	}
	return toggleResult{on}, err
}

// handleInspect answers permission_inspect: read-only permission
// diagnostics of the current session (session.InspectPermissions).
func handleInspect(s *Server, _ *command, p *inspectParams) (any, error) {
	return s.current().InspectPermissions(p.Action)
}

func handleCapabilities(s *Server, _ *command, p *capabilitiesParams, reply reply) {
	seen := map[string]bool{}
	caps := []string{}
	for _, x := range p.Capabilities {
		if !seen[x] {
			seen[x] = true
			caps = append(caps, x)
		}
	}
	set := capSet(seen)
	s.client.Store(&set)
	s.compact.Store(seen["compact_events"])
	s.plans.Store(seen["plans"])
	s.opts.Broker.SetAttended(seen["approvals"])
	s.current().SetPlanAttended(seen["plans"])
	durable := seen["durable_approvals"]
	was := s.durable.Swap(durable)
	s.current().SetDurableApprovals(durable)
	reply(capabilitiesResult{caps, s.setEventSeq(wantsEventSeq(seen))}, nil)
	if durable && !was {
		s.current().ReopenApprovals(false) // requests a killed process left open, after the answer
	}
}

// handlePermissionResponse answers before the waiting run goes on (the
// broker calls back before it hands the decision over).
func handlePermissionResponse(s *Server, _ *command, p *permissionResponseParams, reply reply) {
	if p.RequestID == "" {
		reply(nil, fmt.Errorf("%w: requestId must be a non-empty string", errInvalidParams))
		return
	}
	durable := s.durable.Load()
	if !p.Decision.Valid() && (!durable || p.Decision != events.ApprovalDefer) {
		reply(nil, fmt.Errorf("%w: decision must be allow, deny or allow_session", errInvalidParams))
		return
	}
	if durable {
		// A parked (deferred) request is answered by its session; a
		// request already resolved is approval_resolved.
		known, err := s.current().AnswerApproval(p.RequestID, p.Decision, func() {
			reply(acceptedResult{true}, nil)
		})
		if err != nil {
			reply(nil, err)
			return
		}
		if known {
			return
		}
	}
	s.opts.Broker.Respond(p.RequestID, p.Decision, func(accepted bool) {
		reply(acceptedResult{accepted}, nil)
	})
}

func handleGetTools(s *Server, _ *command, _ *none) (any, error) {
	list, err := s.current().Tools()
	out := make([]wireTool, 0, len(list))
	for _, t := range list {
		out = append(out, wireTool{Name: t.Decl.Name, Description: t.Decl.Description, Parameters: t.Decl.Parameters,
			Permission: t.Permission, Active: t.Active, MCPServer: t.Server})
	}
	return toolsResult{out}, err
}

func handleSetActiveTools(s *Server, _ *command, p *namesParams) (namesParams, error) {
	if p.Names == nil {
		return namesParams{}, fmt.Errorf("%w: names must be an array of tool names ([] turns every tool off)", errInvalidParams)
	}
	names, err := s.current().SetActiveTools(p.Names)
	return namesParams{names}, err
}

func handleSetMode(s *Server, _ *command, p *modeParams) (modeParams, error) {
	mode, err := s.current().SetPermissionMode(p.Mode)
	return modeParams{mode}, err
}

func handleCommands(s *Server, _ *command, _ *none) (any, error) {
	out := []wireCommand{}
	for _, cmd := range s.current().Commands() {
		out = append(out, wireCommand{Name: cmd.Name, Description: sessionText(cmd.Key, cmd.Description, s.opts.Lang), Source: cmd.Source, ArgumentHint: cmd.ArgumentHint})
	}
	return commandsResult{out}, nil
}

func handleSkills(s *Server, _ *command, _ *none) (any, error) {
	out := []wireSkill{}
	for _, sk := range s.current().Skills() {
		out = append(out, wireSkill{sk.Name, sk.Description, sk.Location, sk.Source})
	}
	return skillsResult{out}, nil
}

func handleAbortRetry(s *Server, _ *command, _ *none, reply reply) {
	s.current().AbortRetry(func(aborted bool) {
		reply(abortedResult{aborted}, nil)
	})
}

package rpc

import (
	"encoding/json"
	"fmt"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

type handler func(s *Server, c *command)

// typed adapts a handler that answers at once, in the style of the go-sdk's
// newServerMethodInfo[P, R]: the adapter decodes the command into P (exact
// keys, see params; a bad one is invalid_arguments), the handler validates
// and returns its result or error, and the adapter answers exactly once.
// Handlers that answer later (s.later) or need the raw line take the
// command itself.
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

// handlers maps command names to their implementation.
var handlers map[string]handler

// init fills handlers because a literal initialiser would be an
// initialisation cycle: handlers → handlePlanResponse (approve_fresh) → endSwitch →
// dispatch → handlers.
func init() {
	handlers = map[string]handler{
		string(session.KindPrompt):      handlePrompt,
		string(session.KindSteer):       handlePrompt,
		string(session.KindFollowUp):    handlePrompt,
		"abort":                         handleAbort,
		"clear_queue":                   handleClearQueue,
		"get_state":                     handleGetState,
		"get_messages":                  handleGetMessages,
		"get_last_assistant_text":       handleLastText,
		"get_session_stats":             handleStats,
		"permission_inspect":            typed(handleInspect),
		"set_model":                     typed(handleSetModel),
		"get_available_models":          handleModels,
		"set_thinking_level":            typed(handleSetThinking),
		"get_available_thinking_levels": handleThinkingLevels,
		"set_steering_mode":             typed(handleQueueMode),
		"set_follow_up_mode":            typed(handleQueueMode),
		"set_auto_compaction":           typed(handleToggle),
		"set_auto_retry":                typed(handleToggle),
		"set_client_capabilities":       handleCapabilities,
		"permission_response":           handlePermissionResponse,
		"get_tools":                     handleGetTools,
		"set_active_tools":              handleSetActiveTools,
		"set_permission_mode":           handleSetMode,
		"get_commands":                  handleCommands,
		"get_skills":                    handleSkills,
		"abort_retry":                   handleAbortRetry,
		"plan_response":                 handlePlanResponse,
		"get_plan":                      handleGetPlan,
		"get_todos":                     handleGetTodos,
		"compact":                       handleCompact,
		"get_rewind_points":             handleRewindPoints,
		"rewind":                        handleRewind,
		"summarize_from":                handleSummarizeFrom,
		"summarize_up_to":               handleSummarizeUpTo,
		"get_tasks":                     handleGetTasks,
		"get_agents":                    handleGetAgents,
		"background_task":               handleBackgroundTask,
		"new_session":                   handleNewSession,
		"switch_session":                handleSwitchSession,
		"fork":                          handleFork,
		"get_entries":                   handleGetEntries,
		"get_tree":                      handleGetTree,
		"set_session_name":              handleSetSessionName,
		"get_fork_messages":             handleForkMessages,
		"get_trace":                     handleGetTrace,
	}
}

// pendingCommands are protocol commands that answer not_implemented until
// their issue lands (see the README status table).
var pendingCommands = map[string]bool{}

type imageParam struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

func toImages(in []imageParam) ([]*llm.ImageContent, error) {
	var out []*llm.ImageContent
	for i, im := range in {
		if im.Type != "" && im.Type != "image" {
			return nil, fmt.Errorf("%w: images[%d] has type %q; images must be {type:\"image\",data,mimeType}", errInvalidParams, i, im.Type)
		}
		if im.Data == "" || im.MimeType == "" {
			return nil, fmt.Errorf("%w: images[%d] needs data and mimeType", errInvalidParams, i)
		}
		if err := llm.ValidateImage(im.Data, im.MimeType); err != nil {
			return nil, fmt.Errorf("%w: images[%d]: %v", errInvalidParams, i, err)
		}
		out = append(out, llm.Image(im.Data, im.MimeType))
	}
	return out, nil
}

func handlePrompt(s *Server, c *command) {
	var p struct {
		Message           *string         `json:"message"`
		Images            []imageParam    `json:"images"`
		StreamingBehavior string          `json:"streamingBehavior"`
		Interrupt         json.RawMessage `json:"interrupt"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	interrupt := false
	if len(p.Interrupt) > 0 && string(p.Interrupt) != "null" {
		if err := json.Unmarshal(p.Interrupt, &interrupt); err != nil {
			s.fail(c, fmt.Errorf("%w: interrupt must be a boolean", errInvalidParams))
			return
		}
	}
	if p.Message == nil {
		s.fail(c, fmt.Errorf("%w: message must be a string", errInvalidParams))
		return
	}
	if !session.Queue(p.StreamingBehavior).Valid() {
		s.fail(c, fmt.Errorf("%w: streamingBehavior must be steer or followUp", errInvalidParams))
		return
	}
	images, err := toImages(p.Images)
	if err != nil {
		s.fail(c, err)
		return
	}
	in := session.PromptInput{Message: *p.Message, Images: images, StreamingBehavior: session.Queue(p.StreamingBehavior), Interrupt: interrupt}
	kind := session.PromptKind(c.name) // the command names are the kinds
	if kind == session.KindFollowUp {
		in.Interrupt = false
	}
	reply := s.later(c)
	s.current().Prompt(kind, in, func(d session.Disposition, err error) {
		if err != nil {
			reply(nil, err)
			return
		}
		reply(struct {
			Disposition session.Disposition `json:"disposition"`
		}{d}, nil)
	})
}

func handleAbort(s *Server, c *command) {
	reply := s.later(c)
	s.current().Abort(func() { reply(empty{}, nil) })
}

func handleClearQueue(s *Server, c *command) {
	st, fu, err := s.current().ClearQueue()
	s.answer(c, struct {
		Steering []string `json:"steering"`
		FollowUp []string `json:"followUp"`
	}{st, fu}, err)
}

func handleGetState(s *Server, c *command) {
	st, err := s.current().State()
	ws := wireState{State: st}
	if s.opts.Sessions != nil {
		ws.Sandbox = s.opts.Sessions.Deps().Sandbox.Report()
	}
	s.answer(c, ws, err)
}

func handleGetMessages(s *Server, c *command) {
	msgs, err := s.current().Messages()
	if msgs == nil {
		msgs = []llm.Message{}
	}
	s.answer(c, struct {
		Messages []llm.Message `json:"messages"`
	}{msgs}, err)
}

func handleLastText(s *Server, c *command) {
	t, err := s.current().LastAssistantText()
	s.answer(c, struct {
		Text *string `json:"text"`
	}{t}, err)
}

func handleStats(s *Server, c *command) {
	st, err := s.current().Stats()
	s.answer(c, toWireStats(st), err)
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

func handleModels(s *Server, c *command) {
	s.ok(c, struct {
		Models []wireModel `json:"models"`
	}{wireModels(s.opts.Models)})
}

type levelParams struct {
	Level string `json:"level"`
}

func handleSetThinking(s *Server, _ *command, p *levelParams) (levelParams, error) {
	level, err := s.current().SetThinkingLevel(p.Level)
	return levelParams{level}, err
}

func handleThinkingLevels(s *Server, c *command) {
	levels, err := s.current().ThinkingLevels()
	s.answer(c, struct {
		Levels []string `json:"levels"`
	}{levels}, err)
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
func handleInspect(s *Server, _ *command, p *struct {
	Action string `json:"action"`
}) (any, error) {
	return s.current().InspectPermissions(p.Action)
}

func handleCapabilities(s *Server, c *command) {
	var p struct {
		Capabilities []string `json:"capabilities"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
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
	s.ok(c, struct {
		Capabilities []string `json:"capabilities"`
	}{caps})
}

func handlePermissionResponse(s *Server, c *command) {
	var p struct {
		RequestID string          `json:"requestId"`
		Decision  events.Approval `json:"decision"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	if p.RequestID == "" {
		s.fail(c, fmt.Errorf("%w: requestId must be a non-empty string", errInvalidParams))
		return
	}
	if !p.Decision.Valid() {
		s.fail(c, fmt.Errorf("%w: decision must be allow, deny or allow_session", errInvalidParams))
		return
	}
	s.opts.Broker.Respond(p.RequestID, p.Decision, func(accepted bool) {
		s.ok(c, struct {
			Accepted bool `json:"accepted"`
		}{accepted})
	})
}

func handleGetTools(s *Server, c *command) {
	list, err := s.current().Tools()
	out := make([]wireTool, 0, len(list))
	for _, t := range list {
		out = append(out, wireTool{Name: t.Decl.Name, Description: t.Decl.Description, Parameters: t.Decl.Parameters,
			Permission: t.Permission, Active: t.Active, MCPServer: t.Server})
	}
	s.answer(c, struct {
		Tools []wireTool `json:"tools"`
	}{out}, err)
}

func handleSetActiveTools(s *Server, c *command) {
	var p struct {
		Names []string `json:"names"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	if p.Names == nil {
		s.fail(c, fmt.Errorf("%w: names must be an array of tool names ([] turns every tool off)", errInvalidParams))
		return
	}
	names, err := s.current().SetActiveTools(p.Names)
	s.answer(c, struct {
		Names []string `json:"names"`
	}{names}, err)
}

func handleSetMode(s *Server, c *command) {
	var p struct {
		Mode string `json:"mode"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	mode, err := s.current().SetPermissionMode(p.Mode)
	s.answer(c, struct {
		Mode string `json:"mode"`
	}{mode}, err)
}

func handleCommands(s *Server, c *command) {
	out := []wireCommand{}
	for _, cmd := range s.current().Commands() {
		out = append(out, wireCommand{Name: cmd.Name, Description: cmd.Description, Source: cmd.Source, ArgumentHint: cmd.ArgumentHint})
	}
	s.ok(c, struct {
		Commands []wireCommand `json:"commands"`
	}{out})
}

func handleSkills(s *Server, c *command) {
	type wireSkill struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Location    string `json:"location"`
		Source      string `json:"source"`
	}
	out := []wireSkill{}
	for _, sk := range s.current().Skills() {
		out = append(out, wireSkill{sk.Name, sk.Description, sk.Location, sk.Source})
	}
	s.ok(c, struct {
		Skills []wireSkill `json:"skills"`
	}{out})
}

func handleAbortRetry(s *Server, c *command) {
	reply := s.later(c)
	s.current().AbortRetry(func(aborted bool) {
		reply(struct {
			Aborted bool `json:"aborted"`
		}{aborted}, nil)
	})
}

package rpc

import (
	"encoding/json"
	"reflect"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// The named wire types of the commands (parameters and success data) that
// are not declared beside their handler. Each handler decodes into and
// answers with these types, so the schema (package rpc/schema, through
// CommandWires) is inferred from what the server really reads and writes.

// promptParams: the message and the images' data are decoded in place
// (jsonlit), a huge one not copied out of the command line.
type promptParams struct {
	Message           *jsonlit.Lit `json:"message"`
	Images            []imageParam `json:"images,omitempty"`
	StreamingBehavior string       `json:"streamingBehavior,omitempty"`
	// Interrupt is decoded by the handler (a precise error for a
	// non-boolean); the schema says boolean (rpc/schema rawMembers).
	Interrupt json.RawMessage `json:"interrupt,omitempty"`
}

// liftPaths are where a prompt's huge literals sit (params, lifting).
func (*promptParams) liftPaths() []string { return []string{"message", "images[].data"} }

// resolve gives the message and the images' data their lifted literals.
func (p *promptParams) resolve(l *jsonlit.Lifted) {
	if l == nil {
		return
	}
	if p.Message != nil {
		*p.Message = l.Lit(*p.Message)
	}
	for i := range p.Images {
		p.Images[i].Data = l.Lit(p.Images[i].Data)
	}
}

type promptResult struct {
	Disposition session.Disposition `json:"disposition"`
}

type clearQueueResult struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

type messagesResult struct {
	Messages []llm.Message `json:"messages"`
}

type lastTextResult struct {
	Text *string `json:"text"`
}

type modelsResult struct {
	Models []wireModel `json:"models"`
}

type levelsResult struct {
	Levels []string `json:"levels"`
}

type inspectParams struct {
	Action string `json:"action,omitempty"`
}

type capabilitiesParams struct {
	Capabilities []string `json:"capabilities,omitempty"`
}

type permissionResponseParams struct {
	RequestID string          `json:"requestId"`
	Decision  events.Approval `json:"decision"`
}

type acceptedResult struct {
	Accepted bool `json:"accepted"`
}

type toolsResult struct {
	Tools []wireTool `json:"tools"`
}

type namesParams struct {
	Names []string `json:"names"`
}

type commandsResult struct {
	Commands []wireCommand `json:"commands"`
}

type wireSkill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Location    string `json:"location"`
	Source      string `json:"source"`
}

type skillsResult struct {
	Skills []wireSkill `json:"skills"`
}

type abortedResult struct {
	Aborted bool `json:"aborted"`
}

type planResponseParams struct {
	PlanID         string `json:"planId"`
	Decision       string `json:"decision"`
	Mode           string `json:"mode,omitempty"`
	Feedback       string `json:"feedback,omitempty"`
	EditedMarkdown string `json:"editedMarkdown,omitempty"`
}

type planResponseResult struct {
	PlanID   string `json:"planId"`
	Decision string `json:"decision"`
}

type getPlanParams struct {
	PlanID string `json:"planId,omitempty"`
}

type wireRewindPoint struct {
	EntryID       string `json:"entryId"`
	Text          string `json:"text"`
	Timestamp     int64  `json:"timestamp"`
	HasCheckpoint bool   `json:"hasCheckpoint"`
}

type rewindPointsResult struct {
	Points []wireRewindPoint `json:"points"`
}

type rewindParams struct {
	EntryID    string `json:"entryId"`
	Mode       string `json:"mode,omitempty"`
	DryRun     bool   `json:"dryRun,omitempty"`
	OnConflict string `json:"onConflict,omitempty"`
}

type summarizeParams struct {
	EntryID      string `json:"entryId"`
	Instructions string `json:"instructions,omitempty"`
}

type summarizeFromResult struct {
	LeafID  *string   `json:"leafId"`
	Draft   wireDraft `json:"draft"`
	Summary string    `json:"summary,omitempty"`
}

type compactParams struct {
	CustomInstructions string `json:"customInstructions,omitempty"`
}

type switchSessionParams struct {
	SessionPath string `json:"sessionPath"`
}

type forkParams struct {
	EntryID string `json:"entryId"`
}

type entriesParams struct {
	Since string `json:"since,omitempty"`
}

type entriesResult struct {
	Entries []*store.Entry `json:"entries"`
	LeafID  *string        `json:"leafId"`
}

// treeResult is get_tree's data, which store writes itself in pieces
// (store.NodesJSON): it is listed for the schema only.
type treeResult struct {
	Tree []*store.Node `json:"tree"`
}

type nameParams struct {
	Name string `json:"name"`
}

type wireForkMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

type forkMessagesResult struct {
	Messages []wireForkMessage `json:"messages"`
}

type tasksResult struct {
	Tasks []session.TaskInfo `json:"tasks"`
}

type agentsResult struct {
	Agents []session.AgentInfo `json:"agents"`
}

type backgroundParams struct {
	// TaskID is decoded by the handler (string or null).
	TaskID json.RawMessage `json:"taskId,omitempty"`
}

type backgroundResult struct {
	Backgrounded []string `json:"backgrounded"`
}

type traceParams struct {
	Branch string `json:"branch,omitempty"`
	// TurnLimit is decoded by the handler (a number; trace validates it).
	TurnLimit json.RawMessage `json:"turnLimit,omitempty"`
	Before    string          `json:"before,omitempty"`
	Since     string          `json:"since,omitempty"`
	TaskID    string          `json:"taskId,omitempty"`
	Content   string          `json:"content,omitempty"`
	// Decisions (ama-rpc's): the permission decision records on the calls.
	Decisions bool `json:"decisions,omitempty"`
}

// CommandWire is one command's wire types. Params is the type its members
// beside id and type decode into (nil: it reads none); Data lists the
// types its success data may have (more than one: any of them); Null says
// the data may be null.
type CommandWire struct {
	Params reflect.Type
	Data   []reflect.Type
	Null   bool
}

func wire[P, D any]() CommandWire {
	return CommandWire{Params: reflect.TypeFor[P](), Data: []reflect.Type{reflect.TypeFor[D]()}}
}

func noParams[D any]() CommandWire {
	return CommandWire{Data: []reflect.Type{reflect.TypeFor[D]()}}
}

// CommandWires returns the wire types of every command of the handlers
// table (TestCommandWiresComplete keeps the two in step).
func CommandWires() map[string]CommandWire {
	inspect := wire[inspectParams, session.InspectStatusView]()
	inspect.Data = append(inspect.Data, reflect.TypeFor[session.InspectConfigView](),
		reflect.TypeFor[session.InspectDefaultsView](), reflect.TypeFor[[]permlog.Denial]())
	getPlan := wire[getPlanParams, plan.Plan]()
	getPlan.Null = true
	return map[string]CommandWire{
		string(session.KindPrompt):      wire[promptParams, promptResult](),
		string(session.KindSteer):       wire[promptParams, promptResult](),
		string(session.KindFollowUp):    wire[promptParams, promptResult](),
		"abort":                         noParams[empty](),
		"clear_queue":                   noParams[clearQueueResult](),
		"get_state":                     noParams[wireState](),
		"get_messages":                  noParams[messagesResult](),
		"get_last_assistant_text":       noParams[lastTextResult](),
		"get_session_stats":             noParams[wireStats](),
		"permission_inspect":            inspect,
		"set_model":                     wire[setModelParams, modelResult](),
		"get_available_models":          noParams[modelsResult](),
		"set_thinking_level":            wire[levelParams, levelParams](),
		"get_available_thinking_levels": noParams[levelsResult](),
		"set_steering_mode":             wire[modeParams, modeParams](),
		"set_follow_up_mode":            wire[modeParams, modeParams](),
		"set_auto_compaction":           wire[toggleParams, toggleResult](),
		"set_auto_retry":                wire[toggleParams, toggleResult](),
		"set_client_capabilities":       wire[capabilitiesParams, capabilitiesResult](),
		"replay":                        wire[replayParams, replaySnapshot](),
		"permission_response":           wire[permissionResponseParams, acceptedResult](),
		"get_tools":                     noParams[toolsResult](),
		"set_active_tools":              wire[namesParams, namesParams](),
		"set_permission_mode":           wire[modeParams, modeParams](),
		"get_commands":                  noParams[commandsResult](),
		"get_skills":                    noParams[skillsResult](),
		"abort_retry":                   noParams[abortedResult](),
		"plan_response":                 wire[planResponseParams, planResponseResult](),
		"get_plan":                      getPlan,
		"get_todos":                     noParams[plan.TodoList](),
		"compact":                       wire[compactParams, session.CompactionResult](),
		"get_rewind_points":             noParams[rewindPointsResult](),
		"rewind":                        wire[rewindParams, wireRewind](),
		"summarize_from":                wire[summarizeParams, summarizeFromResult](),
		"summarize_up_to":               wire[summarizeParams, session.CompactionResult](),
		"get_tasks":                     noParams[tasksResult](),
		"get_agents":                    noParams[agentsResult](),
		"background_task":               wire[backgroundParams, backgroundResult](),
		"new_session":                   noParams[sessionRef](),
		"switch_session":                wire[switchSessionParams, sessionRef](),
		"fork":                          wire[forkParams, sessionRef](),
		"get_entries":                   wire[entriesParams, entriesResult](),
		"get_tree":                      noParams[treeResult](),
		"set_session_name":              wire[nameParams, nameParams](),
		"get_fork_messages":             noParams[forkMessagesResult](),
		"get_trace":                     wire[traceParams, trace.Result](),
	}
}

type capabilitiesResult struct {
	Capabilities []string `json:"capabilities"`
	// SeqBase (capability event_seq): the cursor that replays the
	// current session's numbered stream from its first line.
	SeqBase *uint64 `json:"seqBase,omitempty"`
}

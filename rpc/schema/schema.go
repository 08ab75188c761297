package schema

// The schemas are inferred by github.com/google/jsonschema-go (ForType):
// it is already in the module graph (the MCP SDK's), targets draft
// 2020-12 and reads the encoding/json tags, so each definition is derived
// from the type the server encodes instead of being a second, hand-written
// description that could drift. Only the types whose JSON the Go type
// does not describe are written here (overrides below, each saying why).

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// Draft is the JSON Schema dialect of the document.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// FileName is the file Write creates.
const FileName = "rpc.schema.json"

// Stability says whether a definition may change without a protocol
// version bump.
type Stability string

// The stabilities. Stable: the shape is ama's (its reference transcripts
// show it), hosts may rely on it. Experimental: ama-rpc's own additions,
// which may still change.
const (
	Stable       Stability = "stable"
	Experimental Stability = "experimental"
)

// Event is one event of the protocol with its stability.
type Event struct {
	Event     events.Event
	Stability Stability
}

// Events lists every event type of package events (the set is closed;
// TestEventsListComplete checks this list against the package's Type
// methods).
func Events() []Event {
	s, x := Stable, Experimental
	return []Event{
		{events.SessionStart{}, s}, {events.SessionChanged{}, x}, {events.SessionRewound{}, s},
		{events.BeforeAgentStart{}, s}, {events.AgentStart{}, s}, {events.TurnStart{}, s}, {events.TurnEnd{}, s},
		{events.AgentEnd{}, s}, {events.AgentBeforeSettle{}, s}, {events.AgentSettled{}, s},
		{events.MessageStart{}, s}, {events.MessageEnd{}, s}, {events.MessageUpdate{}, s},
		{events.QueueUpdate{}, s}, {events.EntryAppended{}, s}, {events.Notification{}, x},
		{events.ToolExecutionStart{}, s}, {events.ToolExecutionUpdate{}, s}, {events.ToolExecutionEnd{}, s},
		{events.PermissionRequest{}, s}, {events.PermissionResolved{}, s}, {events.PermissionDecision{}, x},
		{events.PermissionModeChanged{}, s}, {events.ModelChanged{}, x}, {events.ThinkingLevelChanged{}, x},
		{events.CompactionStart{}, x}, {events.CompactionEnd{}, x}, {events.AutoRetryStart{}, x},
		{events.AutoRetryEnd{}, x}, {events.ContextPressure{}, x}, {events.CacheMiss{}, x},
		{events.CacheWarm{}, x}, {events.TelemetryTick{}, x}, {events.PlanProposed{}, s},
		{events.PlanResolved{}, s}, {events.TodoUpdated{}, s}, {events.LimitReached{}, x},
		{events.ModelFallback{}, x}, {events.BackgroundJob{}, x},
		{events.SubagentStart{}, s}, {events.SubagentUpdate{}, s}, {events.SubagentBackground{}, s},
		{events.SubagentEnd{}, s}, {events.HookExecuted{}, x},
	}
}

// approvals are events.Approval's values.
func approvals() []any {
	return []any{events.ApprovalAllow, events.ApprovalDeny, events.ApprovalAllowSession, events.ApprovalDefer}
}

// member is one member of a closed set of llm (an interface's types),
// with its discriminating value and definition name.
type member struct {
	name, value string
	t           reflect.Type
}

// contentBlocks are llm.Content's types, by "type"
// (TestClosedSetsComplete checks the list against llm).
func contentBlocks() []member {
	return []member{
		{"textContent", "text", reflect.TypeFor[llm.TextContent]()},
		{"thinkingContent", "thinking", reflect.TypeFor[llm.ThinkingContent]()},
		{"imageContent", "image", reflect.TypeFor[llm.ImageContent]()},
		{"toolCall", "toolCall", reflect.TypeFor[llm.ToolCall]()},
	}
}

// messageKinds are llm.Message's types, by "role".
func messageKinds() []member {
	return []member{
		{"userMessage", llm.RoleUser, reflect.TypeFor[llm.UserMessage]()},
		{"assistantMessage", llm.RoleAssistant, reflect.TypeFor[llm.AssistantMessage]()},
		{"toolResultMessage", llm.RoleToolResult, reflect.TypeFor[llm.ToolResultMessage]()},
		{"systemMessage", llm.RoleSystem, reflect.TypeFor[llm.SystemMessage]()},
		{"customMessage", llm.RoleCustom, reflect.TypeFor[llm.CustomMessage]()},
		{"compactionSummary", llm.RoleCompactionSummary, reflect.TypeFor[llm.CompactionSummary]()},
		{"branchSummary", llm.RoleBranchSummary, reflect.TypeFor[llm.BranchSummary]()},
	}
}

// streamEventTypes are llm's stream event types (the Ev constants;
// TestClosedSetsComplete checks the list against llm).
func streamEventTypes() []any {
	return []any{llm.EvStart, llm.EvTextStart, llm.EvTextDelta, llm.EvTextEnd, llm.EvThinkingStart,
		llm.EvThinkingDelta, llm.EvThinkingEnd, llm.EvToolCallStart, llm.EvToolCallDelta, llm.EvToolCallEnd}
}

func ref(name string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + name} }

func constant(v any) *jsonschema.Schema { return &jsonschema.Schema{Const: &v} }

func str() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }

// overrides are the types whose JSON the Go type does not describe.
func overrides() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		// Raw JSON: any value (the inferrer would see a byte slice).
		reflect.TypeFor[json.RawMessage](): {Description: "any JSON value (json.RawMessage)"},
		// A string kept as its literal (decoded in place).
		reflect.TypeFor[jsonlit.Lit](): str(),
		// Interfaces of closed sets: one of the members, by type/role.
		reflect.TypeFor[llm.Content]():       ref("content"),
		reflect.TypeFor[llm.Message]():       ref("message"),
		reflect.TypeFor[llm.UserContent]():   ref("userContent"),
		reflect.TypeFor[events.ToolResult](): ref("toolResult"),
		// Inline, not a $ref: the inferrer makes a pointer's override
		// nullable by its "type", which a bare $ref does not have.
		reflect.TypeFor[store.Entry](): {Type: "object", Ref: "#/$defs/sessionEntry"},
		// A string type with constants: its values (TestApprovalsComplete
		// checks the list against events' constants of the type).
		reflect.TypeFor[events.Approval](): {Type: "string", Enum: approvals()},
		// A recursive type (its children): a reference to its definition.
		// With "type": the inferrer makes a pointer's override nullable by it.
		reflect.TypeFor[trace.Tool](): {Type: "object", Ref: "#/$defs/traceTool"},
		// get_tree's nodes, which store writes itself (store.NodesJSON).
		reflect.TypeFor[store.Node](): {Type: "object", Ref: "#/$defs/treeNode"},
		// Written as one object keyed by tree key (trace.Previews.MarshalJSON).
		reflect.TypeFor[trace.Previews](): {Type: "object", Description: "trace.Previews (custom MarshalJSON): preview key -> {input, output, args, result}, each a string, absent members left out",
			AdditionalProperties: &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
				Properties: map[string]*jsonschema.Schema{"input": str(), "output": str(), "args": str(), "result": str()}}},
	}
}

func infer[T any](opts *jsonschema.ForOptions) (*jsonschema.Schema, error) {
	return jsonschema.ForType(reflect.TypeFor[T](), opts)
}

// discriminated returns the schema of struct type t whose key (type or
// role) is the constant value.
func discriminated(t reflect.Type, key, value string, opts *jsonschema.ForOptions) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, opts)
	if err != nil {
		return nil, err
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties[key] = constant(value)
	s.PropertyOrder = append([]string{key}, slices.DeleteFunc(s.PropertyOrder, func(p string) bool { return p == key })...)
	required := []string{key}
	for _, r := range s.Required {
		if r != key {
			required = append(required, r)
		}
	}
	s.Required = required
	return s, nil
}

// dispatch is a union keyed by one string member: key must be one of the
// values, and the member's value selects the definition that applies (so
// a failure names the one definition, not every branch of a oneOf).
func dispatch(key string, byValue map[string]string, order []string) *jsonschema.Schema {
	var enum []any
	var all []*jsonschema.Schema
	for _, v := range order {
		enum = append(enum, v)
		all = append(all, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{key: constant(v)}, Required: []string{key}},
			Then: ref(byValue[v]),
		})
	}
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{key: {Type: "string", Enum: enum}},
		Required:   []string{key},
		AllOf:      all,
	}
}

func mark(s *jsonschema.Schema, st Stability) *jsonschema.Schema {
	if s.Extra == nil {
		s.Extra = map[string]any{}
	}
	s.Extra["x-stability"] = string(st)
	return s
}

// Generate builds the schema document: $defs for every line kind and the
// types they share; the root accepts any output line of the rpc protocol.
func Generate() (*jsonschema.Schema, error) { return generate(nil) }

// generate is Generate with the Go type of some events replaced (by event
// type): tests show that a type the goldens do not match fails them.
func generate(replace map[string]reflect.Type) (*jsonschema.Schema, error) {
	opts := &jsonschema.ForOptions{TypeSchemas: overrides()}
	defs := map[string]*jsonschema.Schema{}
	add := func(name string, s *jsonschema.Schema, err error, st Stability) error {
		if err != nil {
			return fmt.Errorf("schema %s: %w", name, err)
		}
		defs[name] = mark(s, st)
		return nil
	}

	// Content blocks, by "type".
	blocks := contentBlocks()
	byType, order := map[string]string{}, []string(nil)
	for _, b := range blocks {
		s, err := discriminated(b.t, "type", b.value, opts)
		if err := add(b.name, s, err, Stable); err != nil {
			return nil, err
		}
		byType[b.value], order = b.name, append(order, b.value)
	}
	defs["content"] = mark(dispatch("type", byType, order), Stable)
	defs["content"].Description = "a content block (llm.Content, an interface: one of the block types by \"type\")"

	// Messages, by "role".
	msgs := messageKinds()
	byRole, order := map[string]string{}, []string(nil)
	for _, m := range msgs {
		st := Stable
		if m.value == llm.RoleSystem {
			st = Experimental
		}
		s, err := discriminated(m.t, "role", m.value, opts)
		if err := add(m.name, s, err, st); err != nil {
			return nil, err
		}
		byRole[m.value], order = m.name, append(order, m.value)
	}
	defs["message"] = mark(dispatch("role", byRole, order), Stable)
	defs["message"].Description = "a message (llm.Message, an interface: one of the message types by \"role\")"

	// Hand-written: the Go types below have their own MarshalJSON.
	defs["userContent"] = mark(&jsonschema.Schema{
		Description: "llm.UserContent (custom MarshalJSON): a string, or an array of content blocks",
		OneOf:       []*jsonschema.Schema{str(), {Type: "array", Items: ref("content")}},
	}, Stable)
	tr, err := infer[events.ToolResult](&jsonschema.ForOptions{TypeSchemas: without(overrides(), reflect.TypeFor[events.ToolResult]())})
	if err != nil {
		return nil, fmt.Errorf("schema toolResult: %w", err)
	}
	tr.Description = "events.ToolResult (custom MarshalJSON): content is the blocks, or one string (AsText, the task tool's results)"
	tr.Properties["content"] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{str(), {Types: []string{"null", "array"}, Items: ref("content")}}}
	defs["toolResult"] = mark(tr, Stable)
	if err := sessionFile(defs, opts, replace); err != nil {
		return nil, err
	}

	// The envelope.
	hello, err := infer[rpc.Hello](opts)
	if err := add("hello", hello, err, Stable); err != nil {
		return nil, err
	}
	hello.Properties["type"] = constant("hello")
	hello.Properties["protocolVersion"] = constant(rpc.ProtocolVersion)
	resp, err := infer[rpc.Response](opts)
	if err := add("response", resp, err, Stable); err != nil {
		return nil, err
	}
	resp.Properties["type"] = constant("response")
	var codes []any
	for _, c := range wirecode.NativeCodes() {
		codes = append(codes, c)
	}
	resp.Properties["code"] = &jsonschema.Schema{Type: "string", Enum: codes,
		Description: "the wire code of a failure (wirecode's table, the one list of codes)"}
	// A failure has an error text, a success data and neither error nor code.
	resp.AllOf = []*jsonschema.Schema{{
		If:   &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"success": constant(false)}},
		Then: &jsonschema.Schema{Required: []string{"error"}},
		Else: &jsonschema.Schema{Not: &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Required: []string{"error"}}, {Required: []string{"code"}}}}},
	}}
	resp.Properties["data"].Description = "the command's result (per command: not described yet)"

	// Commands (input lines) and their success data, per command, from
	// rpc's wire types (rpc.CommandWires, kept in step with the handlers
	// table).
	if err := commands(defs, opts, replace); err != nil {
		return nil, err
	}
	for _, name := range rpc.Commands() {
		resp.AllOf = append(resp.AllOf, &jsonschema.Schema{
			If: &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"command": constant(name), "success": constant(true)},
				Required: []string{"command", "success"}},
			Then: &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"data": ref(DataDef(name))}, Required: []string{"data"}},
		})
	}
	resp.Properties["data"].Description = "the command's result: $defs/data.<command> (matched by the response's command)"

	// Events, by "type".
	byEvent, order := map[string]string{}, []string(nil)
	for _, e := range Events() {
		typ := e.Event.Type()
		t := reflect.TypeOf(e.Event)
		if r, ok := replace[typ]; ok {
			t = r
		}
		s, err := discriminated(t, "type", typ, opts)
		if err := add(typ, s, err, e.Stability); err != nil {
			return nil, err
		}
		// The line's number, which rpc's writer appends (not a member of
		// the event type) for a host that declared the capability
		// event_seq (issue 35, merged separately).
		s.Properties["seq"] = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0),
			Description: "the line's number in the session's event stream, when the host declared the capability event_seq"}
		byEvent[typ], order = typ, append(order, typ)
	}
	// message_update's delta steps are written by a hand-made encoder
	// (rpc's appendDeltaLine, the streaming hot path): its shape is the one
	// inferred from llm.StreamEvent (type, contentIndex, delta) and usage.
	// A notification's code is a wire code too (rpc fills it from the table).
	defs["notification"].Properties["code"] = &jsonschema.Schema{Type: "string", Enum: codes,
		Description: "the wire code of the error the notification reports (wirecode's table)"}
	defs["message_update"].Properties["assistantMessageEvent"].Properties["type"] = &jsonschema.Schema{Type: "string", Enum: streamEventTypes()}
	defs["message_update"].Description = "delta steps are rendered by rpc's appendDeltaLine with the same members as llm.StreamEvent"
	// Every event line may end with its number in the replayable stream
	// (issue 35: only for a client with the capability event_seq).
	for _, typ := range order {
		defs[typ].Properties["seq"] = &jsonschema.Schema{Type: "integer",
			Description: "the line's number in the session's replayable stream (capability event_seq)"}
	}
	defs["event"] = dispatch("type", byEvent, order)

	if err := printLines(defs, opts, byEvent, order); err != nil {
		return nil, err
	}
	if err := acpExtensions(defs, opts); err != nil {
		return nil, err
	}

	byEvent["hello"], byEvent["response"] = "hello", "response"
	lines := dispatch("type", byEvent, append([]string{"hello", "response"}, order...))
	lines.Schema = Draft
	lines.ID = "https://github.com/armadra/ama-rpc/schema/rpc.schema.json"
	lines.Title = "ama-rpc native protocol: one output line (stdout)"
	lines.Extra = map[string]any{"x-protocolVersion": rpc.ProtocolVersion}
	lines.Defs = defs
	return lines, nil
}

func without(m map[reflect.Type]*jsonschema.Schema, t reflect.Type) map[reflect.Type]*jsonschema.Schema {
	delete(m, t)
	return m
}

// JSON returns the document, indented, with a trailing newline.
func JSON() ([]byte, error) {
	s, err := Generate()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return append(b, '\n'), nil
}

// Write writes the document to dir/FileName (dir is created if needed)
// and returns the path.
func Write(dir string) (string, error) {
	b, err := JSON()
	if err != nil {
		return "", err
	}
	// Temp file and rename: a link planted at the name is replaced, never
	// followed.
	if err := ownfs.WriteAtomic(dir, FileName, b); err != nil {
		return "", fmt.Errorf("schema: %w", err)
	}
	return filepath.Join(dir, FileName), nil
}

package acp

import (
	"reflect"

	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/sandbox"
)

// The _meta keys ama-rpc adds to ACP messages (ACP reserves _meta for
// such extensions; clients that do not know a key ignore it).
const (
	// MetaSandbox is agentCapabilities._meta's OS sandbox report
	// (initialize result), when bash sandboxing is configured.
	MetaSandbox = "ama/sandbox"
	// MetaPermissions is the session/prompt result's usage._meta: the
	// turn's permission decision counts.
	MetaPermissions = "ama/permissions"
	// MetaAma is a tool_call update's _meta for a codemode script's nested
	// call: the call it belongs to.
	MetaAma = "ama"
)

// toolCallMeta is the value of MetaAma.
type toolCallMeta struct {
	ParentToolCallID string `json:"parentToolCallId"`
}

// Extension is one of ama-rpc's additions to ACP: a _meta key or an
// extension method ("_" names), where it appears, and the Go type of its
// value (of a method: its params). Package rpc/schema describes each from
// its type.
type Extension struct {
	Name   string
	Method bool
	Where  string
	Type   reflect.Type
}

// Extensions lists every ACP extension of ama-rpc.
func Extensions() []Extension {
	return []Extension{
		{Name: MetaSandbox, Where: "initialize result: agentCapabilities._meta", Type: reflect.TypeFor[sandbox.Report]()},
		{Name: MetaPermissions, Where: "session/prompt result: usage._meta", Type: reflect.TypeFor[permlog.Counts]()},
		{Name: MetaAma, Where: "session/update tool_call (a codemode script's nested call): _meta", Type: reflect.TypeFor[toolCallMeta]()},
		{Name: seqMetaKey, Where: "session/update params._meta (client opted in with initialize clientCapabilities._meta[\"ama/seq\"]): the line's number in its session's stream", Type: reflect.TypeFor[uint64]()},
		{Name: metaDurable, Where: "initialize result: agentCapabilities._meta (echoes the client's clientCapabilities._meta flag: durable approvals)", Type: reflect.TypeFor[bool]()},
		{Name: InspectMethod, Method: true, Where: "request, client to agent: read-only permission diagnostics", Type: reflect.TypeFor[inspectParams]()},
		{Name: NoticeMethod, Method: true, Where: "notification, agent to client: a notice the client may show", Type: reflect.TypeFor[noticeParams]()},
	}
}

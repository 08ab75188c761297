package session

import (
	"reflect"

	"github.com/armadra/ama-rpc/plan"
)

// CustomKind is a custom entry type a session writes: its customType and
// the Go type of its data, which rpc/schema describes (the one source of
// the session file's custom entries).
type CustomKind struct {
	Type string
	Data reflect.Type
	// Own is true for ama-rpc's own entries (ama-rpc.*), false for the
	// ones ama writes too (ama.*).
	Own bool
}

// CustomKinds lists the custom entries the session writes itself
// (TestCustomKindsComplete keeps it in step with the store.CustomEntry
// calls of this package). Others: a host extension's or a tool's (data
// of their own), the task registry's ama.task.
func CustomKinds() []CustomKind {
	return []CustomKind{
		{CustomSeq, reflect.TypeFor[seqData](), true},
		{CustomApproval, reflect.TypeFor[approvalRecord](), true},
		{CustomApprovalResolved, reflect.TypeFor[approvalResolution](), true},
		{CustomPermissionMode, reflect.TypeFor[permissionModeData](), true},
		{customCheckpoint, reflect.TypeFor[checkpointData](), false},
		{customCheckpointTrack, reflect.TypeFor[trackData](), false},
		{customTrace, reflect.TypeFor[traceStep](), false},
		{plan.CustomPlan, reflect.TypeFor[plan.Plan](), false},
		{plan.CustomPlanState, reflect.TypeFor[plan.State](), false},
		{plan.CustomTodo, reflect.TypeFor[plan.TodoList](), false},
	}
}

// customTrace is the customType of a request's timing record (package
// trace reads it).
const customTrace = "ama.trace"

package agents

import (
	"reflect"

	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// CustomKinds lists the custom entries the task registry writes, for
// rpc/schema: ama.task has two shapes, a task's snapshot in the parent
// and a child session's first entry.
func CustomKinds() []session.CustomKind {
	return []session.CustomKind{
		{Type: store.TaskCustomType, Data: reflect.TypeFor[taskSnapshot]()},
		{Type: store.TaskCustomType, Data: reflect.TypeFor[childTaskData]()},
	}
}

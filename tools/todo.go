package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
)

// NameTodo is the todo tool.
const NameTodo = "todo"

const todoSchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["get", "set", "update"]},
    "items": {
      "type": "array",
      "description": "The whole list (set)",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "text": {"type": "string"},
          "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
        },
        "required": ["id", "text", "status"],
        "additionalProperties": false
      }
    },
    "updates": {
      "type": "array",
      "description": "Changes to existing items (update)",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "status": {"type": "string", "enum": ["pending", "in_progress", "done"]},
          "text": {"type": "string"}
        },
        "required": ["id"],
        "additionalProperties": false
      }
    }
  },
  "required": ["action"],
  "additionalProperties": false
}`

// TodoStore is the session's todo list as the todo tool sees it. Changes
// are recorded by the session (an ama.todo entry and a todo_updated
// event). Implementations must be safe for concurrent use.
type TodoStore interface {
	Todos() []plan.TodoItem
	SetTodos(items []plan.TodoItem) ([]plan.TodoItem, error)
	UpdateTodos(patches []plan.TodoPatch) ([]plan.TodoItem, error)
}

// TodoTool reads and changes the session's todo list (Env.Todos). It only
// touches session state, never the project, so its permission class is
// read; plan mode still refuses set and update (the permission pipeline
// looks at the action).
type TodoTool struct{}

// Decl declares the tool.
func (TodoTool) Decl() llm.ToolDecl { return decl(NameTodo, todoSchema) }

// Permission is read: the tool changes no file.
func (TodoTool) Permission() string { return PermRead }

type todoArgs struct {
	Action  string           `json:"action"`
	Items   []plan.TodoItem  `json:"items"`
	Updates []plan.TodoPatch `json:"updates"`
}

// Execute runs one action.
func (TodoTool) Execute(_ context.Context, call *Call) (*Result, error) {
	var a todoArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return ErrorResult("todo: " + err.Error()), nil
	}
	store := call.Env.Todos
	if store == nil {
		return ErrorResult("todo: this session has no task list"), nil
	}
	var items []plan.TodoItem
	var err error
	switch a.Action {
	case "get":
		items = store.Todos()
	case "set":
		if a.Items == nil {
			return ErrorResult("todo set needs items (use [] to clear the list)"), nil
		}
		items, err = store.SetTodos(a.Items)
	case "update":
		if len(a.Updates) == 0 {
			return ErrorResult("todo update needs updates: [{id, status?, text?}]"), nil
		}
		items, err = store.UpdateTodos(a.Updates)
	default:
		return ErrorResult(fmt.Sprintf("todo: unknown action %q (get, set or update)", a.Action)), nil
	}
	if err != nil {
		return ErrorResult("todo " + a.Action + ": " + err.Error()), nil
	}
	return &Result{Content: []llm.Content{llm.Text(formatTodos(items))}, Details: plan.TodoList{Items: items}}, nil
}

func formatTodos(items []plan.TodoItem) string {
	if len(items) == 0 {
		return "The task list is empty."
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		mark := map[plan.TodoStatus]string{plan.TodoPending: "[ ]", plan.TodoInProgress: "[~]", plan.TodoDone: "[x]"}[it.Status]
		fmt.Fprintf(&b, "%s %s %s", mark, it.ID, it.Text)
	}
	return b.String()
}

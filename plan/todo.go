package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxTodoItems is the largest todo list Set accepts.
const MaxTodoItems = 100

// TodoStatus is the status of a todo item.
type TodoStatus string

// Todo statuses; see the package documentation for the transitions.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoDone       TodoStatus = "done"
)

// Valid reports whether s is one of the three todo statuses.
func (s TodoStatus) Valid() bool {
	switch s {
	case TodoPending, TodoInProgress, TodoDone:
		return true
	}
	return false
}

// CanBecome reports whether an item with status s may be updated to status
// to: pending -> in_progress|done, in_progress -> done|pending, and any
// valid status to itself. done is final (reopen with Set).
func (s TodoStatus) CanBecome(to TodoStatus) bool {
	if !s.Valid() || !to.Valid() {
		return false
	}
	return s == to || s != TodoDone
}

// TodoItem is one todo item. JSON key order: id, text, status, planStep
// (omitted when empty; set for items made from plan steps).
type TodoItem struct {
	ID       string     `json:"id"`
	Text     string     `json:"text"`
	Status   TodoStatus `json:"status"`
	PlanStep string     `json:"planStep,omitempty"`
}

// TodoList is the data of an ama.todo entry and of get_todos: {"items":
// [...]}, with nil Items encoded as [].
type TodoList struct {
	Items []TodoItem `json:"items"`
}

// MarshalJSON encodes l with nil Items as [] and without HTML escaping.
func (l TodoList) MarshalJSON() ([]byte, error) {
	type plain TodoList
	if l.Items == nil {
		l.Items = []TodoItem{}
	}
	return marshal(plain(l))
}

// TodoPatch is one change of the todo tool's update action: the item with
// ID gets Status when it is not empty and Text when it is not nil.
type TodoPatch struct {
	ID     string     `json:"id"`
	Text   *string    `json:"text,omitempty"`
	Status TodoStatus `json:"status,omitempty"`
}

// Errors of Set and Update; returned errors wrap one of them and name the
// offending item.
var (
	ErrEmptyID       = errors.New("id must be a non-empty string")
	ErrEmptyText     = errors.New("text must be a non-empty string")
	ErrInvalidStatus = errors.New("status must be one of pending, in_progress, done")
	ErrDuplicateID   = errors.New("duplicate id")
	ErrTooManyItems  = errors.New("too many todo items")
	ErrNoPatches     = errors.New("no items to update")
	ErrUnknownItem   = errors.New("no todo item with this id")
	ErrTransition    = errors.New("status change not allowed")
)

// TodosFromSteps returns the todo list of an approved plan, never nil: one
// item per step with the step's id and text and planStep = the step id; the
// first is in_progress, the others pending.
func TodosFromSteps(steps []Step) []TodoItem {
	items := make([]TodoItem, 0, len(steps))
	for i, s := range steps {
		status := TodoPending
		if i == 0 {
			status = TodoInProgress
		}
		items = append(items, TodoItem{ID: s.ID, Text: s.Text, Status: status, PlanStep: s.ID})
	}
	return items
}

// Set validates a whole new list for the todo tool's set action and returns
// a copy of it (never nil). Ids must be non-empty and unique, texts
// non-empty, statuses valid, and there may be at most MaxTodoItems items.
// Set replaces the list, so it is not checked against the previous one:
// it is the way to reopen done items.
func Set(items []TodoItem) ([]TodoItem, error) {
	if err := Validate(items); err != nil {
		return nil, err
	}
	return cloneItems(items), nil
}

// Validate reports the first problem of a todo list, as Set does.
func Validate(items []TodoItem) error {
	if len(items) > MaxTodoItems {
		return fmt.Errorf("%w: %d, at most %d", ErrTooManyItems, len(items), MaxTodoItems)
	}
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		switch {
		case strings.TrimSpace(it.ID) == "":
			return fmt.Errorf("items[%d].id: %w", i, ErrEmptyID)
		case strings.TrimSpace(it.Text) == "":
			return fmt.Errorf("items[%d].text: %w", i, ErrEmptyText)
		case !it.Status.Valid():
			return fmt.Errorf("items[%d].status %q: %w", i, it.Status, ErrInvalidStatus)
		case seen[it.ID]:
			return fmt.Errorf("items[%d]: %w %q", i, ErrDuplicateID, it.ID)
		}
		seen[it.ID] = true
	}
	return nil
}

// Update applies the patches of the todo tool's update action in order and
// returns the new list; items is not modified. It is all or nothing: on the
// first invalid patch (unknown id, empty text, invalid status, a status
// change CanBecome forbids) it returns an error and no list.
func Update(items []TodoItem, patches ...TodoPatch) ([]TodoItem, error) {
	if len(patches) == 0 {
		return nil, ErrNoPatches
	}
	out := cloneItems(items)
	for i, p := range patches {
		at := slices.IndexFunc(out, func(it TodoItem) bool { return it.ID == p.ID })
		if at < 0 {
			return nil, fmt.Errorf("items[%d] %q: %w", i, p.ID, ErrUnknownItem)
		}
		it := &out[at]
		if p.Text != nil {
			if strings.TrimSpace(*p.Text) == "" {
				return nil, fmt.Errorf("items[%d].text: %w", i, ErrEmptyText)
			}
			it.Text = *p.Text
		}
		if p.Status != "" {
			if !p.Status.Valid() {
				return nil, fmt.Errorf("items[%d].status %q: %w", i, p.Status, ErrInvalidStatus)
			}
			if !it.Status.CanBecome(p.Status) {
				return nil, fmt.Errorf("items[%d] %q: %w: %s -> %s (use set to reopen)", i, p.ID, ErrTransition, it.Status, p.Status)
			}
			it.Status = p.Status
		}
	}
	return out, nil
}

func cloneItems(items []TodoItem) []TodoItem {
	return append(make([]TodoItem, 0, len(items)), items...)
}

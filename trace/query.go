package trace

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors; every error of the package wraps one of them.
var (
	// ErrInvalidArguments: a parameter is out of range, malformed or in
	// conflict with another one.
	ErrInvalidArguments = errors.New("invalid arguments")
	// ErrTaskNotFound: taskId names no task of the session.
	ErrTaskNotFound = errors.New("task not found")
)

// Error is an error whose text is the protocol message and which matches
// its sentinel with errors.Is.
type Error struct {
	msg  string
	kind error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.kind }

func invalid(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...), kind: ErrInvalidArguments}
}

// TaskNotFound is the error for a taskId the session does not know.
func TaskNotFound(id string) error {
	return &Error{msg: fmt.Sprintf("no task %s in this session", id), kind: ErrTaskNotFound}
}

// Branch and content values of a Query.
const (
	BranchLeaf     = "leaf"
	BranchAll      = "all"
	ContentNone    = "none"
	ContentPreview = "preview"
)

// Turn limits.
const (
	DefaultTurnLimit = 50
	MaxTurnLimit     = 500
)

// Preview limits, in characters (runes), before the "…".
const (
	ArgsPreviewChars  = 500
	OtherPreviewChars = 2000
)

// Query holds the get_trace parameters. Zero values mean "absent".
type Query struct {
	// Branch is leaf (default: root to the current leaf) or all (every
	// entry of the file).
	Branch string
	// TurnLimit is the number of turns, tail first (nil: 50). It must be
	// an integer in 1..500; NaN stands for a value that is not a number.
	TurnLimit *float64
	// Before is a turn id: the window is the TurnLimit turns before it.
	Before string
	// Since is an entry id: the window is every turn from the one that
	// contains it to the end (no limit). It excludes Before.
	Since string
	// TaskID asks for a task's sub-trace; the caller resolves it (see
	// TaskNotFound) before building.
	TaskID string
	// Content is none (default) or preview.
	Content string
	// Decisions adds each call's permission decision records
	// (Tool.Decisions, Step.Decisions); off, the trace has ama's shape.
	Decisions bool
}

// Validate checks the parameters that do not depend on the session.
func (q Query) Validate() error {
	_, err := q.limit()
	if err != nil {
		return err
	}
	switch q.Branch {
	case "", BranchLeaf, BranchAll:
	default:
		return invalid("branch must be leaf or all")
	}
	switch q.Content {
	case "", ContentNone, ContentPreview:
	default:
		return invalid("content must be none or preview")
	}
	if q.Before != "" && q.Since != "" {
		return invalid("before and since cannot be used together")
	}
	return nil
}

// All reports whether the query selects every entry of the file.
func (q Query) All() bool { return q.Branch == BranchAll }

func (q Query) limit() (int, error) {
	if q.TurnLimit == nil {
		return DefaultTurnLimit, nil
	}
	f := *q.TurnLimit
	if math.IsNaN(f) || f != math.Trunc(f) || f < 1 || f > MaxTurnLimit {
		return 0, invalid("turnLimit must be an integer in 1..%d", MaxTurnLimit)
	}
	return int(f), nil
}

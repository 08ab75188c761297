package session

import "errors"

// Sentinel errors of session commands. The rpc package maps them to wire
// codes (busy, invalid_arguments, not_implemented, …) in one place.
var (
	// ErrBusy: the command needs an idle session.
	ErrBusy = errors.New("session is busy")
	// ErrInvalidArguments: a parameter is missing or has the wrong form.
	ErrInvalidArguments = errors.New("invalid arguments")
	// ErrNotImplemented: the command is recognised but not built yet.
	ErrNotImplemented = errors.New("not implemented")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("session closed")
	// ErrNoModel: no model is selected.
	ErrNoModel = errors.New("no model selected")
	// ErrNoAPIKey: the selected provider needs a key and has none.
	ErrNoAPIKey = errors.New("no API key")
	// ErrPlanNotFound: plan_response names a plan that is not pending.
	ErrPlanNotFound = errors.New("plan not found")
	// ErrNoCheckpoint: a code rewind was asked for a point without files.
	ErrNoCheckpoint = errors.New("no checkpoint")
	// ErrRewindFailed: every file restore of a rewind failed.
	ErrRewindFailed = errors.New("rewind failed")
	// ErrEntryNotFound: an entry id is unknown.
	ErrEntryNotFound = errors.New("entry not found")
	// ErrApprovalResolved: an answer to a durable approval request that
	// was already resolved (answered, expired or superseded).
	ErrApprovalResolved = errors.New("approval request already resolved")
)

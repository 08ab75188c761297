package rpc

import (
	"errors"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// Wire error codes (AmaError.code in the reference).
const (
	CodeInvalidArguments = "invalid_arguments"
	CodeBusy             = "busy"
	CodeNotImplemented   = "not_implemented"
	CodeModelNotFound    = "model_not_found"
	CodeProviderNotFound = "provider_not_found"
	CodePlanNotFound     = "plan_not_found"
	CodeNoCheckpoint     = "no_checkpoint"
	CodeRewindFailed     = "rewind_failed"
	CodeSessionNotFound  = "session_not_found"
	CodeSessionCorrupt   = "session_corrupt"
	CodeSessionLocked    = "session_locked"
	CodeSessionExists    = "session_exists"
	CodeNoAPIKey         = "no_api_key"
	CodeAborted          = "aborted"
	CodeTaskNotFound     = "task_not_found"
	CodePromptBlocked    = "prompt_blocked"
	// CodeEncodeFailed: the result exists but cannot be written as one
	// JSON line (a programming error; the command is still answered).
	CodeEncodeFailed = "encode_failed"
)

// errEncode marks a result that could not be encoded.
var errEncode = errors.New("encode failed")

// errInvalidParams marks a command whose parameters do not decode.
var errInvalidParams = errors.New("invalid arguments")

// coded is an error with its own text that still matches a sentinel.
type coded struct {
	msg string
	err error
}

func (c coded) Error() string { return c.msg }
func (c coded) Unwrap() error { return c.err }

// codeTable maps domain errors to wire codes. It is the only place where
// that mapping happens.
var codeTable = []struct {
	err  error
	code string
}{
	{errInvalidParams, CodeInvalidArguments},
	{errEncode, CodeEncodeFailed},
	{session.ErrInvalidArguments, CodeInvalidArguments},
	{fake.ErrInvalidScript, CodeInvalidArguments},
	{session.ErrBusy, CodeBusy},
	{session.ErrNotImplemented, CodeNotImplemented},
	{llm.ErrModelNotFound, CodeModelNotFound},
	{llm.ErrProviderNotFound, CodeProviderNotFound},
	{session.ErrPlanNotFound, CodePlanNotFound},
	{session.ErrNoCheckpoint, CodeNoCheckpoint},
	{session.ErrRewindFailed, CodeRewindFailed},
	{session.ErrEntryNotFound, CodeInvalidArguments},
	{session.ErrNoAPIKey, CodeNoAPIKey},
	{session.ErrNoModel, CodeModelNotFound},
	{session.ErrClosed, CodeAborted},
	{session.ErrNothingToCompact, CodeInvalidArguments},
	{store.ErrNotFound, CodeSessionNotFound},
	{store.ErrCorrupt, CodeSessionCorrupt},
	{store.ErrLocked, CodeSessionLocked},
	{store.ErrExists, CodeSessionExists},
	{trace.ErrInvalidArguments, CodeInvalidArguments},
	{trace.ErrTaskNotFound, CodeTaskNotFound},
	{session.ErrPromptBlocked, CodePromptBlocked},
}

// ErrorCode returns the wire code of err, or "" when it has none.
func ErrorCode(err error) string {
	for _, c := range codeTable {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case llm.ErrNoKey:
			return CodeNoAPIKey
		case llm.ErrAborted:
			return CodeAborted
		}
	}
	return ""
}

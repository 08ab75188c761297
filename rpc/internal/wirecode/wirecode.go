// Package wirecode is the one table from domain errors to wire codes. Both
// protocols render from it: the native protocol writes the string code
// (Response.code), ACP the JSON-RPC number, with the native code, when
// there is one, as data.code. Nothing else chooses a code.
//
// The package is pure data and lookups, safe for concurrent use.
package wirecode

import (
	"errors"
	"fmt"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// Native wire codes (AmaError.code in the reference).
const (
	InvalidArguments = "invalid_arguments"
	Busy             = "busy"
	NotImplemented   = "not_implemented"
	ModelNotFound    = "model_not_found"
	ProviderNotFound = "provider_not_found"
	PlanNotFound     = "plan_not_found"
	NoCheckpoint     = "no_checkpoint"
	RewindFailed     = "rewind_failed"
	SessionNotFound  = "session_not_found"
	SessionCorrupt   = "session_corrupt"
	SessionLocked    = "session_locked"
	SessionExists    = "session_exists"
	// SessionWriteFailed: the session file could not be written (disk
	// full, I/O error); SessionFileChanged: another process deleted,
	// replaced or resized it (README "Sessions").
	SessionWriteFailed = "session_write_failed"
	SessionFileChanged = "session_file_changed"
	NoAPIKey           = "no_api_key"
	Aborted            = "aborted"
	TaskNotFound       = "task_not_found"
	PromptBlocked      = "prompt_blocked"
	// PermissionLogFailed: the permission decision log could not be
	// written (notification; under gate enforce the call is asked).
	PermissionLogFailed = "permission_log_failed"
	SkillNotFound       = "skill_not_found"
	// ApprovalResolved: an answer to a durable approval request that was
	// already resolved (answered, expired or superseded).
	ApprovalResolved = "approval_resolved"
	// EncodeFailed: the result exists but cannot be written as one JSON
	// line (a programming error; the command is still answered).
	EncodeFailed = "encode_failed"
	// CursorExpired: replay{sinceSeq} names a line no longer retained
	// (or never given by this stream); the host rebuilds with get_state
	// and get_entries (README "Replayable event stream").
	CursorExpired = "cursor_expired"
)

// JSON-RPC 2.0 codes, and ACP's beyond them.
const (
	ParseError       int64 = -32700
	InvalidRequest   int64 = -32600
	MethodNotFound   int64 = -32601
	InvalidParams    int64 = -32602
	InternalError    int64 = -32603
	AuthRequired     int64 = -32000
	ResourceNotFound int64 = -32002
	RequestCancelled int64 = -32800
)

// Errors of the protocol layers themselves. Handlers wrap them with %w (or
// Errorf). The native and the ACP "invalid params" are two sentinels
// because they render differently: the native one has the code
// invalid_arguments, the ACP one is -32602 without data.code.
var (
	// ErrNativeParams: the parameters of a native command do not decode or
	// validate.
	ErrNativeParams = errors.New("invalid arguments")
	// ErrEncode: a result that could not be encoded.
	ErrEncode = errors.New("encode failed")
	// ErrParse: a native input line that is not a command object (its
	// response has command "parse" and no code).
	ErrParse = errors.New("parse error")
	// ErrCursorExpired: a replay cursor outside the stream's retention.
	ErrCursorExpired = errors.New("cursor expired")

	// ACP. The texts of ErrACPParse and ErrACPRequest are the messages of
	// the raw replies to lines that are not messages.
	ErrACPParse          = errors.New("Parse error")
	ErrACPRequest        = errors.New("Invalid request")
	ErrACPParams         = errors.New("invalid params")
	ErrACPMethodNotFound = errors.New("method not found")
	ErrACPUnknownSession = errors.New("session not found")
	ErrACPCancelled      = errors.New("request cancelled")
	ErrACPAuthRequired   = errors.New("authentication required")
)

// row maps one domain error (a sentinel, or the kind of an *llm.Error) to
// its code on each wire. An empty native code or a zero ACP code means the
// error has none on that wire; the lookups take the first row that matches
// and has a code for their wire.
type row struct {
	err    error
	kind   llm.ErrorKind
	native string
	acp    int64
	// msg is the catalog text of the error when it arrives bare (its
	// text is the sentinel's own): a fixed text per code, rendered in the
	// interface language by Message. Empty: the text is passed through.
	msg i18n.Key
}

var table = []row{
	{err: ErrNativeParams, native: InvalidArguments},
	{err: ErrEncode, native: EncodeFailed},
	{err: ErrParse},
	{err: ErrCursorExpired, native: CursorExpired},
	{err: ErrACPParse, acp: ParseError},
	{err: ErrACPRequest, acp: InvalidRequest},
	{err: ErrACPParams, acp: InvalidParams, msg: i18n.RPCInvalidParams},
	{err: ErrACPMethodNotFound, acp: MethodNotFound, msg: i18n.RPCMethodNotFound},
	{err: ErrACPUnknownSession, acp: ResourceNotFound, msg: i18n.RPCSessionMissing},
	{err: ErrACPCancelled, acp: RequestCancelled, msg: i18n.RPCRequestCancelled},
	{err: ErrACPAuthRequired, acp: AuthRequired, msg: i18n.RPCAuthRequired},

	{err: session.ErrInvalidArguments, native: InvalidArguments, acp: InvalidParams},
	{err: llm.ErrInvalidConfig, native: InvalidArguments, acp: InvalidParams},
	{err: session.ErrBusy, native: Busy, msg: i18n.RPCBusy},
	{err: session.ErrNotImplemented, native: NotImplemented, msg: i18n.RPCNotImplemented},
	{err: llm.ErrModelNotFound, native: ModelNotFound, acp: InvalidParams},
	{err: llm.ErrProviderNotFound, native: ProviderNotFound, acp: InvalidParams},
	{err: session.ErrPlanNotFound, native: PlanNotFound, msg: i18n.RPCPlanNotFound},
	{err: session.ErrNoCheckpoint, native: NoCheckpoint, msg: i18n.RPCNoCheckpoint},
	{err: session.ErrRewindFailed, native: RewindFailed},
	{err: session.ErrEntryNotFound, native: InvalidArguments},
	{err: session.ErrNoAPIKey, native: NoAPIKey, acp: AuthRequired},
	{err: session.ErrNoModel, native: ModelNotFound, msg: i18n.RPCNoModel},
	{err: session.ErrClosed, native: Aborted, msg: i18n.RPCSessionClosed},
	{err: session.ErrNothingToCompact, native: InvalidArguments, msg: i18n.RPCNothingCompact},
	{err: store.ErrNotFound, native: SessionNotFound, acp: ResourceNotFound, msg: i18n.RPCSessionMissing},
	{err: store.ErrCorrupt, native: SessionCorrupt},
	{err: store.ErrLocked, native: SessionLocked, msg: i18n.RPCSessionLocked},
	{err: store.ErrExists, native: SessionExists},
	{err: store.ErrFileChanged, native: SessionFileChanged},
	{err: store.ErrWrite, native: SessionWriteFailed},
	{err: trace.ErrInvalidArguments, native: InvalidArguments},
	{err: trace.ErrTaskNotFound, native: TaskNotFound},
	{err: session.ErrPromptBlocked, native: PromptBlocked},
	{err: permlog.ErrLogWrite, native: PermissionLogFailed},
	{err: session.ErrApprovalResolved, native: ApprovalResolved, acp: InvalidParams},
	{err: session.ErrSkillNotFound, native: SkillNotFound, acp: InvalidParams, msg: i18n.RPCUnknownSkill},

	// Provider failures by kind, after every sentinel.
	{kind: llm.ErrNoKey, native: NoAPIKey, acp: AuthRequired},
	{kind: llm.ErrAborted, native: Aborted},
}

func (r *row) matches(err error) bool {
	if r.err != nil {
		return errors.Is(err, r.err)
	}
	var le *llm.Error
	return errors.As(err, &le) && le.Kind == r.kind
}

// Native returns the native wire code of err, or "" when it has none.
func Native(err error) string {
	for i := range table {
		if r := &table[i]; r.native != "" && r.matches(err) {
			return r.native
		}
	}
	return ""
}

// ACP returns the JSON-RPC code of err (InternalError when no row has
// one) and its native code for data.code ("" when none).
func ACP(err error) (code int64, native string) {
	code = InternalError
	for i := range table {
		if r := &table[i]; r.acp != 0 && r.matches(err) {
			code = r.acp
			break
		}
	}
	return code, Native(err)
}

// Coded is an error with its own text that still matches a sentinel (and
// so has the sentinel's codes). Key, when set, is the catalog sentence Msg
// was rendered from in English (with Args): Message renders it in the
// interface language.
type Coded struct {
	Msg  string
	Err  error
	Key  i18n.Key
	Args []any
}

func (c *Coded) Error() string { return c.Msg }
func (c *Coded) Unwrap() error { return c.Err }

// Errorf returns an error with the formatted text that matches sentinel.
func Errorf(sentinel error, format string, args ...any) error {
	return &Coded{Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// Localized returns an error whose text is the catalog sentence key (in
// English; Message renders it in the interface language) and that matches
// sentinel (nil: no sentinel, no code). args must be plain values (names,
// numbers), never model or tool output.
func Localized(sentinel error, key i18n.Key, args ...any) error {
	return &Coded{Msg: i18n.T(i18n.En, key, args...), Err: sentinel, Key: key, Args: args}
}

// Message is the human-readable text of err in lang: a catalog sentence
// when err is a Localized error or a bare sentinel with a fixed text in
// the table, else err.Error() unchanged (texts that embed details, model
// or tool output are not translated). The code never depends on lang.
func Message(err error, lang i18n.Lang) string {
	text := err.Error()
	if lang == i18n.En || lang == "" {
		return text
	}
	var c *Coded
	if errors.As(err, &c) && c.Key != "" && text == c.Msg {
		return i18n.T(lang, c.Key, c.Args...)
	}
	for i := range table {
		if r := &table[i]; r.msg != "" && r.err != nil && text == r.err.Error() && errors.Is(err, r.err) {
			return i18n.T(lang, r.msg)
		}
	}
	return text
}

// NativeCodes returns every native code of the table, each once, in table
// order: the list a schema's enum of Response.code is made from.
func NativeCodes() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range table {
		if r.native != "" && !seen[r.native] {
			seen[r.native] = true
			out = append(out, r.native)
		}
	}
	return out
}

package acp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// ACP error codes beyond the JSON-RPC ones of jsonrpc2.
const (
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
	CodeRequestCancelled = -32800
)

// Sentinel errors of the ACP layer. Handlers wrap them with %w; wireError
// maps them (and the domain sentinels) to codes in one place.
var (
	errInvalidParams  = errors.New("invalid params")
	errMethodNotFound = errors.New("method not found")
	errUnknownSession = errors.New("session not found")
	errCancelled      = errors.New("request cancelled")
	errAuthRequired   = errors.New("authentication required")
)

// codeTable maps sentinels to JSON-RPC codes; the first match wins.
var codeTable = []struct {
	err  error
	code int64
}{
	{errInvalidParams, jsonrpc2.CodeInvalidParams},
	{errMethodNotFound, jsonrpc2.CodeMethodNotFound},
	{errUnknownSession, CodeResourceNotFound},
	{errCancelled, CodeRequestCancelled},
	{errAuthRequired, CodeAuthRequired},
	{session.ErrInvalidArguments, jsonrpc2.CodeInvalidParams},
	{fake.ErrInvalidScript, jsonrpc2.CodeInvalidParams},
	{llm.ErrModelNotFound, jsonrpc2.CodeInvalidParams},
	{llm.ErrProviderNotFound, jsonrpc2.CodeInvalidParams},
	{store.ErrNotFound, CodeResourceNotFound},
	{session.ErrNoAPIKey, CodeAuthRequired},
}

// wireError is the single mapping of errors to JSON-RPC errors. A
// *jsonrpc2.Error passes through; everything else gets the code of the
// first matching sentinel (-32603 when none matches) and the error text as
// message. When ama's RPC protocol has a code for the error (busy,
// session_locked, …), it is added as data.code so clients can branch on it.
func wireError(err error) *jsonrpc2.Error {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	code := int64(jsonrpc2.CodeInternalError)
	for _, c := range codeTable {
		if errors.Is(err, c.err) {
			code = c.code
			break
		}
	}
	var le *llm.Error
	if code == jsonrpc2.CodeInternalError && errors.As(err, &le) && le.Kind == llm.ErrNoKey {
		code = CodeAuthRequired
	}
	out := &jsonrpc2.Error{Code: code, Message: err.Error()}
	if rc := rpc.ErrorCode(err); rc != "" {
		raw := json.RawMessage(fmt.Sprintf(`{"code":%q}`, rc))
		out.Data = &raw
	}
	return out
}

// codedError is an error with its own text that matches a sentinel.
type codedError struct {
	msg string
	err error
}

func (e *codedError) Error() string { return e.msg }
func (e *codedError) Unwrap() error { return e.err }

// errorf returns an error with the formatted text that matches sentinel.
func errorf(sentinel error, format string, args ...any) error {
	return &codedError{msg: fmt.Sprintf(format, args...), err: sentinel}
}

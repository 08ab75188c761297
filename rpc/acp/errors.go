package acp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
)

// Sentinel errors of the ACP layer. Handlers wrap them with %w or errorf;
// their codes, and every domain error's, are in wirecode's table.
var (
	errInvalidParams  = wirecode.ErrACPParams
	errMethodNotFound = wirecode.ErrACPMethodNotFound
	errUnknownSession = wirecode.ErrACPUnknownSession
	errCancelled      = wirecode.ErrACPCancelled
	errAuthRequired   = wirecode.ErrACPAuthRequired
	errParseLine      = wirecode.ErrACPParse
	errBadRequest     = wirecode.ErrACPRequest
)

// wireError renders err as a JSON-RPC error. A *jsonrpc2.Error passes
// through; everything else gets the code wirecode.ACP chooses (-32603 when
// none) and the error text as message. When ama's native protocol has a
// code for the error (busy, session_locked, …), it is added as data.code
// so clients can branch on it. The message is in lang where the one table
// has a fixed text for err (wirecode.Message).
func wireError(err error, lang i18n.Lang) *jsonrpc2.Error {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	code, native := wirecode.ACP(err)
	out := &jsonrpc2.Error{Code: code, Message: wirecode.Message(err, lang)}
	if native != "" {
		raw := json.RawMessage(fmt.Sprintf(`{"code":%q}`, native))
		out.Data = &raw
	}
	return out
}

// errorf returns an error with the formatted text that matches sentinel.
// localized is an error with a catalog sentence (English in its text,
// rendered in the server's language by wireError); args are plain
// values: names, ids, paths.
func localized(sentinel error, key i18n.Key, args ...any) error {
	return wirecode.Localized(sentinel, key, args...)
}

func errorf(sentinel error, format string, args ...any) error {
	return wirecode.Errorf(sentinel, format, args...)
}

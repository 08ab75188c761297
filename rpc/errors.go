package rpc

import (
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
)

// The native protocol's own sentinels; their codes, and every domain
// error's, are in wirecode's table (the only place a code is chosen).
var (
	// errEncode marks a result that could not be encoded.
	errEncode = wirecode.ErrEncode
	// errInvalidParams marks a command whose parameters do not decode.
	errInvalidParams = wirecode.ErrNativeParams
	// errParse marks an input line that is not a command.
	errParse = wirecode.ErrParse
)

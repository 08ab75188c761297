package acp

import (
	"bytes"
	"encoding/json"
)

// methods are the served methods. Anything else answers -32601 (and an
// unknown notification is ignored).
var methods map[string]func(*Server, *call)

func init() {
	methods = map[string]func(*Server, *call){
		"initialize":                handleInitialize,
		"authenticate":              handleAuthenticate,
		"session/new":               handleNew,
		"session/load":              handleLoad,
		"session/resume":            handleResume,
		"session/list":              handleList,
		"session/close":             handleClose,
		"session/prompt":            handlePrompt,
		"session/cancel":            handleCancel,
		"session/set_mode":          handleSetMode,
		"session/set_config_option": handleSetConfigOption,
		"$/cancel_request":          handleCancelRequest,
	}
}

// decodeParams decodes the request's params (absent or null: {}) into p.
func decodeParams(c *call, p any) error {
	raw := []byte("{}")
	if c.req.Params != nil && !bytes.Equal(bytes.TrimSpace(*c.req.Params), []byte("null")) {
		raw = *c.req.Params
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return errorf(errInvalidParams, "invalid params of %s: %v", c.req.Method, err)
	}
	return nil
}

package acp

import (
	"bytes"
	"encoding/json"
)

// methods are the served methods. Anything else answers -32601 (and an
// unknown notification is ignored).
var methods = map[string]func(*Server, *call){
	"initialize":                typed(handleInitialize),
	"authenticate":              handleAuthenticate,
	"session/new":               handleNew,
	"session/load":              handleLoad,
	"session/resume":            handleResume,
	"session/list":              handleList,
	"session/close":             handleClose,
	"session/prompt":            handlePrompt,
	"session/cancel":            handleCancel,
	"session/set_mode":          typed(handleSetMode),
	"session/set_config_option": typed(handleSetConfigOption),
	"$/cancel_request":          handleCancelRequest,
	InspectMethod:               typed(handleInspect),
}

// typed adapts a method that answers at once, in the style of the go-sdk's
// newServerMethodInfo[P, R]: the adapter decodes the params into P (a bad
// one is -32602), the method validates them and returns its result or
// error, and the adapter answers exactly once. Methods that answer later
// (prompt, close) or not at all (notifications) take the *call instead.
func typed[P, R any](m func(s *Server, p *P) (R, error)) func(*Server, *call) {
	return func(s *Server, c *call) {
		var p P
		if err := decodeParams(c, &p); err != nil {
			c.fail(err)
			return
		}
		r, err := m(s, &p)
		c.answer(r, err)
	}
}

// rawParams returns the request's params as JSON ({} when absent or null).
func (c *call) rawParams() []byte {
	switch {
	case c.params != nil:
		return c.params
	case c.req.Params != nil && !bytes.Equal(bytes.TrimSpace(*c.req.Params), []byte("null")):
		return *c.req.Params
	}
	return []byte("{}")
}

// decodeParams decodes the request's params (absent or null: {}) into p.
func decodeParams(c *call, p any) error {
	raw := c.rawParams()
	if err := json.Unmarshal(raw, p); err != nil {
		return errorf(errInvalidParams, "invalid params of %s: %v", c.req.Method, err)
	}
	return nil
}

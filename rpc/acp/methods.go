package acp

import (
	"bytes"
	"encoding/json"

	"github.com/armadra/ama-rpc/internal/jsonlit"
)

// methods are the served methods. Anything else answers -32601 (and an
// unknown notification is ignored).
var methods = map[string]func(*Server, *call){
	"initialize":                typed(handleInitialize),
	"authenticate":              typed(handleAuthenticate),
	"session/new":               async(handleNew),
	"session/load":              async(handleLoad),
	"session/resume":            async(handleResume),
	"session/list":              typed(handleList),
	"session/close":             async(handleClose),
	"session/prompt":            async(handlePrompt),
	"session/cancel":            notice(handleCancel),
	"session/set_mode":          typed(handleSetMode),
	"session/set_config_option": typed(handleSetConfigOption),
	"$/cancel_request":          notice(handleCancelRequest),
	InspectMethod:               typed(handleInspect),
}

// Every method is registered through one of three adapters, in the style of
// the go-sdk's newServerMethodInfo[P, R]: the adapter decodes the params
// into P (a bad one is -32602, errInvalidParams in the one wire-code
// table), so no method decodes by hand.
//
//   - typed: the method answers at once: it validates, returns its result
//     or error, and the adapter answers exactly once.
//   - async: the method answers through its call (the reply every call
//     owes, newCall), exactly once, now or later (a prompt's turn, a
//     close).
//   - notice: a notification (session/cancel, $/cancel_request): bad
//     params are logged and ignored, and the call is released (a request
//     sent by that name gets a null result).
//
// A P that takes anything (ignored) never fails.
func typed[P, R any](m func(s *Server, p *P) (R, error)) func(*Server, *call) {
	return func(s *Server, c *call) {
		var p P
		if err := decode(c, &p); err != nil {
			c.fail(err)
			return
		}
		r, err := m(s, &p)
		c.answer(r, err)
	}
}

func async[P any](m func(s *Server, c *call, p *P)) func(*Server, *call) {
	return func(s *Server, c *call) {
		var p P
		if err := decode(c, &p); err != nil {
			c.fail(err)
			return
		}
		m(s, c, &p)
	}
}

func notice[P any](m func(s *Server, p *P)) func(*Server, *call) {
	return func(s *Server, c *call) {
		defer c.reply(nil)
		var p P
		if err := decode(c, &p); err != nil {
			s.log.Debug(c.req.Method + " ignored: " + err.Error())
			return
		}
		m(s, &p)
	}
}

// ignored is the params of a method that reads none: anything goes.
type ignored struct{}

func (*ignored) UnmarshalJSON([]byte) error { return nil }

// decode decodes the call's params into p and drops the parked line (the
// call may live on, for a turn; what p keeps of the line is p's).
func decode(c *call, p any) error {
	err := decodeParams(c, p)
	c.params = nil
	return err
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
	l, lifts := p.(lifting)
	var lifted *jsonlit.Lifted
	if lifts && c.params != nil {
		// Parked params are a sub-slice of a line the stream validated:
		// their huge literals stay out of encoding/json (jsonlit.Lift).
		if lifted = jsonlit.Lift(raw, l.liftPaths()...); lifted != nil {
			raw = lifted.Small
		}
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return errorf(errInvalidParams, "invalid params of %s: %v", c.req.Method, err)
	}
	if lifts {
		l.setLifted(lifted)
	}
	return nil
}

// lifting is params with huge string literals (jsonlit.Lit members,
// possibly in nested blocks decoded later) kept out of encoding/json:
// liftPaths names their places (jsonlit.Lift) and setLifted hands over
// what was lifted (nil: nothing) for the Lits decoded from the params.
type lifting interface {
	liftPaths() []string
	setLifted(*jsonlit.Lifted)
}

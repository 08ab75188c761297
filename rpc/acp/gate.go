package acp

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/session"
)

// Ready is what a finished start-up gives the server (Options.Boot).
type Ready struct {
	Sessions  *session.Manager
	Base      session.Options
	StartupID string
}

// ErrNoModel is Boot's error when there is still no usable model: the
// session methods answer -32000 (authentication required), which clients
// show as "agent not signed in".
var ErrNoModel = errors.New("no usable model")

// bootRetryInterval is the least time between two start-up attempts.
const bootRetryInterval = time.Second

// gatedMethods need a finished start-up (ama's auth gate: these retry it).
var gatedMethods = map[string]bool{
	"session/new": true, "session/load": true, "session/resume": true, "session/list": true,
	"session/close": true, "session/prompt": true, "session/set_mode": true, "session/set_config_option": true,
}

// gate runs before a gated method while the start-up is not done
// (Options.Boot set): it retries the start-up, at most once per
// bootRetryInterval, and reports whether the method may go on. When it may
// not, c has been answered: -32000 with data.authMethods (none are offered:
// ama-rpc has no login command) while there is no model, -32603 for any
// other start-up error. It runs on the read loop, like every handler, so
// attempts never overlap and the fields it sets are the read loop's.
func (s *Server) gate(c *call) bool {
	if s.booted || s.opts.Boot == nil || !gatedMethods[c.req.Method] {
		return true
	}
	every := s.opts.BootRetry
	if every <= 0 {
		every = bootRetryInterval
	}
	if s.bootErr == nil || time.Since(s.bootAt) >= every {
		ready, err := s.opts.Boot()
		s.bootAt = time.Now()
		if err == nil {
			s.opts.Sessions, s.opts.Base, s.opts.StartupID = ready.Sessions, ready.Base, ready.StartupID
			s.booted, s.bootErr = true, nil
			s.log.Info("start-up finished: a model is available")
			return true
		}
		s.bootErr = err
		if !errors.Is(err, ErrNoModel) {
			s.log.Warn("start-up failed", zap.Error(err))
		}
	}
	if errors.Is(s.bootErr, ErrNoModel) {
		data := json.RawMessage(`{"authMethods":[]}`)
		c.fail(&jsonrpc2.Error{Code: wirecode.AuthRequired, Message: s.bootErr.Error(), Data: &data})
	} else {
		c.fail(&jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: s.bootErr.Error()})
	}
	return false
}

package rpc

import (
	"context"

	"github.com/armadra/ama-rpc/hooks"
	"github.com/armadra/ama-rpc/session"
)

// switchHooks runs SessionEnd{new|switch} on the old session and
// SessionStart{source} for the next one before it starts; a block is
// ignored on a switch, and the context becomes the next system prompt's
// hooks section.
func (s *Server) switchHooks(old, next *session.Session, reason string) {
	d := s.opts.Deps
	if d == nil || d.Hooks == nil || old == next {
		return
	}
	if d.Hooks.Has(hooks.SessionEnd) {
		why := "switch"
		if reason == "new" {
			why = "new"
		}
		s.logHooks(d.Hooks.Run(context.Background(), hooks.Call{Event: hooks.SessionEnd, Common: old.HookCommon(), Payload: hooks.SessionEndInput{Reason: why}}))
	}
	if d.Hooks.Has(hooks.SessionStart) {
		res := d.Hooks.Run(context.Background(), hooks.Call{Event: hooks.SessionStart, Common: next.HookCommon(), Payload: hooks.SessionStartInput{Source: reason}})
		s.logHooks(res)
		if res != nil && res.AdditionalContext != "" {
			next.SetHookContext(res.AdditionalContext)
		}
	}
}

func (s *Server) logHooks(res *hooks.Result) {
	if res == nil {
		return
	}
	for _, w := range res.Warnings {
		s.opts.Log.Warn("hook: " + w)
	}
}

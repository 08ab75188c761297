package rpc

import (
	"slices"

	"github.com/armadra/ama-rpc/events"
)

// capabilities are the hello capabilities: Capabilities (hooks included:
// the server runs them and emits hook_executed), plus "sandbox"
// when bash runs in the OS sandbox.
func (s *Server) capabilities() []string {
	if s.opts.Sessions != nil && s.opts.Sessions.Deps().Sandbox.Active() {
		return append(slices.Clone(Capabilities), "sandbox")
	}
	return Capabilities
}

// Client capabilities (set_client_capabilities) that put output behind
// them: a client that has not declared one never sees what it gates.
const (
	capPermissionDecisions = "permission_decisions" // the permission_decision event
)

// gate names the client capability an event is behind ("" when every
// client gets it). The one list: a new capability-gated event is one more
// case here, and every sink (forward, EventSink) follows.
func gate(e events.Event) string {
	switch e.(type) {
	case events.PermissionDecision:
		return capPermissionDecisions
	}
	return ""
}

// capSet is the set of capabilities a sink's client declared; the nil
// set declares none (print mode's stream-json). Never changed once made
// (set_client_capabilities stores a new one).
type capSet map[string]bool

// hides reports whether e is behind a capability this client has not
// declared.
func (d capSet) hides(e events.Event) bool {
	c := gate(e)
	return c != "" && !d[c]
}

// declared is the set the client declared last (nil before any).
func (s *Server) declared() capSet {
	if p := s.client.Load(); p != nil {
		return *p
	}
	return nil
}

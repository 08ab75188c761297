package rpc

import "slices"

// capabilities are the hello capabilities: Capabilities (hooks included:
// the server runs them and emits hook_executed), plus "sandbox"
// when bash runs in the OS sandbox.
func (s *Server) capabilities() []string {
	if s.opts.Sessions != nil && s.opts.Sessions.Deps().Sandbox.Active() {
		return append(slices.Clone(Capabilities), "sandbox")
	}
	return Capabilities
}

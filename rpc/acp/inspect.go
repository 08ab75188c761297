package acp

// InspectMethod is ama's ACP extension for permission_inspect (the native
// command): read-only permission diagnostics of one session.
const InspectMethod = "_ama/permission_inspect"

type inspectParams struct {
	SessionID string `json:"sessionId"`
	// Action: status (default), config, defaults or denials.
	Action string `json:"action"`
}

// handleInspect: _ama/permission_inspect {sessionId, action} → the view
// session.InspectPermissions answers (the native command's data). An
// unknown session is -32002, an unknown action -32602. Nothing changes.
func handleInspect(s *Server, p *inspectParams) (any, error) {
	as, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	return as.sess.InspectPermissions(p.Action)
}

package events

// Approval is the answer to a permission ask: what a client sends in
// permission_response, what a host adapter's broker returns, what an
// Approver yields and what permission_resolved reports. The values are the
// wire's.
type Approval string

// The answers. Anything else a client or host sends is not an answer.
const (
	ApprovalAllow        Approval = "allow"         // run this call
	ApprovalDeny         Approval = "deny"          // do not run it
	ApprovalAllowSession Approval = "allow_session" // run it and remember the call for the session
	// ApprovalDefer parks the request (durable approvals): the run
	// settles waiting for the answer, which may come after a restart.
	// Only a client that declared the capability may send it, so Valid
	// does not accept it.
	ApprovalDefer Approval = "defer"
)

// Valid reports whether a is one of the answers.
func (a Approval) Valid() bool {
	switch a {
	case ApprovalAllow, ApprovalDeny, ApprovalAllowSession:
		return true
	}
	return false
}

// Allows reports whether a lets the call run (allow or allow_session).
func (a Approval) Allows() bool { return a == ApprovalAllow || a == ApprovalAllowSession }

// PermissionDecision carries the decision record of one verdict (package
// permlog's Record). It reaches the native wire only for clients that
// declared the "permission_decisions" capability.
type PermissionDecision struct {
	Record any `json:"record"`
}

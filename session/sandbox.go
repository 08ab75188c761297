package session

import (
	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/sandbox"
	"github.com/armadra/ama-rpc/tools"
)

// applySandbox gives a turn's tools and permission snapshot the same answer
// to "does bash run sandboxed": the bash tool gets the session's sandbox
// (nothing writable in plan mode), the pipeline learns that it is active
// and whether the network is denied.
func (st *state) applySandbox(e *toolEnv, mode approvals.Mode) {
	rt := st.s.deps.Sandbox
	if !rt.Active() {
		return
	}
	e.policy.policy.Sandbox = approvals.Sandbox{Active: true, NetworkDenied: rt.NetworkDenied()}
	e.policy.sandboxDesc = rt.Describe()
	if c := rt.For(e.env.Cwd, e.env.OutputDir, mode == approvals.ModePlan); c != nil {
		e.env.Sandbox = c
	}
}

// sandboxNote is the classifier's os_sandbox input for a call that runs
// sandboxed ("" otherwise).
func (p *permissionSnapshot) sandboxNote(call approvals.Call) string {
	if !approvals.RunsSandboxed(call, &p.policy) {
		return ""
	}
	return p.sandboxDesc
}

// The session's sandbox starts foreground bash commands through its
// pre-started launcher (tools.CommandStarter).
var _ tools.CommandStarter = (*sandbox.Command)(nil)

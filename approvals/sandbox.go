package approvals

import (
	"encoding/json"
	"strings"
)

// Sandbox is the OS sandbox of bash as the pipeline sees it (package
// sandbox decides it once per process; the bash tool gets the same answer,
// so "will this call run sandboxed" is answered identically).
type Sandbox struct {
	// Active: bash runs in a write-restricting OS sandbox unless the call
	// says sandbox:false.
	Active bool
	// NetworkDenied: sandboxed commands have no network (a precondition of
	// the free pass).
	NetworkDenied bool
}

// Texts of the sandbox step.
const (
	sandboxPassText  = "Runs in the OS sandbox (writes only in the project and temp directories, no network), so no approval is needed."
	sandboxLeaveText = "sandbox:false runs the command outside the OS sandbox"
)

// RunsSandboxed reports whether a bash call runs in the OS sandbox: the
// sandbox is active and the input does not say sandbox:false. Calls that
// only query a background job run nothing.
func RunsSandboxed(call Call, pol *Policy) bool {
	if pol == nil || !pol.Sandbox.Active || !strings.EqualFold(strings.TrimSpace(call.Tool), "bash") {
		return false
	}
	var in struct {
		Command *string `json:"command"`
		Sandbox *bool   `json:"sandbox"`
	}
	if json.Unmarshal(call.Input, &in) != nil || in.Command == nil {
		return false
	}
	return in.Sandbox == nil || *in.Sandbox
}

// leavesSandbox: an active sandbox and a bash call with sandbox:false.
func leavesSandbox(c *callCtx, pol *Policy) bool {
	return c.isBash && !c.bgQuery && pol.Sandbox.Active && !RunsSandboxed(c.call, pol)
}

// sandboxPass is the free pass of default and auto-edit (permissions.md
// section 8): a bash call the mode would ask about is allowed when it runs
// sandboxed, the network is denied, the analysis is complete, nesting is
// not too deep and the command text references no secret path. Deny rules
// and the dangerous list were applied before.
func sandboxPass(c *callCtx, pol *Policy, mode Mode) (Verdict, bool) {
	if c.noAllow || (mode != ModeDefault && mode != ModeAutoEdit) || !c.isBash || c.bgQuery || c.bash == nil ||
		!pol.Sandbox.NetworkDenied || !RunsSandboxed(c.call, pol) {
		return Verdict{}, false
	}
	a := c.bash
	if a.Err != nil || a.TooDeep || a.secretReference() != "" {
		return Verdict{}, false
	}
	return Verdict{Decision: Allow, Layer: "sandbox", Reason: sandboxPassText, Sandboxed: true}, true
}

// sandboxLeave is auto mode's rule for sandbox:false while the sandbox is
// active: ask (after allow rules and session memory), never the classifier.
func sandboxLeave(c *callCtx, pol *Policy) (Verdict, bool) {
	if !leavesSandbox(c, pol) {
		return Verdict{}, false
	}
	return Verdict{
		Decision: Ask, Layer: "auto-rule", AskReason: "mode",
		Reason: "Auto mode asks before this: " + sandboxLeaveText + ".",
		Auto:   &AutoDecision{Layer: "rule", Decision: string(Ask), Reason: sandboxLeaveText},
	}, true
}

// secretReference returns why the command references a secret path, or
// "": arguments, input redirects and write targets of every layer, and —
// because interpreter code (python -c "open('.env')") hides paths from the
// shell grammar — every path-like token of the raw text, nested layers
// included.
func (a *Analysis) secretReference() string {
	for i := range a.Segments {
		if r := a.secretArgReason(&a.Segments[i], nil); r != "" {
			return r
		}
		if r := a.reachReason(&a.Segments[i], nil); r != "" {
			return r
		}
	}
	for _, ts := range [][]Target{a.Inputs, a.Writes, a.Deletes} {
		for _, t := range ts {
			if r := secretReason(t.Path); !t.Dynamic && r != "" {
				return r
			}
		}
	}
	tokens := strings.FieldsFunc(a.Command, func(r rune) bool {
		return r <= ' ' || strings.ContainsRune("'\"`;|&()<>=,{}[]:", r)
	})
	for _, tok := range tokens {
		if strings.ContainsAny(tok, "*?") {
			if r := globSecretReason(tok); r != "" {
				return r
			}
			continue
		}
		p, ok := resolveToolPath(tok, a.Cwd, a.Home)
		if !ok {
			p = tok
		}
		if r := secretReason(p); r != "" {
			return r
		}
	}
	return ""
}

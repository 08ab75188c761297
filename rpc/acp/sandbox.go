package acp

import "github.com/armadra/ama-rpc/session"

// sandboxMeta is the agentCapabilities._meta entry of the OS sandbox (nil
// when bash sandboxing is not configured).
func sandboxMeta(d *session.Deps) map[string]any {
	if d == nil {
		return nil
	}
	if r := d.Sandbox.Report(); r != nil {
		return map[string]any{MetaSandbox: r}
	}
	return nil
}

package acp

import (
	"encoding/json"

	"github.com/armadra/ama-rpc/internal/i18n"
)

// handleInitialize: initialize → protocol version 1 and the agent's
// capabilities. The client's version and capabilities are accepted as
// they come (unknown keys are fine); ama never calls fs/*, terminal/* or
// elicitation/*, so they do not matter.
func handleInitialize(s *Server, p *initializeParams) (initializeResult, error) {
	s.seqs.on.Store(wantsSeq(p.ClientCapabilities))
	meta := sandboxMeta(s.deps())
	if durableDeclared(p.ClientCapabilities) {
		s.durable.Store(true)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[metaDurable] = true
	}
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:        true,
			PromptCapabilities: promptCapabilities{Image: true, Audio: false, EmbeddedContext: true},
			McpCapabilities:    mcpCapabilities{HTTP: true, SSE: true}, // stdio always; package mcpclient
			Meta:               meta,
		},
		// The process only starts with a usable model, so nothing needs
		// signing in.
		AuthMethods: []authMethod{},
		AgentInfo:   implementation{Name: "ama", Title: "ama", Version: s.opts.Version},
	}, nil
}

// handleAuthenticate: no authentication method is offered, so every
// authenticate is invalid (-32602), as in ama.
func handleAuthenticate(*Server, *ignored) (empty, error) {
	return empty{}, localized(errInvalidParams, i18n.ACPErrNoAuthMethod)
}

// metaDurable is the clientCapabilities._meta flag of durable approvals
// (issue 35): the client may answer a permission request "defer", and
// expects open requests to be asked again after session/load or
// session/resume. The initialize answer echoes it in agentCapabilities._meta.
const metaDurable = "ama/durableApprovals"

// durableDeclared reports clientCapabilities._meta["ama/durableApprovals"]
// == true.
func durableDeclared(caps json.RawMessage) bool {
	var c struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &c) != nil {
		return false
	}
	return string(c.Meta[metaDurable]) == "true"
}

package acp

// handleInitialize: initialize → protocol version 1 and the agent's
// capabilities. The client's version and capabilities are accepted as
// they come (unknown keys are fine); ama never calls fs/*, terminal/* or
// elicitation/*, so they do not matter.
func handleInitialize(s *Server, _ *initializeParams) (initializeResult, error) {
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:        true,
			PromptCapabilities: promptCapabilities{Image: true, Audio: false, EmbeddedContext: true},
			McpCapabilities:    mcpCapabilities{HTTP: true, SSE: true}, // stdio always; package mcpclient
			Meta:               sandboxMeta(s.deps()),
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
	return empty{}, errorf(errInvalidParams, "no authentication method is offered (authMethods is empty)")
}

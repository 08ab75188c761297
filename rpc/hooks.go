package rpc

// capabilities are the hello capabilities: "hooks" (this server emits
// hook_executed) is announced when command hooks are configured, in the
// reference's place after "images".
func (s *Server) capabilities() []string {
	if s.opts.Deps == nil || s.opts.Deps.Hooks == nil {
		return Capabilities
	}
	out := make([]string, 0, len(Capabilities)+1)
	for _, c := range Capabilities {
		out = append(out, c)
		if c == "images" {
			out = append(out, "hooks")
		}
	}
	return out
}

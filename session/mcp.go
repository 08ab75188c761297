package session

import (
	"context"
	"encoding/json"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/tools"
)

// This file joins a root session to its MCP servers (package mcpclient):
// the servers start when the first model request needs their tools, their
// tools join the tool table at each request (a turn boundary) and run
// through the one gate (toolexec.go) like every other tool; the servers
// stop when the session closes.

// MCP is one session's MCP servers (mcpclient.Set). Its methods are safe
// for concurrent use and may block (Ready): never call them on the actor.
type MCP interface {
	// Ready starts the servers on first use and waits until each started
	// or failed (bounded by ctx); it returns the failures not returned
	// before, once each.
	Ready(ctx context.Context) []error
	// Registry is the servers' tools now (nil: none).
	Registry() *tools.Registry
	// Close stops the servers.
	Close()
}

// NoticeMCP is the Source of the notifications about MCP servers.
const NoticeMCP = "mcp"

// attachMCP gives a root session its MCP servers: the configured ones
// and opts.MCPServers (Deps.MCP). Sub-agents' sessions get none.
func (s *Session) attachMCP(opts Options) {
	if s.parent || s.deps.MCP == nil {
		return
	}
	s.mcp = s.deps.MCP(s.cwd, opts.MCPServers)
}

// readyMCP runs on the runner before a model request: it starts the
// servers the first time and reports each failure once.
func (s *Session) readyMCP(ctx context.Context) {
	if s.mcp == nil {
		return
	}
	for _, err := range s.mcp.Ready(ctx) {
		s.publish(events.Notification{Level: "warn", Message: err.Error(), Source: NoticeMCP})
	}
}

// refreshMCP takes the servers' current table (on the actor, at the
// request snapshot). Tools not seen before are active even when the
// session selected its tools (set_active_tools may turn them off later).
// A changed table changes the request's tools: telemetry reports the
// cache miss as prefix_changed (tools).
func (st *state) refreshMCP() {
	if st.s.mcp == nil {
		return
	}
	st.mcpTools = st.s.mcp.Registry()
	if st.mcpTools == nil {
		return
	}
	for _, n := range st.mcpTools.Names() {
		if st.mcpSeen[n] {
			continue
		}
		if st.mcpSeen == nil {
			st.mcpSeen = map[string]bool{}
		}
		st.mcpSeen[n] = true
		if st.activeTools != nil {
			st.activeTools[n] = true
		}
	}
}

// mcpServer is the MCP server of t ("": t is nil or not an MCP tool).
func mcpServer(t tools.Tool) string {
	if m, ok := t.(interface{ MCPServer() string }); ok {
		return m.MCPServer()
	}
	return ""
}

// closeMCP stops the servers (Session.Close).
func (s *Session) closeMCP() {
	if s.mcp != nil {
		s.mcp.Close()
	}
}

// mcpValidate checks args of an MCP tool against its server's schema; ok
// false: name is not one.
func (e *toolEnv) mcpValidate(name string, args json.RawMessage) (err error, ok bool) {
	if e.mcp == nil {
		return nil, false
	}
	if _, ok := e.mcp.Get(name); !ok {
		return nil, false
	}
	return e.mcp.Validate(name, args), true
}

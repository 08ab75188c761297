// Package mcpclient connects a session to the MCP servers its user, profile,
// trusted project or ACP client named, on the official SDK
// (github.com/modelcontextprotocol/go-sdk), and offers their tools as
// tools.Tool values named mcp__<server>__<tool>. It holds no gate of its
// own: the session runs these tools through the one tool pipeline (hooks,
// permission rules, the mode, the classifier, approvals) like any other.
//
// Servers come from configuration (ParseConfig) or from ACP's mcpServers
// (ParseACP); a Set is one session's connections. A stdio server is a child
// process started from the configured command only (never from anything
// the model says), in the project directory, with the scrubbed environment
// of internal/childenv plus the env its configuration gives, in its own
// process group (killed when the set closes), its stderr to the log.
//
// Concurrency: a Set and its tools are safe for concurrent use. Each
// server has one mutex for its connection state; no lock is held across a
// call to the server except the one reconnect after a crash. The SDK runs
// one read loop per connection; its tools/list_changed handler starts a
// goroutine that lists again and swaps the set's table (an atomic
// pointer), which the session reads at its next model request. A monitor
// goroutine per connection waits for it to end (a crash) and records the
// failure. Close stops every connection and waits for those goroutines.
package mcpclient

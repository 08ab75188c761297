// Command mcpserver runs the test MCP server over stdio (package
// mcpserver). Test tooling, not part of ama-rpc.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/armadra/ama-rpc/test/mcpserver"
)

func main() {
	fmt.Fprintln(os.Stderr, "ama-test mcp server starting")
	if os.Getenv("MCPSERVER_FAIL") == "1" {
		fmt.Fprintln(os.Stderr, "failing on purpose")
		os.Exit(2)
	}
	if err := mcpserver.New().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

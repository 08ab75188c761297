// Package mcpserver is the MCP server of ama-rpc's tests, built on the
// same SDK as the client (github.com/modelcontextprotocol/go-sdk). New
// returns it; cmd/ is the stdio program the tests build and configure.
//
// Tools: echo (read-only hint, structured content), write_marker (writes
// a file), slow (waits for ms or its cancellation; a cancelled call
// writes <path>.cancelled), crash (the process exits mid-call), getenv
// (one variable of its environment), rich (an image and a resource link),
// grow (adds the tool "added": tools/list_changed).
package mcpserver

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type echoOut struct {
	Echo   string `json:"echo"`
	Length int    `json:"length"`
}

type pathIn struct {
	Path string `json:"path"`
}

type slowIn struct {
	Ms     int    `json:"ms"`
	Marker string `json:"marker,omitempty"`
}

type nameIn struct {
	Name string `json:"name"`
}

type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// New returns the test server.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ama-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return text("echo: " + in.Text), echoOut{Echo: in.Text, Length: len(in.Text)}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_marker", Description: "Write a marker file."},
		func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte("written by mcp"), 0o600); err != nil {
				return nil, nil, err
			}
			return text("wrote " + in.Path), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Wait ms milliseconds.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			if in.Marker != "" {
				_ = os.WriteFile(in.Marker+".started", nil, 0o600)
			}
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				if in.Marker != "" {
					_ = os.WriteFile(in.Marker+".cancelled", nil, 0o600)
				}
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server process."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, errors.New("unreachable")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "getenv", Description: "Read one environment variable."},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
			v, ok := os.LookupEnv(in.Name)
			if !ok {
				return text(in.Name + " is unset"), nil, nil
			}
			return text(in.Name + "=" + v), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "rich", Description: "Return an image and a resource link."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ImageContent{Data: []byte("\x89PNG\r\n"), MIMEType: "image/png"},
				&mcp.ResourceLink{URI: "file:///tmp/report.txt", Name: "report", MIMEType: "text/plain"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Report a tool error."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the tool failed on purpose")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Add the tool \"added\"."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "added", Description: "A tool added at run time."},
				func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
					return text("added works"), nil, nil
				})
			return text("grown"), nil, nil
		})
	return s
}

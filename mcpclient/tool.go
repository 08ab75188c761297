package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/armadra/ama-rpc/internal/utf8cut"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// Prefix starts every MCP tool's name: mcp__<server>__<tool>.
const Prefix = "mcp__"

// Bounds on what a server declares (the model reads all of it).
const (
	maxDescription = 4096
	maxSchema      = 64 << 10
	maxToolName    = 64 // the providers' limit on a function name
)

// Tool is one MCP server tool as a tools.Tool. Its arguments are checked
// against the server's input schema by the registry before the call.
type Tool struct {
	srv  *server
	name string // mcp__server__tool
	orig string // the server's name for it
	decl llm.ToolDecl
	perm string
}

// Decl is the declaration the model sees.
func (t *Tool) Decl() llm.ToolDecl { return t.decl }

// Permission is execute, or read when the server's config trusts its
// readOnlyHint and the tool claims it.
func (t *Tool) Permission() string { return t.perm }

// MCPServer is the name of the tool's server.
func (t *Tool) MCPServer() string { return t.srv.cfg.Name }

// ServerTool is the server's own name of the tool.
func (t *Tool) ServerTool() string { return t.orig }

// Execute calls the tool on its server. A server that is down is
// restarted (after its back-off); a protocol error or a crash during the
// call is an error result. ctx ending cancels the call on the server
// (notifications/cancelled).
func (t *Tool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	cs, err := t.srv.session(ctx)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("MCP server %s: %v", t.srv.cfg.Name, err)), nil
	}
	args := json.RawMessage(`{}`)
	if call != nil && len(bytes.TrimSpace(call.Args)) > 0 {
		args = call.Args
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.orig, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t.srv.afterFailure(cs, err)
		return tools.ErrorResult(fmt.Sprintf("MCP server %s: tool %s failed: %v", t.srv.cfg.Name, t.orig, err)), nil
	}
	return toResult(t.srv.cfg.Name, t.orig, res), nil
}

// Details is what hosts see of a result beyond its content (the rpc
// wire's details, ACP's rawOutput).
type Details struct {
	Server            string            `json:"mcpServer"`
	Tool              string            `json:"mcpTool"`
	StructuredContent any               `json:"structuredContent,omitempty"`
	ResourceLinks     []ResourceLinkOut `json:"resourceLinks,omitempty"`
}

// ResourceLinkOut is a resource link of a result.
type ResourceLinkOut struct {
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// toResult maps a CallToolResult: text and images stay blocks; resource
// links, embedded resources and audio become text blocks naming them
// (links are also kept in Details); structured content is kept in Details
// and, when the server sent no content, given to the model as JSON text.
func toResult(serverName, tool string, r *mcp.CallToolResult) *tools.Result {
	out := &tools.Result{IsError: r.IsError}
	d := Details{Server: serverName, Tool: tool, StructuredContent: r.StructuredContent}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Content = append(out.Content, llm.Text(c.Text))
		case *mcp.ImageContent:
			out.Content = append(out.Content, llm.Image(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType))
		case *mcp.AudioContent:
			out.Content = append(out.Content, llm.Text(fmt.Sprintf("[audio %s, %d bytes: not shown]", c.MIMEType, len(c.Data))))
		case *mcp.ResourceLink:
			d.ResourceLinks = append(d.ResourceLinks, ResourceLinkOut{URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Description: c.Description})
			text := "[resource link] " + c.URI
			if c.Name != "" {
				text += " (" + c.Name + ")"
			}
			if c.Description != "" {
				text += ": " + c.Description
			}
			out.Content = append(out.Content, llm.Text(text))
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" || len(c.Resource.Blob) == 0 {
				out.Content = append(out.Content, llm.Text("[resource "+c.Resource.URI+"]\n"+c.Resource.Text))
			} else {
				out.Content = append(out.Content, llm.Text(fmt.Sprintf("[resource %s, %s, %d bytes: not shown]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob))))
			}
		default:
			out.Content = append(out.Content, llm.Text(fmt.Sprintf("[%T content: not shown]", c)))
		}
	}
	if len(out.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Content = append(out.Content, llm.Text(string(b)))
		}
	}
	if len(out.Content) == 0 {
		out.Content = []llm.Content{llm.Text("(no output)")}
	}
	out.Details = d
	return out
}

// adapt turns a server's list into tools (names, bounds, the permission
// class). A tool whose name cannot be made valid is reported and left out.
func (srv *server) adapt(list []*mcp.Tool) []*Tool {
	var out []*Tool
	for _, mt := range list {
		if mt == nil {
			continue
		}
		name := Prefix + srv.cfg.Name + "__" + sanitize(mt.Name)
		if mt.Name == "" || len(name) > maxToolName {
			srv.reportOnceLocked("name:"+mt.Name, fmt.Errorf("MCP server %s: tool %q left out: the name %s is empty or longer than %d characters", srv.cfg.Name, mt.Name, name, maxToolName))
			continue
		}
		schema, err := json.Marshal(mt.InputSchema)
		if err != nil || len(schema) > maxSchema || !isObjectSchema(schema) {
			srv.reportOnceLocked("schema:"+name, fmt.Errorf("MCP server %s: tool %q left out: its input schema is not a JSON object schema of at most %d bytes", srv.cfg.Name, mt.Name, maxSchema))
			continue
		}
		desc := mt.Description
		if desc == "" {
			desc = mt.Title
		}
		desc = utf8cut.Head(desc, maxDescription)
		perm := tools.PermExecute
		if srv.cfg.TrustReadOnly && mt.Annotations != nil && mt.Annotations.ReadOnlyHint {
			perm = tools.PermRead
		}
		out = append(out, &Tool{srv: srv, name: name, orig: mt.Name, perm: perm,
			decl: llm.ToolDecl{Name: name, Description: desc, Parameters: schema}})
	}
	return out
}

// reportOnceLocked is reportOnce for callers holding srv.mu.
func (srv *server) reportOnceLocked(key string, err error) {
	if srv.reported == nil {
		srv.reported = map[string]bool{}
	}
	if srv.reported[key] {
		return
	}
	srv.reported[key] = true
	srv.set.report(err)
}

// isObjectSchema accepts a JSON object whose type, when given, is
// "object".
func isObjectSchema(b []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return false
	}
	t, ok := m["type"]
	return !ok || string(bytes.TrimSpace(t)) == `"object"`
}

// sanitize keeps letters, digits, '_' and '-' of a server's tool name
// (the providers' function-name alphabet); others become '_'.
func sanitize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

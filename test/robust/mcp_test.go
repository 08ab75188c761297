package robust_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/test/testbin"
)

// MCP servers end to end (issue 32): the real binary, the fake model, and
// the test MCP server (test/mcpserver, built on the same SDK) as a stdio
// child, configured by the user config (rpc) or by the ACP client.

var (
	mcpOnce sync.Once
	mcpBin  string
	mcpErr  error
)

// mcpServerBin builds test/mcpserver/cmd once (or takes make test's build).
func mcpServerBin(t *testing.T) string {
	t.Helper()
	mcpOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ama-mcpserver-")
		if err != nil {
			mcpErr = err
			return
		}
		mcpBin, mcpErr = testbin.Tool(dir, "mcpserver", "../mcpserver/cmd")
	})
	if mcpErr != nil {
		t.Fatal(mcpErr)
	}
	return mcpBin
}

// toolCalls is a fake script with one tool call per turn, then "done".
func toolCalls(calls ...[2]string) string {
	var rs []string
	for i, c := range calls {
		rs = append(rs, fmt.Sprintf(`{"steps":[{"toolCall":{"name":%q,"arguments":%s,"id":"call_%d"}}]}`, c[0], c[1], i))
	}
	rs = append(rs, `{"text":"done"}`)
	return `{"version":1,"whenExhausted":"echo","responses":[` + strings.Join(rs, ",") + `]}`
}

func call(name, args string) [2]string { return [2]string{name, args} }

// count is the number of stdout lines holding every one of parts.
func (p *proc) count(parts ...string) int {
	n := 0
	for _, l := range p.rawLines() {
		all := true
		for _, s := range parts {
			all = all && strings.Contains(l, s)
		}
		if all {
			n++
		}
	}
	return n
}

// rawLines returns the stdout lines read so far.
func (p *proc) rawLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, len(p.lines))
	for i, l := range p.lines {
		out[i] = string(l)
	}
	return out
}

type toolEnd struct {
	Type       string `json:"type"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	MCPServer  string `json:"mcpServer"`
	IsError    bool   `json:"isError"`
	Denied     bool   `json:"denied"`
	Result     struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

func (e toolEnd) text() string {
	var b strings.Builder
	for _, c := range e.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func writeUserConfig(t *testing.T, home, doc string) {
	t.Helper()
	dir := filepath.Join(home, ".config", "ama")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

const providerSecret = "sk-provider-secret-must-not-leak-7f3a"

// Over rpc with the user config: a call allowed by a rule runs, one denied
// by a path rule does not, an unruled call asks in default mode (allowed
// once, denied once), a crashing server gives a tool error and restarts,
// the provider key never reaches the server or the wire.
func TestMCPOverRPC(t *testing.T) {
	srv := mcpServerBin(t)
	home := t.TempDir()
	cfg := map[string]any{
		"mcpServers": map[string]any{"t": map[string]any{"command": srv, "env": map[string]string{"GIVEN": "by-config"}}},
		"permission": map[string]any{
			"allow": []string{"mcp__t__write_marker", "mcp__t__crash", "mcp__t__echo"},
			"deny":  []string{"mcp__t__write_marker(**/denied*)"},
		},
	}
	b, _ := json.Marshal(cfg)
	writeUserConfig(t, home, string(b))
	postLog := filepath.Join(home, "post.log")
	hooks := fmt.Sprintf(`{"version":1,"hooks":{
		"PreToolUse":[{"matcher":"mcp__t__rich","hooks":[{"type":"command","command":"echo no rich results >&2; exit 2"}]}],
		"PostToolUse":[{"matcher":"mcp__t__*","hooks":[{"type":"command","command":"echo \"$AMA_TOOL_NAME\" >> %s"}]}]}}`, postLog)
	if err := os.WriteFile(filepath.Join(home, ".config", "ama", "hooks.json"), []byte(hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	script := toolCalls(
		call("mcp__t__write_marker", `{"path":"allowed.txt"}`),
		call("mcp__t__write_marker", `{"path":"denied.txt"}`),
		call("mcp__t__getenv", `{"name":"OPENAI_API_KEY"}`), // asks: allowed (1st answer)
		call("mcp__t__slow", `{"ms":1,"marker":"asked"}`),   // asks: denied (2nd answer)
		call("mcp__t__getenv", `{"name":"GIVEN"}`),          // asks: allowed (3rd)
		call("mcp__t__crash", `{}`),
		call("mcp__t__echo", `{"text":"after the crash"}`),
		call("mcp__t__rich", `{}`), // a PreToolUse hook denies it
	)
	p := start(t, procConfig{home: home, script: script, approve: true, env: []string{"OPENAI_API_KEY=" + providerSecret}})
	p.send(`{"id":"caps","type":"set_client_capabilities","capabilities":["approvals"]}`)
	p.waitFor("capabilities", 20*time.Second, response("caps"))
	p.send(`{"id":"p","type":"prompt","message":"use the mcp tools"}`)
	p.waitFor("agent_end", 60*time.Second, event("agent_end"))

	var ends []toolEnd
	for _, l := range p.rawLines() {
		if strings.Contains(l, providerSecret) {
			t.Errorf("the provider key reached stdout: %s", l)
		}
		var e toolEnd
		if json.Unmarshal([]byte(l), &e) == nil && e.Type == "tool_execution_end" {
			ends = append(ends, e)
		}
	}
	if strings.Contains(p.stderrText(), providerSecret) {
		t.Error("the provider key reached the log")
	}
	if len(ends) != 8 {
		t.Fatalf("%d tool ends, want 8; stdout:\n%s", len(ends), strings.Join(p.rawLines(), "\n"))
	}
	want := []struct {
		err, denied bool
		text        string
	}{
		{false, false, "wrote allowed.txt"},
		{true, true, ""},
		{false, false, "OPENAI_API_KEY is unset"},
		{true, true, ""},
		{false, false, "GIVEN=by-config"},
		{true, false, "MCP server t"},
		{false, false, "echo: after the crash"},
		{true, true, "no rich results"},
	}
	for i, w := range want {
		e := ends[i]
		if e.IsError != w.err || e.Denied != w.denied || !strings.Contains(e.text(), w.text) || e.MCPServer != "t" {
			t.Errorf("call %d (%s): isError %v denied %v server %q text %q; want isError %v denied %v text ~%q",
				i, e.ToolName, e.IsError, e.Denied, e.MCPServer, e.text(), w.err, w.denied, w.text)
		}
	}
	if _, err := os.Stat(filepath.Join(p.work, "allowed.txt")); err != nil {
		t.Errorf("the allowed call left no file: %v", err)
	}
	for _, f := range []string{"denied.txt", "asked.started"} {
		if _, err := os.Stat(filepath.Join(p.work, f)); err == nil {
			t.Errorf("%s exists: a refused call reached the server", f)
		}
	}
	post, _ := os.ReadFile(postLog)
	if !strings.Contains(string(post), "mcp__t__write_marker") || !strings.Contains(string(post), "mcp__t__echo") || strings.Contains(string(post), "mcp__t__rich") {
		t.Errorf("PostToolUse hooks ran for: %q", post)
	}
	p.mu.Lock()
	asked := p.approvals
	p.mu.Unlock()
	if asked != 3 {
		t.Errorf("%d permission requests, want 3", asked)
	}
	var stopped bool
	for _, l := range p.rawLines() {
		stopped = stopped || strings.Contains(l, `"type":"notification"`) && strings.Contains(l, "MCP server t stopped")
	}
	if !stopped {
		t.Error("the crash was not announced")
	}
	p.send(`{"id":"tools","type":"get_tools"}`)
	tl := p.waitFor("get_tools", 20*time.Second, response("tools"))
	if !tl.Success {
		t.Fatalf("get_tools failed")
	}
	var listed bool
	for _, l := range p.rawLines() {
		listed = listed || strings.Contains(l, `"id":"tools"`) && strings.Contains(l, `"name":"mcp__t__echo"`) && strings.Contains(l, `"mcpServer":"t"`)
	}
	if !listed {
		t.Error("get_tools does not list mcp__t__echo with its server")
	}
}

// A server that cannot start is announced once and the session goes on.
func TestMCPServerFailsToStart(t *testing.T) {
	home := t.TempDir()
	writeUserConfig(t, home, `{"mcpServers":{"gone":{"command":"/nonexistent/mcp-server"}}}`)
	p := start(t, procConfig{home: home})
	p.send(`{"id":"p","type":"prompt","message":"hello"}`)
	p.waitFor("agent_end", 30*time.Second, event("agent_end"))
	from := p.mark()
	p.send(`{"id":"p2","type":"prompt","message":"again"}`)
	p.waitAfter(from, "second agent_end", 30*time.Second, event("agent_end"))
	if n := p.count(`"type":"notification"`, "MCP server gone failed to start"); n != 1 {
		t.Errorf("%d notifications of the failed server, want 1\n%s", n, strings.Join(p.rawLines(), "\n"))
	}
}

// Over ACP: the client's mcpServers are used; initialize advertises http
// and sse; an MCP call in default mode asks the client
// (session/request_permission), and runs once allowed.
func TestMCPOverACP(t *testing.T) {
	srv := mcpServerBin(t)
	script := toolCalls(call("mcp__zed__write_marker", `{"path":"acp.txt"}`))
	p := startACP(t, procConfig{script: script, env: []string{"OPENAI_API_KEY=" + providerSecret}})
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	p.waitFor("initialize", 20*time.Second, answer("init"))
	var caps bool
	for _, l := range p.rawLines() {
		caps = caps || strings.Contains(l, `"mcpCapabilities":{"http":true,"sse":true}`)
	}
	if !caps {
		t.Error("initialize does not advertise mcpCapabilities http and sse")
	}
	servers := fmt.Sprintf(`[{"name":"zed","command":%q,"args":[],"env":[{"name":"GIVEN","value":"v"}]}]`, srv)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":%s}}`, p.work, servers))
	sid := p.waitFor("session/new", 20*time.Second, answer("new")).Result.SessionID
	if sid == "" {
		t.Fatalf("session/new failed; stderr:\n%s", p.stderrText())
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, sid))
	ask := p.waitFor("session/request_permission", 60*time.Second, func(l line) bool { return l.Method == "session/request_permission" })
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	for _, l := range p.rawLines() {
		if strings.Contains(l, `"method":"session/request_permission"`) {
			_ = json.Unmarshal([]byte(l), &req)
		}
	}
	_ = ask
	if _, err := os.Stat(filepath.Join(p.work, "acp.txt")); err == nil {
		t.Fatal("the call ran before it was allowed")
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`, req.ID))
	p.waitFor("prompt answer", 60*time.Second, answer("p"))
	if _, err := os.Stat(filepath.Join(p.work, "acp.txt")); err != nil {
		t.Errorf("the allowed call left no file: %v\nstdout:\n%s", err, strings.Join(p.rawLines(), "\n"))
	}
	var shown, ignored bool
	for _, l := range p.rawLines() {
		shown = shown || strings.Contains(l, `"sessionUpdate":"tool_call"`) && strings.Contains(l, "mcp__zed__write_marker")
		ignored = ignored || strings.Contains(l, "does not use the MCP servers")
		if strings.Contains(l, providerSecret) {
			t.Errorf("the provider key reached stdout: %s", l)
		}
	}
	if !shown || ignored {
		t.Errorf("tool call shown %v, ignored notice %v", shown, ignored)
	}
}

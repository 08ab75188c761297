package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/tools"
)

// mcpProbe is an MCP server tool as mcpclient makes them: execute-class,
// its server's schema, MCPServer.
type mcpProbe struct{ probe }

func (p *mcpProbe) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: p.name, Description: "An MCP tool.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}
}
func (p *mcpProbe) MCPServer() string { return "srv" }

// fakeMCP is a session.MCP with a fixed table and queued failures.
type fakeMCP struct {
	reg      *tools.Registry
	mu       sync.Mutex
	problems []error
	readies  atomic.Int32
	closed   atomic.Int32
}

func (f *fakeMCP) Ready(context.Context) []error {
	f.readies.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.problems
	f.problems = nil
	return out
}
func (f *fakeMCP) Registry() *tools.Registry { return f.reg }
func (f *fakeMCP) Close()                    { f.closed.Add(1) }

// MCP tools join the table at the request, their arguments meet the
// server's schema, and they pass the one gate: auto mode's classifier
// judges them, a failure is announced once, Close stops the servers.
func TestMCPToolsThroughTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &mcpProbe{probe{name: "mcp__srv__probe", perm: tools.PermExecute}}
		reg, err := tools.NewRegistry(p)
		if err != nil {
			t.Fatal(err)
		}
		m := &fakeMCP{reg: reg, problems: []error{errors.New("MCP server other failed to start: boom")}}
		var extra []json.RawMessage
		a := &answer{decision: "deny"}
		e := newEnv(t, setup{mode: "auto", approver: a, script: &fake.Script{Responses: []fake.Response{
			toolCall("mcp__srv__probe", `{"n":"not a number"}`),
			toolCall("mcp__srv__probe", `{"n":1}`), reply(`{"decision":"allow","reason":"harmless"}`),
			reply("done"),
			reply("again"),
		}}, deps: func(d *Deps) {
			d.MCP = func(cwd string, x []json.RawMessage) MCP { extra = x; return m }
		}})
		e.runPrompt(t, "go")
		if p.runs.Load() != 1 || a.asks.Load() != 0 {
			t.Errorf("runs %d asks %d, want 1 and 0", p.runs.Load(), a.asks.Load())
		}
		ends := eventsOf[events.ToolExecutionEnd](e.rec)
		if len(ends) != 2 {
			t.Fatalf("%d tool ends", len(ends))
		}
		if !ends[0].IsError || !strings.Contains(llm.JoinText(ends[0].Result.Content, ""), "Invalid arguments") {
			t.Errorf("schema: %+v", ends[0].Result)
		}
		ad, _ := ends[1].AutoDecision.(*approvals.AutoDecision)
		if ends[1].IsError || ad == nil || ad.Layer != "classifier" || ends[1].MCPServer != "srv" {
			t.Errorf("call: isError %v autoDecision %+v server %q", ends[1].IsError, ends[1].AutoDecision, ends[1].MCPServer)
		}
		for _, st := range eventsOf[events.ToolExecutionStart](e.rec) {
			if st.MCPServer != "srv" {
				t.Errorf("tool_execution_start without the server: %+v", st)
			}
		}
		e.runPrompt(t, "again")
		var notes int
		for _, n := range eventsOf[events.Notification](e.rec) {
			if n.Source == NoticeMCP && strings.Contains(n.Message, "other failed to start") {
				notes++
			}
		}
		if notes != 1 || m.readies.Load() < 2 {
			t.Errorf("%d notices of the failure (want 1), %d Ready calls", notes, m.readies.Load())
		}
		list, err := e.s.Tools()
		if err != nil {
			t.Fatal(err)
		}
		var listed bool
		for _, ti := range list {
			listed = listed || ti.Decl.Name == "mcp__srv__probe" && ti.Server == "srv" && ti.Active
		}
		if !listed {
			t.Errorf("get_tools: %+v", list)
		}
		if extra != nil {
			t.Errorf("extra servers %v, want none", extra)
		}
		e.s.Close()
		if m.closed.Load() != 1 {
			t.Errorf("Close called %d times", m.closed.Load())
		}
	})
}

// An MCP call is execute-class: default and auto-edit ask, plan refuses,
// full-auto runs it; a deny rule on its name refuses it without asking,
// an allow rule runs it without asking.
func TestMCPToolRulesAndAsk(t *testing.T) {
	for _, tc := range []struct {
		name, mode  string
		deny, allow []string
		runs, asks  int32
	}{
		{"default asks", "default", nil, nil, 1, 1},
		{"auto-edit asks", "auto-edit", nil, nil, 1, 1},
		{"plan refuses", "plan", nil, nil, 0, 0},
		{"full-auto runs", "full-auto", nil, nil, 1, 0},
		{"deny rule", "default", []string{"mcp__srv__*"}, nil, 0, 0},
		{"deny beats allow", "default", []string{"mcp__srv__probe"}, []string{"mcp__srv__*"}, 0, 0},
		{"allow rule", "default", nil, []string{"mcp__srv__probe"}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &mcpProbe{probe{name: "mcp__srv__probe", perm: tools.PermExecute}}
				reg, _ := tools.NewRegistry(p)
				a := &answer{decision: "allow"}
				e := newEnv(t, setup{mode: tc.mode, approver: a, script: &fake.Script{Responses: []fake.Response{
					toolCall("mcp__srv__probe", `{"n":1}`), reply("done"),
				}}, deps: func(d *Deps) {
					d.MCP = func(string, []json.RawMessage) MCP { return &fakeMCP{reg: reg} }
					pol, _, err := approvals.BuildPolicy(approvals.Layer{Deny: tc.deny, Allow: tc.allow}, approvals.Layer{}, approvals.Layer{})
					if err != nil {
						t.Fatal(err)
					}
					d.Policy = pol
				}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if p.runs.Load() != tc.runs || a.asks.Load() != tc.asks {
					t.Errorf("runs %d asks %d, want %d and %d", p.runs.Load(), a.asks.Load(), tc.runs, tc.asks)
				}
			})
		})
	}
}

package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// fakeTool is a registered tool whose calls the fake session answers.
type fakeTool struct{ name string }

func (f fakeTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: f.name, Description: "the " + f.name + " tool", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
}
func (fakeTool) Permission() string { return tools.PermRead }
func (fakeTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return nil, fmt.Errorf("not called directly")
}

// fakeSession answers nested calls with fn and records them.
type fakeSession struct {
	mu      sync.Mutex
	fn      func(ctx context.Context, name string, args json.RawMessage) *tools.Result
	calls   []string
	custom  map[string]json.RawMessage
	appends []json.RawMessage
	active  []string
}

func (s *fakeSession) ExecuteTool(ctx context.Context, name string, args json.RawMessage) *tools.Result {
	s.mu.Lock()
	s.calls = append(s.calls, name+" "+string(args))
	s.mu.Unlock()
	return s.fn(ctx, name, args)
}
func (s *fakeSession) AppendCustom(ct string, data json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends = append(s.appends, data)
	if s.custom == nil {
		s.custom = map[string]json.RawMessage{}
	}
	s.custom[ct] = data
}
func (s *fakeSession) State() tools.CallState {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := map[string]json.RawMessage{}
	for k, v := range s.custom {
		c[k] = v
	}
	return tools.CallState{Custom: c, ActiveTools: s.active}
}
func (s *fakeSession) SpawnSubagent(context.Context, json.RawMessage) (*tools.Result, bool) {
	return nil, false
}

func echoSession() *fakeSession {
	return &fakeSession{fn: func(_ context.Context, name string, args json.RawMessage) *tools.Result {
		return tools.TextResult(name + ":" + string(args))
	}}
}

func newTestTool(mode Mode, names ...string) *Tool {
	var list []tools.Tool
	for _, n := range names {
		list = append(list, fakeTool{n})
	}
	return New(Config{Mode: mode, Direct: names, List: func() []tools.Tool { return list }})
}

func execScript(t *testing.T, tool *Tool, s *fakeSession, script string) (*tools.Result, []string) {
	t.Helper()
	return execScriptCtx(t, context.Background(), tool, s, script)
}

func execScriptCtx(t *testing.T, ctx context.Context, tool *Tool, s *fakeSession, script string) (*tools.Result, []string) {
	t.Helper()
	a, _ := json.Marshal(map[string]string{"script": script})
	var mu sync.Mutex
	var updates []string
	res, err := tool.Execute(ctx, &tools.Call{ID: "cm1", Args: a, Env: &tools.Env{OutputDir: t.TempDir()}, Session: s,
		Update: func(p string) { mu.Lock(); updates = append(updates, p); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return res, updates
}

func text(r *tools.Result) string { return llm.JoinText(r.Content, "") }

var header = regexp.MustCompile(`^Script (completed|failed) in \d+\.\d\ds\n\n`)

func body(t *testing.T, r *tools.Result) string {
	t.Helper()
	s := text(r)
	if !header.MatchString(s) {
		t.Fatalf("no header: %q", s)
	}
	return header.ReplaceAllString(s, "")
}

func TestScripts(t *testing.T) {
	tool := newTestTool(ModeOn, "read", "grep", "my-tool")
	cases := []struct {
		name, script, want string
		isErr              bool
	}{
		{"return", `return 1+1`, "2", false},
		{"text and return", "text('a'); console.log('b', 2, {x:1}); return {k: [1]}", "a\nb 2 {\n  \"x\": 1\n}\n{\n  \"k\": [\n    1\n  ]\n}", false},
		{"no output", `const x = 1;`, "(no output)", false},
		{"parallel", `const [a, b] = await Promise.all([tools.read({path:"x"}), tools.grep({pattern:"y"})]); return a + "|" + b`, `read:{"path":"x"}|grep:{"pattern":"y"}`, false},
		{"mangled", `return await tools.my_tool()`, `my-tool:{}`, false},
		{"codemode refused", "text('partial');\ntry { await tools.codemode({}) } catch (e) { text(e.message) }\nthrow new Error('boom')", "partial\ncodemode cannot be called from a codemode script\n\nScript error: Error: boom (line 3)", true},
		{"unknown tool", `try { await tools.bash({}) } catch (e) { return e.message }`, "Unknown tool bash. Callable tools: grep, my-tool, read", false},
		{"then undefined", `const t = await tools; return typeof t.read`, "function", false},
		{"enumerate", `return Object.keys(tools).join(",") + " " + ALL_TOOLS.join(",")`, "grep,my_tool,read grep,my-tool,read", false},
		{"assign fails", `tools.x = 1`, "(no output)\n\nScript error: TypeError", true},
		{"describeTool", `return describeTool("my_tool")`, "/** the my-tool tool */\nmy_tool(args: { path?: string; }): Promise<unknown>;", false},
		{"not json args", `try { await tools.read({x: 1n}) } catch (e) { return e.message }`, "", false},
		{"syntax", "let x = ;", "(no output)\n\nScript error: SyntaxError", true},
		{"reference hint", "read({})", "(no output)\n\nScript error: ReferenceError: read is not defined (line 1)\nCall tools as tools.read({...}), not read(...).", true},
		{"require", `require('fs')`, "(no output)\n\nScript error: ReferenceError: require is not defined (line 1)\nOnly tools.<name>(args)", true},
		{"pending forever", `await new Promise(() => {})`, "(no output)\n\nScript error: Error: the script is waiting", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := execScript(t, tool, echoSession(), c.script)
			got := body(t, res)
			if res.IsError != c.isErr || !strings.HasPrefix(got, c.want) {
				t.Fatalf("got %v %q, want %v %q", res.IsError, got, c.isErr, c.want)
			}
		})
	}
}

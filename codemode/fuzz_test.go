package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

func FuzzOptions(f *testing.F) {
	for _, s := range []string{"// @options: {\"timeout_ms\": 5}\n", "//@options:{}", "// @options: {\"max_output_tokens\": 1e3}", "// @options: null", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		o, err := parseOptions(script)
		if err == nil && (o.timeoutMs < 1 || o.timeoutMs > 3600000 || o.maxOutputTokens < 1 || o.maxOutputTokens > 1000000) {
			t.Fatalf("accepted %+v", o)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "Invalid // @options line: ") {
			t.Fatalf("error %q", err)
		}
	})
}

// FuzzScript runs arbitrary scripts (each in a child process, so keep
// -fuzztime short): whatever the script does, only the callable tool
// reaches the session, never the registered tool that is not callable
// (coordinator restriction) nor codemode, and the result has its header.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		`return await tools.read({path: "x"})`,
		`await tools.bash({command: "touch /tmp/x"})`,
		`await tools["codemode"]({script: "1"})`,
		`Object.defineProperty(tools, "bash", {value: 1}); await tools.bash({})`,
		`for (const k of Reflect.ownKeys(tools)) await tools[k]({})`,
		`await Promise.all(ALL_TOOLS.map(n => tools[n]({})))`,
		`throw 1`,
		`return "\u2028" + "\ud800"`,
		`text(Symbol("x"))`,
	} {
		f.Add(s)
	}
	list := []tools.Tool{fakeTool{"read"}, fakeTool{"bash"}}
	tool := New(Config{Mode: ModeOn, Restrict: true, MaxHeapMB: 64, List: func() []tools.Tool { return list }})
	f.Fuzz(func(t *testing.T, script string) {
		s := &fakeSession{active: []string{"read"}, fn: func(_ context.Context, name string, _ json.RawMessage) *tools.Result {
			return tools.TextResult("r")
		}}
		a, _ := json.Marshal(map[string]string{"script": "// @options: {\"timeout_ms\": 2000}\n" + script})
		res, err := tool.Execute(context.Background(), &tools.Call{ID: "f", Args: a, Env: &tools.Env{OutputDir: t.TempDir()}, Session: s})
		if err != nil {
			t.Fatal(err)
		}
		if out := text(res); !strings.HasPrefix(out, "Script completed in ") && !strings.HasPrefix(out, "Script failed in ") && !strings.HasPrefix(out, "Invalid // @options") {
			t.Fatalf("result %q", out)
		}
		for _, c := range s.calls {
			if !strings.HasPrefix(c, "read ") {
				t.Fatalf("a script reached %q", c)
			}
		}
	})
}

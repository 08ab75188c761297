package session

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/tools"
)

// stopTool returns a result with Terminate set when its name says so.
type stopTool struct {
	name      string
	terminate bool
}

func (s stopTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: s.name, Description: "test", Parameters: []byte(`{"type":"object"}`)}
}
func (stopTool) Permission() string { return tools.PermRead }
func (s stopTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	r := tools.TextResult(s.name + " done")
	r.Terminate = s.terminate
	return r, nil
}

// A batch whose every result sets Terminate ends the run without another
// model request; one result without it lets the run go on (ama's
// ToolResult.terminate, issue 29).
func TestToolResultTerminate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		calls    []string
		requests int
	}{
		{"one terminating call", []string{"stop"}, 1},
		{"every call terminates", []string{"stop", "stop2"}, 1},
		{"one call does not", []string{"stop", "go"}, 2},
		{"no terminating call", []string{"go"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var steps []fake.Step
				for _, n := range tc.calls {
					steps = append(steps, fake.Step{ToolCall: &fake.ToolCallSpec{Name: n, Arguments: json.RawMessage(`{}`)}})
				}
				script := &fake.Script{Responses: []fake.Response{{Steps: steps}, reply("after the tools")}}
				e := newEnv(t, setup{script: script, tools: []tools.Tool{
					stopTool{"stop", true}, stopTool{"stop2", true}, stopTool{"go", false}}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				msgs, _ := e.s.Messages()
				n := 0
				for _, m := range msgs {
					if _, ok := m.(*llm.AssistantMessage); ok {
						n++
					}
				}
				if n != tc.requests {
					t.Errorf("%d model requests, want %d", n, tc.requests)
				}
			})
		})
	}
}

package codemode

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

// BenchmarkStartup is the fixed cost of one codemode call: a child
// process, the runtime and the prelude, an empty script.
func BenchmarkStartup(b *testing.B) {
	tool := newTestTool(ModeOn, "read")
	a, _ := json.Marshal(map[string]string{"script": "return 1"})
	s := echoSession()
	for b.Loop() {
		if res, _ := tool.Execute(context.Background(), &tools.Call{ID: "b", Args: a, Session: s}); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// BenchmarkHundredCalls is one script making 100 nested calls (8 at a
// time) that cost nothing themselves: the protocol's share.
func BenchmarkHundredCalls(b *testing.B) {
	tool := newTestTool(ModeOn, "read")
	a, _ := json.Marshal(map[string]string{"script": `const r = await Promise.all(Array.from({length: 100}, (_, i) => tools.read({path: "f" + i}))); return r.length`})
	for b.Loop() {
		s := echoSession()
		if res, _ := tool.Execute(context.Background(), &tools.Call{ID: "b", Args: a, Session: s}); res.IsError {
			b.Fatal(text(res))
		}
	}
}

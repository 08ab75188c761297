package session

import (
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// BenchmarkToolPathNoHooks runs the PreToolUse and PostToolUse steps of a
// tool call with no hook configured: they must cost no allocation (and
// start no process).
func BenchmarkToolPathNoHooks(b *testing.B) {
	s := &Session{deps: &Deps{}}
	tc := &llm.ToolCall{ID: "c0", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}
	p := &preparedCall{call: tc}
	res := tools.ErrorResult("x")
	r := &runState{}
	b.ReportAllocs()
	for b.Loop() {
		if g := s.preToolUse(r, nil, tc, "", false); g.result != nil || g.args != nil {
			b.Fatal("gate without hooks")
		}
		if s.postToolUse(r, p, res) != res {
			b.Fatal("result changed without hooks")
		}
	}
}

func TestToolPathNoHooksAllocs(t *testing.T) {
	s := &Session{deps: &Deps{}}
	tc := &llm.ToolCall{ID: "c0", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}
	p := &preparedCall{call: tc}
	res := tools.ErrorResult("x")
	r := &runState{}
	if n := testing.AllocsPerRun(100, func() { s.preToolUse(r, nil, tc, "", false); s.postToolUse(r, p, res) }); n != 0 {
		t.Fatalf("%v allocations per tool call without hooks", n)
	}
}

package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/tools"
)

// heldSession's nested calls wait for release.
type heldSession struct{ entered, release chan struct{} }

func (s heldSession) ExecuteTool(context.Context, string, json.RawMessage) *tools.Result {
	close(s.entered)
	<-s.release
	return tools.TextResult("nested done")
}
func (heldSession) AppendCustom(string, json.RawMessage) {}
func (heldSession) State() tools.CallState               { return tools.CallState{} }
func (heldSession) SpawnSubagent(context.Context, json.RawMessage) (*tools.Result, bool) {
	return nil, false
}

// A bridge request answered later (tool.executeTool, held while the
// nested call runs) is an owed reply of the Owed given by SetOwed, as the
// protocol server's own replies are: Pending names it while it is held,
// Wait returns once the answer was written, and the answer reaches the
// adapter.
func TestDeferredReplyOwed(t *testing.T) {
	h := startAdapter(t, `module.exports = {hostApi: 1, create(api) {
  api.tools.register({name: "host_nest", permission: "read", description: "Nest.", parameters: {type: "object"},
    execute: async (input, ctx) => { const r = await ctx.tools.executeTool("read", {}); return {content: "nested: " + r.content[0].text}; }});
  return {id: "owed"};
}};`)
	var owed stdio.Owed
	h.SetOwed(&owed)
	s := heldSession{entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan *tools.Result, 1)
	go func() {
		done <- tools.Execute(context.Background(), h.Tools()[0], &tools.Call{ID: "c1", Args: json.RawMessage(`{}`), Session: s})
	}()
	select {
	case <-s.entered:
	case res := <-done:
		b, _ := json.Marshal(res.Content)
		t.Fatalf("the tool ended without its nested call: %s", b)
	}
	if p := owed.Pending(); !slices.Equal(p, []string{"host tool.executeTool"}) {
		t.Fatalf("owed while the nested call runs: %q", p)
	}
	waited := make(chan struct{})
	go func() { owed.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while the host's reply is owed")
	case <-done:
		t.Fatal("the tool ended before its nested call was answered")
	default:
	}
	close(s.release)
	<-waited
	res := <-done
	if b, _ := json.Marshal(res.Content); res.IsError || string(b) != `[{"type":"text","text":"nested: nested done"}]` {
		t.Fatalf("result: %s", b)
	}
}

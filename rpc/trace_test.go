package rpc

import (
	"errors"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/trace"
)

func TestTraceWireShape(t *testing.T) {
	in, out := "<a & b>\u2028", "done"
	ttft, tps := int64(5), 12.5
	u := llm.Usage{Input: 1, Output: 2, TotalTokens: 3}
	res := &trace.Result{
		Trace: trace.Trace{Version: 1, SessionID: "s", Cwd: "/w", Turns: []*trace.Turn{{
			ID: "u1", Kind: trace.KindTurn, Status: "ok", EntryIDs: []string{"u1"}, StartedAt: 10, EndedAt: 20,
			Steps: []*trace.Step{{ID: "a1", Kind: trace.KindStep, Status: "ok", EntryIDs: []string{"a1", "t1"}, Provider: "fake", Model: "echo",
				Attempt: 1, Usage: u, StopReason: "toolUse", ThinkingLevel: "medium", RequestAt: 1, FirstTokenAt: 6, DoneAt: 9,
				TTFTMs: &ttft, TPS: &tps,
				Tools: []*trace.Tool{{ID: "c1", Kind: trace.KindTool, Name: "read", Status: "running", EntryIDs: []string{"a1"}, Children: []*trace.Tool{}}}},
				{ID: "a2", Kind: trace.KindStep, Status: "error", EntryIDs: []string{"a2"}, StopReason: "error", Tools: []*trace.Tool{}}},
		}}, Aux: []*trace.Aux{{ID: "x1", Kind: trace.KindAux, Purpose: "permission_classify", Provider: "fake", Model: "echo", Usage: u}}},
		Previews: []trace.Preview{{Key: "turn:u1", Input: &in}, {Key: "step:a1", Output: &out}},
	}
	line, err := stdio.Marshal(res) // trace's types are the wire shape
	if err != nil {
		t.Fatal(err)
	}
	got := string(line)
	for _, want := range []string{
		`{"trace":{"version":1,"sessionId":"s","cwd":"/w","totals":{"requests":0,"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"toolCalls":0,"cost":0,"durationMs":0,"cacheHitRatio":0},"turns":[{"id":"u1","kind":"turn","status":"ok","entryIds":["u1"],"steps":[`,
		`{"id":"a1","kind":"step","status":"ok","entryIds":["a1","t1"],"provider":"fake","model":"echo","attempt":1,"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3},"stopReason":"toolUse","tools":[{"id":"c1","kind":"tool","name":"read","status":"running","isError":false,"entryIds":["a1"],"children":[]}],"thinkingLevel":"medium","cacheHitRatio":0,"requestAt":1,"firstTokenAt":6,"doneAt":9,"ttftMs":5,"tps":12.5}`,
		`"stopReason":"error","tools":[],"cacheHitRatio":0}],"usage":{`,
		`"startedAt":10,"endedAt":20}],"aux":[{"id":"x1","kind":"aux","purpose":"permission_classify","provider":"fake","model":"echo","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3}}],"partial":false},`,
		`"hasMoreBefore":false,"cursor":{"since":null},"leafId":null,"previews":{"turn:u1":{"input":"<a & b>\u2028"},"step:a1":{"output":"done"}}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s\nin %s", want, got)
		}
	}

	res.Previews = nil
	line, _ = stdio.Marshal(res)
	if strings.Contains(string(line), "previews") {
		t.Errorf("previews only for content=preview: %s", line)
	}
	res.Previews = []trace.Preview{}
	line, _ = stdio.Marshal(res)
	if !strings.HasSuffix(string(line), `"previews":{}}`+"\n") {
		t.Errorf("content=preview without nodes: %s", line)
	}
}

func TestTraceErrorCodes(t *testing.T) {
	if c := wirecode.Native(trace.TaskNotFound("t9")); c != wirecode.TaskNotFound {
		t.Errorf("task: %q", c)
	}
	err := trace.Query{Before: "a", Since: "b"}.Validate()
	if c := wirecode.Native(err); c != wirecode.InvalidArguments {
		t.Errorf("invalid: %q", c)
	}
	if !errors.Is(err, trace.ErrInvalidArguments) {
		t.Error(err)
	}
}

package agents

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/trace"
)

// A child closed to stay within the retained children still answers
// get_trace{taskId}, from its session file: the same trace as while it
// was open.
func TestTraceOfReleasedChild(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"a","agent":"explore","background":false}`),
		`C:{"text":"one"}`,
		`{"text":"done"}`,
		taskCall(`{"prompt":"b","agent":"explore","background":false}`),
		`C:{"text":"two"}`,
		`{"text":"done again"}`)
	r.reg.cfg.Retain = 1
	r.prompt("go")
	open, err := r.reg.Trace(trace.Query{TaskID: "t1", Content: trace.ContentPreview})
	if err != nil {
		t.Fatal(err)
	}
	r.prompt("more") // t2 finishes: t1 is released
	t1 := r.reg.Get("t1")
	r.reg.mu.Lock()
	released := t1.child == nil
	r.reg.mu.Unlock()
	if !released {
		t.Fatal("t1 was not released")
	}
	closed, err := r.reg.Trace(trace.Query{TaskID: "t1", Content: trace.ContentPreview})
	if err != nil {
		t.Fatalf("trace of a released child: %v", err)
	}
	a, _ := json.Marshal(open)
	b, _ := json.Marshal(closed)
	if string(a) != string(b) {
		t.Fatalf("trace changed when the child was released:\nopen   %s\nclosed %s", a, b)
	}
	if len(closed.Trace.Turns) != 1 || closed.Trace.SessionFile != t1.SessionFile() || closed.Task != nil {
		t.Fatalf("trace %s", b)
	}
	if _, err := r.reg.Trace(trace.Query{TaskID: "t9"}); !errors.Is(err, trace.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	if _, err := r.reg.Trace(trace.Query{TaskID: "t1", Content: "x"}); !errors.Is(err, trace.ErrInvalidArguments) {
		t.Fatalf("bad content: %v", err)
	}
}

// An external task's trace has no turns; task.external holds the skeleton
// of what ama saw of each turn.
func TestTraceOfExternalTask(t *testing.T) {
	installFakeCLI(t, "claude", "claude", "tool")
	r := externalRig(t, AgentClaude, false)
	runTask(t, r, AgentClaude)
	res, err := r.reg.Trace(trace.Query{TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trace.Turns) != 0 {
		t.Fatalf("turns %d", len(res.Trace.Turns))
	}
	tt, ok := res.Task.(TaskTrace)
	if !ok || tt.TaskID != "t1" || tt.Runner != AgentClaude || tt.Status != StatusCompleted || tt.External.SessionID == "" ||
		res.Trace.SessionID != tt.External.SessionID {
		t.Fatalf("task %+v", res.Task)
	}
	if len(tt.External.Turns) != 1 {
		t.Fatalf("external turns %+v", tt.External.Turns)
	}
	turn := tt.External.Turns[0]
	if turn.Turn != 1 || turn.StopReason != "end_turn" || len(turn.Tools) != 1 || turn.Tools[0].Status != "completed" ||
		!strings.HasPrefix(turn.Tools[0].Title, "Bash: touch ") || turn.Usage == nil || turn.Usage.TotalTokens != 150 {
		t.Fatalf("turn %+v", turn)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"leafId":null,"task":{"taskId":"t1"`) {
		t.Fatalf("wire %s", b)
	}
}

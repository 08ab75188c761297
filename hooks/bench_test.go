package hooks

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// BenchmarkPreToolUseHook is the overhead one PreToolUse hook that exits 0
// at once adds to a tool call (spawn, stdin, wait, parse, merge). Target:
// under 5 ms median.
func BenchmarkPreToolUseHook(b *testing.B) {
	set, err := Parse([]byte(`{"version":1,"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"exit 0"}]}]}}`), "bench.json", "user")
	if err != nil {
		b.Fatal(err)
	}
	d := NewDispatcher(set, Options{})
	input := json.RawMessage(`{"command":"ls"}`)
	c := Call{Event: PreToolUse, Common: Common{SessionID: "s", Cwd: b.TempDir(), PermissionMode: "default"}, Tool: "bash", Input: input,
		Payload: ToolInput{ToolCallID: "c0", ToolName: "bash", ToolInput: input}}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if r := d.Run(context.Background(), c); r == nil || len(r.Outcomes) != 1 {
			b.Fatal("hook did not run")
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkNoHooks is the check a tool call makes when no hook is
// configured: no process, no allocation.
func BenchmarkNoHooks(b *testing.B) {
	var d *Dispatcher
	b.ReportAllocs()
	for b.Loop() {
		if d.MayMatch(PreToolUse, "bash") || d.MayMatch(PostToolUse, "bash") {
			b.Fatal("nil dispatcher matched")
		}
	}
}

package host_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/host"
	"github.com/armadra/ama-rpc/tools"
)

func startEcho(tb testing.TB) *host.Host {
	return startAdapter(tb, `module.exports = {hostApi: 1, create(api) {
  api.tools.register({name: "host_echo", permission: "read", description: "Echo.", parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
    execute: async (input) => ({content: "host echo: " + input.text})});
  return {id: "echo"};
}};`)
}

// startAdapter runs the adapter src (skipped without Node.js).
func startAdapter(tb testing.TB, src string) *host.Host {
	tb.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		tb.Skip("needs Node.js")
	}
	dir := tb.TempDir()
	mod := filepath.Join(dir, "adapter.cjs")
	if err := os.WriteFile(mod, []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	h, err := host.Start(context.Background(), host.Options{Module: mod, Cwd: dir, Mode: "rpc", Version: "test",
		Environ: []string{"PATH=" + os.Getenv("PATH")}, Session: host.SessionInfo{ID: "s1", Cwd: dir}})
	if err != nil || h == nil {
		tb.Fatalf("start: %v", err)
	}
	tb.Cleanup(func() { h.Shutdown(context.Background()) })
	return h
}

func TestToolRoundTrip(t *testing.T) {
	h := startEcho(t)
	ts := h.Tools()
	if len(ts) != 1 {
		t.Fatalf("tools: %d", len(ts))
	}
	res := tools.Execute(context.Background(), ts[0], &tools.Call{ID: "c1", Args: json.RawMessage(`{"text":"ping"}`)})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result: %+v", res)
	}
	b, _ := json.Marshal(res.Content[0])
	if string(b) != `{"type":"text","text":"host echo: ping"}` {
		t.Fatalf("content %s", b)
	}
}

// BenchmarkToolRoundTrip is one execute of a host tool that returns at
// once: Go → bridge → adapter → Go. The median is reported (target < 1 ms).
func BenchmarkToolRoundTrip(b *testing.B) {
	h := startEcho(b)
	tool := h.Tools()[0]
	args := json.RawMessage(`{"text":"ping"}`)
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := tools.Execute(context.Background(), tool, &tools.Call{ID: "c", Args: args})
		durs = append(durs, time.Since(start))
		if res.IsError {
			b.Fatal("tool failed")
		}
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "median-us")
}

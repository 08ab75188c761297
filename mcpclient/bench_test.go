package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

// BenchmarkStdioFirstCall is the start-up cost of one stdio server: spawn,
// initialize, tools/list, the first call, and the stop.
func BenchmarkStdioFirstCall(b *testing.B) {
	cwd := b.TempDir()
	for b.Loop() {
		s := NewSet([]Server{stdioServer("t")}, nil, Options{Cwd: cwd})
		if errs := s.Ready(context.Background()); len(errs) > 0 {
			b.Fatal(errs)
		}
		if res := s.Registry().Run(context.Background(), "mcp__t__echo", &tools.Call{Args: json.RawMessage(`{"text":"x"}`)}); res.IsError {
			b.Fatal(res.Content)
		}
		s.Close()
	}
}

// BenchmarkStdioCall is one call to a running server (validation, the
// round trip, the result mapping).
func BenchmarkStdioCall(b *testing.B) {
	s := NewSet([]Server{stdioServer("t")}, nil, Options{Cwd: b.TempDir()})
	defer s.Close()
	if errs := s.Ready(context.Background()); len(errs) > 0 {
		b.Fatal(errs)
	}
	reg := s.Registry()
	args := json.RawMessage(`{"text":"x"}`)
	for b.Loop() {
		if res := reg.Run(context.Background(), "mcp__t__echo", &tools.Call{Args: args}); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkBuiltinCall is the same path for a built-in tool (todo get),
// the baseline of BenchmarkStdioCall.
func BenchmarkBuiltinCall(b *testing.B) {
	reg := tools.Default()
	env := &tools.Env{Cwd: b.TempDir()}
	args := json.RawMessage(`{"action":"get"}`)
	for b.Loop() {
		reg.Run(context.Background(), "todo", &tools.Call{Args: args, Env: env})
	}
}

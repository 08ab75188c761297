package rpc_test

import (
	"io"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/rpc"
)

// BenchmarkWriterDelta measures the hot path of streaming: one text delta
// enqueued and written as a message_update line.
func BenchmarkWriterDelta(b *testing.B) {
	w := rpc.NewWriter(io.Discard, rpc.WriterOptions{})
	u := &llm.Usage{}
	b.ReportAllocs()
	for b.Loop() {
		w.SendDelta("text_delta", 0, "tok ", u)
	}
	w.Close()
}

// BenchmarkWriterEvent measures one generic event line (reflection-based
// encoding).
func BenchmarkWriterEvent(b *testing.B) {
	w := rpc.NewWriter(io.Discard, rpc.WriterOptions{})
	ev := rpc.Response{Type: "response", Command: "get_state", Success: true, Data: map[string]any{"isStreaming": false}}
	b.ReportAllocs()
	for b.Loop() {
		w.Send(ev)
	}
	w.Close()
}

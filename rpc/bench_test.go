package rpc

import (
	"io"
	"testing"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
)

// BenchmarkWriterDelta measures the hot path of streaming: one text delta
// enqueued and written as a message_update line.
func BenchmarkWriterDelta(b *testing.B) {
	w := stdio.NewWriter(io.Discard, stdio.WriterOptions{DeltaLine: appendDeltaLine})
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
	w := stdio.NewWriter(io.Discard, stdio.WriterOptions{})
	ev := Response{Type: "response", Command: "get_state", Success: true, Data: map[string]any{"isStreaming": false}}
	b.ReportAllocs()
	for b.Loop() {
		w.Send(ev)
	}
	w.Close()
}

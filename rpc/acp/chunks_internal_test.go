package acp

import (
	"encoding/json"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// BenchmarkChunkLine compares building one agent_message_chunk line with
// one append against the Notify path it replaces (marshal the update,
// marshal jsonrpc2's envelope, encodeEnvelope's parse and rewrite).
func BenchmarkChunkLine(b *testing.B) {
	const sid, text = "00000000-0000-4000-8000-000000000001", "a"
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		heads := newChunkHeads(sid)
		var line []byte
		for b.Loop() {
			line = append(appendChunkBody(append(line[:0], heads.message...), text), chunkTail...)
		}
	})
	b.Run("notify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := &jsonrpc2.Request{Method: "session/update", Notif: true}
			if err := req.SetParams(notification{SessionID: sid, Update: contentChunk{SessionUpdate: updAgentChunk,
				Content: contentBlock{Type: "text", Text: text}}}); err != nil {
				b.Fatal(err)
			}
			raw, err := json.Marshal(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := encodeEnvelope(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package acp_test

import (
	"context"
	"testing"

	"github.com/armadra/ama-rpc/rpc/acp"
)

var chunkCases = []struct{ session, text string }{
	{"00000000-0000-4000-8000-000000000001", "hello back"},
	{"s", `<a href="x">&amp;</a> && x > 1`},
	{"s", "quote \" backslash \\ slash / \\u003c literal"},
	{"s", "\n\r\t\b\f\x00\x01\x1f\x7f"},
	{"s", "é 日本語 🎉 \u00a0 \ufeff"},
	{"s", "sep \u2028 and \u2029"},
	{"s", "bad \xff\xfe utf8 \xe2\x80 cut \xed\xa0\x80 surrogate"},
	{"odd <id> & \"q\" \u2028 \xff", "x"},
}

// The one-append line is byte for byte what the Notify path writes
// (jsonrpc2's envelope, then encodeEnvelope: key order, no HTML escapes).
func TestChunkLineMatchesNotify(t *testing.T) {
	p := newStreamPeer(t, 0)
	for _, kind := range []string{"agent_message_chunk", "agent_thought_chunk"} {
		for _, c := range chunkCases {
			checkChunkLine(t, p, c.session, kind, c.text)
		}
	}
}

func FuzzChunkLine(f *testing.F) {
	for _, c := range chunkCases {
		f.Add(c.session, c.text, false)
	}
	f.Add("s", "t", true)
	p := newStreamPeer(f, 0)
	f.Fuzz(func(t *testing.T, session, text string, thought bool) {
		kind := "agent_message_chunk"
		if thought {
			kind = "agent_thought_chunk"
		}
		checkChunkLine(t, p, session, kind, text)
	})
}

func checkChunkLine(t *testing.T, p *streamPeer, session, kind, text string) {
	t.Helper()
	if text == "" {
		return // an empty delta sends no update at all (omitempty would drop "text")
	}
	if err := p.conn.Notify(context.Background(), "session/update", acp.Notification(session, acp.ChunkUpdate(kind, text))); err != nil {
		t.Fatal(err)
	}
	want := p.next(t) + "\n"
	if got := string(acp.AppendChunkLine([]byte("keep:"), session, kind, text)); got != "keep:"+want {
		t.Fatalf("session %q text %q:\n got %s\nwant %s", session, text, got, "keep:"+want)
	}
}

package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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

// A client that stops reading while a reply streams: consecutive chunks of
// one kind are joined, nothing else is, and the stream rebuilds exactly
// the text, kind by kind, in the order of the unmerged stream. The reply
// interleaves thinking and text (multi-byte UTF-8, escapes, HTML
// characters, invalid bytes) and makes tool calls in between.
func TestStalledClientChunksRebuildTheReply(t *testing.T) {
	piece := func(tag string) string {
		var b strings.Builder
		for i := 0; i < 400; i++ {
			fmt.Fprintf(&b, "%s%d é日🎉 <a&b> \"q\" \\ \n\t\u2028\x01 ", tag, i)
		}
		return b.String() + "\xff"
	}
	think1, text1, think2, text2 := piece("T1-"), piece("M1-"), piece("T2-"), piece("M2-")
	text3, think3, text4 := piece("M3-"), piece("T3-"), piece("M4-")
	step := func(key, s string, size int) map[string]any { return map[string]any{key: s, "chunkSize": size} }
	touch := func(id, name string) map[string]any {
		return map[string]any{"toolCall": map[string]any{"id": id, "name": "bash", "arguments": map[string]any{"command": "touch " + name}}}
	}
	script, _ := json.Marshal([]any{
		map[string]any{"steps": []any{step("thinking", think1, 1), step("text", text1, 1), step("thinking", think2, 3),
			step("text", text2, 2), touch("call_1", "gate-1")}},
		map[string]any{"steps": []any{step("text", text3, 1), step("thinking", think3, 1), step("text", text4, 1),
			touch("call_2", "gate-2")}},
		map[string]any{"steps": []any{step("text", "done.", 0)}},
	})
	want := []string{"agent_thought_chunk " + think1, "agent_message_chunk " + text1, "agent_thought_chunk " + think2,
		"agent_message_chunk " + text2, "tool_call call_1", "agent_message_chunk " + text3, "agent_thought_chunk " + think3,
		"agent_message_chunk " + text4, "tool_call call_2", "agent_message_chunk done."}
	deltas := 0
	for _, s := range []string{think1, text1, think2, text2, text3, think3, text4} {
		deltas += utf8.RuneCountInString(s)
	}

	run := func(stall bool) (segments, chunks []string, chunkLines int) {
		c := startACP(t, string(script), "--permission-mode", "full-auto")
		c.initialize()
		sid := c.newSession()
		if stall {
			c.r.Stall()
		}
		c.send("p", "session/prompt", prompt(sid, "go"))
		if stall {
			// Every chunk before the second tool call is queued once the
			// tool ran (the side effect), all while nothing was read.
			c.r.Poll("the second tool call ran", func() bool {
				_, err := os.Stat(filepath.Join(c.r.Work, "gate-2"))
				return err == nil
			})
			c.r.Resume()
		}
		if got := c.stopReason("p"); got != "end_turn" {
			t.Fatalf("stop reason %q", got)
		}
		c.finish(0)
		for _, l := range c.r.Lines() {
			var m struct {
				Method string
				Params struct {
					SessionID string
					Update    struct {
						SessionUpdate string
						ToolCallID    string
						Content       json.RawMessage
					}
				}
			}
			if json.Unmarshal(l, &m) != nil || m.Method != "session/update" {
				continue
			}
			if m.Params.SessionID != sid {
				t.Fatalf("update of session %q in a one-session run", m.Params.SessionID)
			}
			u := m.Params.Update
			switch u.SessionUpdate {
			case "agent_message_chunk", "agent_thought_chunk":
				chunkLines++
				var cb struct{ Type, Text string }
				if err := json.Unmarshal(u.Content, &cb); err != nil || cb.Type != "text" {
					t.Fatalf("chunk content %s", u.Content)
				}
				if n := len(segments); n > 0 && strings.HasPrefix(segments[n-1], u.SessionUpdate+" ") {
					segments[n-1] += cb.Text
				} else {
					segments = append(segments, u.SessionUpdate+" "+cb.Text)
				}
			default:
				segments = append(segments, u.SessionUpdate+" "+u.ToolCallID)
			}
		}
		for _, s := range segments {
			if strings.HasPrefix(s, "agent_") || strings.HasPrefix(s, "tool_call ") {
				chunks = append(chunks, s)
			}
		}
		return segments, chunks, chunkLines
	}

	stalledAll, stalled, stalledLines := run(true)
	plainAll, plain, _ := run(false)
	wantText := strings.ToValidUTF8(strings.Join(want, "|"), "\ufffd")
	for name, got := range map[string][]string{"stalled": stalled, "reading": plain} {
		if g := strings.Join(got, "|"); g != wantText {
			t.Errorf("%s client rebuilt %d bytes of chunks and tool calls, want %d:\n%.600q\nwant\n%.600q", name, len(g), len(wantText), g, wantText)
		}
	}
	if strings.Join(stalledAll, "|") != strings.Join(plainAll, "|") {
		t.Errorf("updates differ between a stalled and a reading client:\n%.800q\n%.800q", stalledAll, plainAll)
	}
	if stalledLines >= deltas/2 {
		t.Errorf("%d chunk lines for %d deltas: the stalled client's chunks were not joined", stalledLines, deltas)
	}
	t.Logf("stalled client: %d chunk lines for at least %d deltas", stalledLines, deltas)
}

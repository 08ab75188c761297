package rpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
)

func stdString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<tag> & \"q\" \\", "\u2028\u2029", "\x00\x01\b\f\n\r\t\x7f", "\xff\xfe", "世界", "\ud7ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(jsonstr.Append(nil, []byte(s), jsonstr.Wire)), stdString(s); got != want {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestDeltaLineMatchesGenericEncoding(t *testing.T) {
	u := &llm.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, TotalTokens: 10}
	got := appendDeltaLine(nil, "text_delta", 3, []byte("a<b>\u2028"), u)
	want, _ := stdio.Marshal(wireMessageUpdate{Type: "message_update",
		AssistantMessageEvent: llm.StreamEvent{Type: "text_delta", ContentIndex: 3, Delta: "a<b>\u2028"}, Usage: u})
	if string(got) != string(want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	u.Finalize(llm.Prices{Input: 1})
	got = appendDeltaLine(nil, "thinking_delta", 0, []byte("x"), u)
	want, _ = stdio.Marshal(wireMessageUpdate{Type: "message_update",
		AssistantMessageEvent: llm.StreamEvent{Type: "thinking_delta", Delta: "x"}, Usage: u})
	if string(got) != string(want) {
		t.Fatalf("with cost: got  %s\nwant %s", got, want)
	}
}

// message_start/message_end of a huge prompt are spliced, and the line is
// the one the generic encoder writes.
func TestBigMessageEventSpliced(t *testing.T) {
	text := string(bytes.Repeat([]byte("a<\n\u2028\xff\""), llm.SpliceBytes/4))
	for _, e := range []events.Event{
		events.MessageStart{Message: &llm.UserMessage{Role: "user", Content: llm.StringContent(text), Timestamp: 3}},
		events.MessageEnd{Message: &llm.UserMessage{Role: "user", Content: llm.StringContent(text), Timestamp: 3, Origin: "steer"}},
		events.BeforeAgentStart{Prompt: text},
	} {
		if _, _, ok := bigMessageEvent(e); !ok {
			t.Fatal("not spliced")
		}
		got, err := encodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		prefix := strconv.AppendQuote([]byte(`{"type":`), e.Type())
		want, _ := stdio.MarshalAfter(prefix, e)
		want[len(prefix)] = ','
		if !bytes.Equal(got, want) {
			t.Fatalf("spliced %s differs from the generic encoding", e.Type())
		}
	}
}

package store

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
)

// parseEntry reads one entry line with the bulk builder (a file's read),
// without UnmarshalJSON's recover, so a panic fails the test.
func parseEntry(t *testing.T, line []byte) (*Entry, bool) {
	s := jsonobj.Scanner{Nests: messageNests}
	if s.Scan(line) != jsonobj.Object {
		return nil, false
	}
	p := classify(line, s.Members(0))
	if p.typ == nil || p.id == nil || !p.typ.IsString(line) || !p.id.IsString(line) {
		return nil, false
	}
	b := builder{bulk: true}
	e := b.entry()
	b.fill(e, line, &s, &p)
	return e, true
}

// FuzzMessageFacts checks that whenever a message's facts are read from
// its line, they are what encoding/json reads from the same body (and, for
// a message llm decodes, what FactsOf says of it).
func FuzzMessageFacts(f *testing.F) {
	for _, s := range []string{
		`{"message":{"role":"assistant","content":[{"type":"text","text":"a\"b"},{"type":"toolCall","id":"c1","name":"read","arguments":{"content":[{"type":"toolCall","id":"no"}]}}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.5,"output":1e-3,"cacheRead":0,"cacheWrite":0,"total":1.5}},"stopReason":"toolUse","timestamp":12}}`,
		`{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":13}}`,
		`{"message":{"role":"user","content":"hi","timestamp":1,"origin":"steer"}}`,
		`{"message":{"Role":"assistant","USAGE":{"Input":7},"usage":{"input":8},"content":null,"timestamp":-0}}`,
		`{"message":{"role":"assistant","usage":{"input":1.5},"timestamp":1}}`,
		`{"message":{"role":"assistant","usage":{"cost":null},"content":[],"timestamp":1e3}}`,
		`{"message":{"role":"to\u006fl","toolCallId":"\u00e9"}}`,
		`{"message":{"role":"assistant","usage":{"cost":{"total":2}},"Usage":{"cost":{"input":1}}}}`,
		`{"message":{"role":"assistant","Content":[{"type":"toolCall","id":"a"}]}}`,
		`{"message":{"role":"assistant","content":[1,{"type":"toolCall","id":"a"}]}}`,
		`{"message":{"role":"assistant","content":[{"TYPE":"toolCall","Id":"a"},{"type":"toolCall"}]}}`,
		`{"message":{"role":"assistant","content":"text"}}`,
		`{"message":{"role":"assistant","usage":{"input":99999999999999999999}}}`,
		`{"message":{"role":"assistant","usage":{"cost":{"total":1e400}}}}`,
		`{"message":{"role":"user"},"message":{"role":"assistant"}}`,
		`{"message":{"role":"user","timestamp":2},"extra":1}`,
		`{"message":{"role":"assistant","usage":{"cost":{"total":2},"cost":{"total":3}}}}`,
		`{"message":{"role":"assistant","usage":{"Cost":{"total":2}},"timestamp":1}}`,
		`{"message":{"role":"assistant","usage":{"input":1,"cost":{"input":1e400,"total":1}}}}`,
		`{"message":{"role":"assistant","usage":{"cost":{"output":1` + strings.Repeat("0", 320) + `,"total":1}}}}`,
		`{"message":{"role":"assistant","usage":{"cost":{"total":-0.5e-2}},"usage":{"input":3}}}`,
		`{"message":{"role":"assistant","usage":{"input":4,"cost":{"total":1.25},"x":{"cost":{"total":9}}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) || len(body) < 2 || body[0] != '{' {
			return
		}
		e, ok := parseEntry(t, []byte(`{"type":"message","id":"x","parentId":null,"timestamp":"t",`+body[1:]))
		if !ok {
			return
		}
		got := e.MessageFacts()
		if got == nil {
			return
		}
		var want struct {
			Message struct {
				Role       string          `json:"role"`
				Timestamp  int64           `json:"timestamp"`
				ToolCallID string          `json:"toolCallId"`
				Usage      llm.Usage       `json:"usage"`
				Content    json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := e.Decode(&want); err != nil {
			t.Fatalf("facts read from %s, the decoder fails: %v", e.Body(), err)
		}
		w := want.Message
		wantFacts := MessageFacts{Role: w.Role, Timestamp: w.Timestamp}
		switch w.Role {
		case llm.RoleToolResult:
			wantFacts.ToolCallID = w.ToolCallID
		case llm.RoleAssistant:
			u := w.Usage
			wantFacts.Input, wantFacts.Output, wantFacts.CacheRead, wantFacts.CacheWrite = u.Input, u.Output, u.CacheRead, u.CacheWrite
			if u.Cost != nil {
				wantFacts.CostTotal = u.Cost.Total
			}
			if len(w.Content) > 0 && string(w.Content) != "null" {
				var blocks []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				}
				if err := json.Unmarshal(w.Content, &blocks); err != nil {
					t.Fatalf("facts read the blocks of %s, the decoder fails: %v", e.Body(), err)
				}
				for _, b := range blocks {
					if b.Type == "toolCall" {
						wantFacts.ToolCalls = append(wantFacts.ToolCalls, b.ID)
					}
				}
			}
		}
		if !sameFacts(got, &wantFacts) {
			t.Fatalf("%s: facts %+v, decoder %+v", e.Body(), *got, wantFacts)
		}
		if m, err := e.Message(); err == nil {
			if of := FactsOf(m); of != nil && !sameFacts(got, of) {
				t.Fatalf("%s: facts %+v, FactsOf the decoded message %+v", e.Body(), *got, *of)
			}
		}
	})
}

func sameFacts(a, b *MessageFacts) bool {
	return a.Role == b.Role && a.Timestamp == b.Timestamp && a.ToolCallID == b.ToolCallID &&
		a.Input == b.Input && a.Output == b.Output && a.CacheRead == b.CacheRead && a.CacheWrite == b.CacheWrite &&
		a.CostTotal == b.CostTotal && slices.Equal(a.ToolCalls, b.ToolCalls)
}

// TestMessageFacts: the facts of the shapes the agent writes are known,
// from a file and from MessageEntry alike; bodies they cannot read
// exactly have none.
func TestMessageFacts(t *testing.T) {
	cost := &llm.Cost{Total: 0.25}
	msgs := []llm.Message{
		llm.NewUser("hi", 5, ""),
		&llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("x"), llm.NewToolCall("c1", "read", json.RawMessage(`{}`)), llm.NewToolCall("c2", "ls", json.RawMessage(`{}`))},
			Usage: llm.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Cost: cost}, StopReason: llm.StopToolUse, Timestamp: 6},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Content{llm.Text("out")}, Timestamp: 7},
	}
	for _, m := range msgs {
		e := MessageEntry(m)
		e.ID = "id"
		want := FactsOf(m)
		if got := e.MessageFacts(); got == nil || !sameFacts(got, want) {
			t.Fatalf("MessageEntry(%T) facts %+v, want %+v", m, got, want)
		}
		read, ok := parseEntry(t, e.AppendJSON(nil))
		if !ok {
			t.Fatalf("cannot read %s", e.AppendJSON(nil))
		}
		if got := read.MessageFacts(); got == nil || !sameFacts(got, want) {
			t.Fatalf("read %s: facts %+v, want %+v", e.AppendJSON(nil), got, want)
		}
	}
	for _, body := range []string{
		`{"message":{"role":"assistant","usage":{"input":1},"Usage":{"output":2}}}`, // merged by the decoder
		`{"message":{"role":"assistant","content":[{"type":"toolCall","id":"a","ID":"b"}]}}`,
		`{"message":{"role":"user","timestamp":1.5}}`,
		`{"message":{"r\u006fle":"user"}}`,
		`{"message":{"role":"system","timestamp":1}}`,
		`{"message":{"role":"user"},"x":1}`,
	} {
		e, ok := parseEntry(t, []byte(`{"type":"message","id":"x",`+body[1:]))
		if !ok {
			t.Fatalf("cannot read %s", body)
		}
		if f := e.MessageFacts(); f != nil {
			t.Errorf("%s: facts %+v, want none", body, *f)
		}
	}
}

package trace

import (
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// FuzzReadLite checks that whenever readLite answers, it answers what
// encoding/json reads into liteMessage from the same body.
func FuzzReadLite(f *testing.F) {
	for _, s := range []string{
		`{"message":{"role":"assistant","content":[{"type":"text","text":"a\"b"},{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.5,"output":1e-3,"cacheRead":0,"cacheWrite":0,"total":1.5}},"stopReason":"toolUse","timestamp":12}}`,
		`{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":13}}`,
		`{"message":{"role":"user","content":"hi","timestamp":1,"origin":"steer"}}`,
		`{"message":{"Role":"assistant","USAGE":{"Input":7},"usage":{"input":8},"content":null,"timestamp":-0}}`,
		`{"message":{"role":"assistant","usage":{"input":1.5},"timestamp":1}}`,
		`{"message":{"role":"assistant","usage":{"cost":null},"content":[],"timestamp":1e3}}`,
		`{"message":{"role":"to\u006fl","toolCallId":"\u00e9"}}`,
		`{"message":{"role":"assistant","usage":{"cost":{"total":2}},"Usage":{"cost":{"input":1}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		var e store.Entry
		if json.Unmarshal([]byte(`{"type":"message","id":"x","parentId":null,"timestamp":"t",`+body[min(1, len(body)):]), &e) != nil ||
			len(body) == 0 || body[0] != '{' {
			return
		}
		var got liteMessage
		var blocks []liteBlock
		if !readLite(&e, &got, &blocks) {
			return
		}
		var want struct {
			Message liteMessage `json:"message"`
		}
		if err := e.Decode(&want); err != nil {
			t.Fatalf("readLite read %s, the decoder fails: %v", e.Body(), err)
		}
		w := want.Message
		var wantBlocks []liteBlock
		if w.Role == llm.RoleAssistant && len(w.Content) > 0 {
			if err := json.Unmarshal(w.Content, &wantBlocks); err != nil {
				t.Fatalf("readLite read the blocks of %s, the decoder fails: %v", e.Body(), err)
			}
		}
		if got.Role != w.Role || got.Timestamp != w.Timestamp || got.ToolCallID != w.ToolCallID ||
			got.Usage.Input != w.Usage.Input || got.Usage.Output != w.Usage.Output ||
			got.Usage.CacheRead != w.Usage.CacheRead || got.Usage.CacheWrite != w.Usage.CacheWrite ||
			(got.Usage.Cost == nil) != (w.Usage.Cost == nil) || got.Usage.Cost != nil && got.Usage.Cost.Total != w.Usage.Cost.Total {
			t.Fatalf("%s: readLite %+v, decoder %+v", e.Body(), got, w)
		}
		if w.Role == llm.RoleAssistant {
			if len(blocks) != len(wantBlocks) {
				t.Fatalf("%s: blocks %v, decoder %v", e.Body(), blocks, wantBlocks)
			}
			for i := range blocks {
				if blocks[i] != wantBlocks[i] {
					t.Fatalf("%s: blocks %v, decoder %v", e.Body(), blocks, wantBlocks)
				}
			}
		}
	})
}

// FuzzReadStep checks that whenever readStep answers, it answers what
// store.CustomData reads from the same ama.trace entry.
func FuzzReadStep(f *testing.F) {
	for _, s := range []string{
		`{"customType":"ama.trace","data":{"kind":"step","attempt":1,"assistantEntryId":"a1","requestAt":100,"firstTokenAt":150.5,"doneAt":2e3,"outputTokens":60,"tps":null,"status":"ok"}}`,
		`{"customType":"ama.trace","data":{"kind":"step","TPS":12.5,"attempt":1.5}}`,
		`{"customType":"ama.trace","data":{"Kind":"retry_wait","kind":"st\u0065p","doneAt":"x"}}`,
		`{"customType":"ama.trace","data":null}`,
		`{"customType":"ama.trace"}`,
		`{"customType":"ama.trace","data":{"tps":-0.0,"outputTokens":-0}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) || len(body) < 2 || body[0] != '{' {
			return
		}
		var e store.Entry
		if json.Unmarshal([]byte(`{"type":"custom","id":"x","parentId":null,"timestamp":"t",`+body[1:]), &e) != nil {
			return
		}
		var got stepData
		if !readStep(&e, &got) {
			return
		}
		want, err := store.CustomData[stepData](&e)
		if err != nil {
			t.Fatalf("readStep read %s, the decoder fails: %v", e.Body(), err)
		}
		if (got.TPS == nil) != (want.TPS == nil) || got.TPS != nil && *got.TPS != *want.TPS {
			t.Fatalf("%s: tps %v, decoder %v", e.Body(), got.TPS, want.TPS)
		}
		got.TPS, want.TPS = nil, nil
		if got != want {
			t.Fatalf("%s: readStep %+v, decoder %+v", e.Body(), got, want)
		}
	})
}

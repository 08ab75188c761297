package openai

import "testing"

// BenchmarkParseFast decodes the common chunk shapes with the fast path
// alone: a text delta, a tool-call delta and the final usage chunk. It
// must report 0 allocs/op beyond the strings it returns.
func BenchmarkParseFast(b *testing.B) {
	chunks := [][]byte{
		[]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}`),
		[]byte(`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"read","arguments":"{\"path\":\"a\\u00e9\"}"}}]}}]}`),
		[]byte(`{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":3}}}`),
	}
	var scratch []byte
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range chunks {
			var c chunk
			if !parseFast(raw, &c, &scratch) {
				b.Fatal("refused")
			}
		}
	}
}

// TestParseFastAllocs: the member walkers' closures stay on the stack; a
// text delta costs only its strings (id, content) and the choices slice.
func TestParseFastAllocs(t *testing.T) {
	raw := []byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"tok","tool_calls":null},"finish_reason":null}],"usage":null}`)
	var scratch []byte
	got := testing.AllocsPerRun(100, func() {
		var c chunk
		if !parseFast(raw, &c, &scratch) {
			t.Fatal("refused")
		}
	})
	if got > 3 {
		t.Errorf("%v allocations per text delta, want at most 3", got)
	}
}

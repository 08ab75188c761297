package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

// The fast path (sseReader + parseFast) against the reference path
// (go-openai's RecvRaw + encoding/json, the adapter as it was before): the
// same bodies, read in the same pieces, must give the same events, the
// same message and the same error.

// cannedTransport answers every request with body, handed out in reads of
// the sizes in split (cycled; nil: the whole body at once).
type cannedTransport struct {
	body  string
	split []int
}

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Request: r,
		Body: io.NopCloser(&splitReader{s: c.body, split: c.split})}, nil
}

type splitReader struct {
	s     string
	split []int
	k     int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := len(r.s)
	if len(r.split) > 0 {
		n = min(n, r.split[r.k%len(r.split)])
		r.k++
	}
	n = copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}

// outcome renders one Stream call for comparison.
func outcome(t testing.TB, ref bool, body string, split []int) string {
	o := openai.Options{ID: "diff", BaseURL: "http://diff.invalid/v1", APIKey: secret,
		HTTPClient: &http.Client{Transport: cannedTransport{body: body, split: split}}}
	p := openai.New(o)
	if ref {
		p = openai.NewReference(o)
	}
	var evs []llm.StreamEvent
	msg, err := p.Stream(context.Background(), request(), func(ev llm.StreamEvent, _ *llm.AssistantMessage) {
		evs = append(evs, ev)
	})
	b, jerr := json.Marshal(struct {
		Events []llm.StreamEvent
		Msg    *llm.AssistantMessage
	}{evs, msg})
	if jerr != nil {
		t.Fatal(jerr)
	}
	return fmt.Sprintf("%s\nerror %T %+v", b, err, err)
}

// splits are the read patterns every body is fed in.
func splits() [][]int {
	rng := rand.New(rand.NewPCG(19, 1))
	random := make([]int, 97)
	for i := range random {
		random[i] = 1 + rng.IntN(40)
	}
	return [][]int{nil, {1}, {2}, {7}, {5, 1, 13}, random}
}

// chunkJSON is a chunk in the common shape with extra members as real
// servers send them.
func chunkJSON(choice map[string]any, extra map[string]any) string {
	c := map[string]any{"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "m", "system_fingerprint": "fp_1"}
	if choice != nil {
		c["choices"] = []any{choice}
	} else {
		c["choices"] = []any{}
	}
	for k, v := range extra {
		c[k] = v
	}
	return js(c)
}

func ch(d map[string]any, finish any) map[string]any {
	return map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}
}

func tc(index any, id, name, args string) map[string]any {
	c := map[string]any{"function": map[string]any{"arguments": args}}
	if index != nil {
		c["index"] = index
	}
	if id != "" {
		c["id"], c["type"] = id, "function"
		c["function"].(map[string]any)["name"] = name
	}
	return c
}

// variantStreams are the provider variants the adapter supports, in the
// shapes their servers send.
func variantStreams() map[string]string {
	u := func(m map[string]any) string { return chunkJSON(nil, map[string]any{"usage": m}) }
	return map[string]string{
		"openai text": sse(chunkJSON(ch(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil),
			chunkJSON(ch(map[string]any{"content": "Hello"}, nil), nil), chunkJSON(ch(map[string]any{"content": " world"}, nil), nil),
			chunkJSON(ch(map[string]any{}, "stop"), nil),
			u(map[string]any{"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22,
				"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
				"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "accepted_prediction_tokens": 0}}),
			"[DONE]"),
		"openai parallel tools": sse(chunkJSON(ch(map[string]any{"role": "assistant", "content": nil}, nil), nil),
			chunkJSON(ch(map[string]any{"tool_calls": []any{tc(0, "call_a", "read", "")}}, nil), nil),
			chunkJSON(ch(map[string]any{"tool_calls": []any{tc(0, "", "", `{"pa`)}}, nil), nil),
			chunkJSON(ch(map[string]any{"tool_calls": []any{tc(0, "", "", `th":"a\"b"}`)}}, nil), nil),
			chunkJSON(ch(map[string]any{"tool_calls": []any{tc(1, "call_b", "ls", `{}`)}}, nil), nil),
			chunkJSON(ch(map[string]any{}, "tool_calls"), nil), "[DONE]"),
		"openai refusal": sse(chunkJSON(ch(map[string]any{"refusal": "I can't."}, nil), nil), chunkJSON(ch(map[string]any{}, "stop"), nil), "[DONE]"),
		"openai content filter": sse(chunkJSON(ch(map[string]any{"content": "x"}, nil), nil),
			chunkJSON(ch(map[string]any{}, "content_filter"), nil), "[DONE]"),
		"openai length": sse(chunkJSON(ch(map[string]any{"content": "x"}, nil), nil), chunkJSON(ch(map[string]any{}, "length"), nil), "[DONE]"),
		"openai error event": sse(chunkJSON(ch(map[string]any{"content": "partial"}, nil), nil),
			`{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`, "[DONE]"),
		"openrouter": ": OPENROUTER PROCESSING\n\n" + sse(
			chunkJSON(ch(map[string]any{"role": "assistant", "content": "", "reasoning": "Think", "reasoning_details": []any{
				map[string]any{"type": "reasoning.text", "text": "Think", "format": "unknown", "index": 0}}}, nil),
				map[string]any{"provider": "Anthropic"}),
			chunkJSON(ch(map[string]any{"content": "Done.", "reasoning": nil}, nil), map[string]any{"provider": "Anthropic"}),
			chunkJSON(map[string]any{"index": 0, "delta": map[string]any{"content": ""}, "finish_reason": "stop",
				"native_finish_reason": "end_turn"}, nil),
			u(map[string]any{"prompt_tokens": 4000, "completion_tokens": 7, "total_tokens": 4007, "cost": 0.0123,
				"is_byok": false, "prompt_tokens_details": map[string]any{"cached_tokens": 2500, "cache_write_tokens": 1000},
				"cost_details": map[string]any{"upstream_inference_cost": nil}}),
			"[DONE]") + ": OPENROUTER PROCESSING\n\n",
		"openrouter keepalive then chunk error": ": OPENROUTER PROCESSING\n\n" + sse(chunkJSON(ch(map[string]any{"content": "par"}, nil), nil),
			js(map[string]any{"id": "gen-1", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": ""},
				"finish_reason": "error"}}, "error": map[string]any{"code": 502, "message": "Upstream error"}}), "[DONE]"),
		"openrouter rate limit chunk": sse(js(map[string]any{"id": "gen-1", "choices": []any{},
			"error": map[string]any{"code": 429, "message": "Rate limited upstream"}})),
		"openrouter finish error": sse(chunkJSON(ch(map[string]any{"content": "x"}, nil), nil), chunkJSON(ch(map[string]any{}, "error"), nil)),
		"deepseek reasoner": sse(chunkJSON(ch(map[string]any{"role": "assistant", "content": nil, "reasoning_content": ""}, nil), nil),
			chunkJSON(ch(map[string]any{"content": nil, "reasoning_content": "Hmm, "}, nil), nil),
			chunkJSON(ch(map[string]any{"content": nil, "reasoning_content": "yes."}, nil), nil),
			chunkJSON(ch(map[string]any{"content": "42", "reasoning_content": nil}, nil), nil),
			chunkJSON(ch(map[string]any{"content": ""}, "stop"), map[string]any{"usage": map[string]any{"prompt_tokens": 4000,
				"completion_tokens": 9, "total_tokens": 4009, "prompt_cache_hit_tokens": 2048, "prompt_cache_miss_tokens": 1952,
				"completion_tokens_details": map[string]any{"reasoning_tokens": 5}}}),
			"[DONE]"),
		"groq x_groq usage": sse(chunkJSON(ch(map[string]any{"role": "assistant", "content": ""}, nil), map[string]any{"x_groq": map[string]any{"id": "req_1"}}),
			chunkJSON(ch(map[string]any{"content": "Hi"}, nil), nil),
			chunkJSON(ch(map[string]any{}, "stop"), map[string]any{"x_groq": map[string]any{"id": "req_1", "usage": map[string]any{
				"queue_time": 0.01, "prompt_tokens": 10, "prompt_time": 0.001, "completion_tokens": 1, "completion_time": 1e-3, "total_tokens": 11}}}),
			"[DONE]"),
		"together": sse(chunkJSON(map[string]any{"index": 0, "text": "Hi", "logprobs": nil, "finish_reason": nil, "seed": nil,
			"delta": map[string]any{"token_id": 13347, "role": "assistant", "content": "Hi", "tool_calls": nil}}, nil),
			chunkJSON(map[string]any{"index": 0, "text": "", "finish_reason": "eos", "seed": 1.5e18,
				"delta": map[string]any{"token_id": 2, "content": ""}}, map[string]any{"usage": map[string]any{"prompt_tokens": 5,
				"completion_tokens": 1, "total_tokens": 6}}),
			"[DONE]"),
		"ollama tools as stop": sse(chunkJSON(ch(map[string]any{"role": "assistant", "content": "", "reasoning": "look"}, nil), nil),
			chunkJSON(ch(map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
				map[string]any{"id": "call_x1", "index": 0, "type": "function", "function": map[string]any{"name": "ls", "arguments": `{"p":1}`}}}}, nil), nil),
			chunkJSON(ch(map[string]any{"role": "assistant", "content": ""}, "stop"), nil),
			u(map[string]any{"prompt_tokens": 30, "completion_tokens": 8, "total_tokens": 38}), "[DONE]"),
		"whole calls without index": sse(chunkJSON(ch(map[string]any{"tool_calls": []any{tc(nil, "x1", "a", `{"n":1}`)}}, nil), nil),
			chunkJSON(ch(map[string]any{"tool_calls": []any{tc(nil, "", "", `{}`)}}, nil), nil),
			chunkJSON(ch(map[string]any{"tool_calls": []any{tc(nil, "x2", "b", `{}`)}}, nil), nil),
			chunkJSON(ch(map[string]any{}, "tool_calls"), nil), "[DONE]"),
		"lmstudio": sse(chunkJSON(ch(map[string]any{"role": "assistant", "reasoning_content": "r"}, nil), nil),
			chunkJSON(ch(map[string]any{"content": "t"}, nil), nil), chunkJSON(ch(map[string]any{}, "stop"), nil), "[DONE]"),
		"vllm both reasoning fields": sse(chunkJSON(ch(map[string]any{"reasoning_content": "a", "reasoning": "a"}, nil), nil),
			chunkJSON(ch(map[string]any{"content": "b"}, "stop"), nil),
			u(map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "prompt_tokens_details": nil}), "[DONE]"),
		"moonshot": sse(chunkJSON(ch(map[string]any{"role": "assistant", "content": "hi"}, nil), nil),
			chunkJSON(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop",
				"usage": map[string]any{"prompt_tokens": 4000, "completion_tokens": 1, "total_tokens": 4001, "cached_tokens": 1024}},
				map[string]any{"usage": map[string]any{"prompt_tokens": 4000, "completion_tokens": 1, "total_tokens": 4001, "cached_tokens": 1024}}),
			"[DONE]"),
		"no cache field": sse(chunkJSON(ch(map[string]any{"content": "ok"}, "stop"), nil),
			u(map[string]any{"prompt_tokens": 4000, "completion_tokens": 7, "total_tokens": 4007}), "[DONE]"),
	}
}

// fixtureStreams are the streams the other tests already serve: the
// helpers' chunks, the golden replay's chunk format, the bench mock's.
func fixtureStreams() map[string]string {
	golden := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"mock","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
	}
	mock := func(delta string, finish string) string {
		return `{"id": "cmpl-1", "object": "chat.completion.chunk", "created": 1764590000, "model": "mock", "choices": [{"index": 0, "delta": ` +
			delta + `, "finish_reason": ` + finish + `}]}`
	}
	tk, _ := tenK()
	return map[string]string{
		"helpers text":      sse(text("Hel"), text("lo"), finish("stop"), usage(1200, 200, 40), "[DONE]"),
		"helpers reasoning": sse(reasoning("Let me "), reasoning("think."), text("Answer"), finish("stop"), "[DONE]"),
		"helpers tools": sse(toolDelta(call(0, "c1", "read", `{"pa`), call(1, "c2", "ls", "")), toolDelta(call(0, "", "", `th":"x"}`)),
			toolDelta(call(1, "", "", `{}`)), finish("tool_calls"), "[DONE]"),
		"helpers malformed args":   sse(toolDelta(call(0, "c1", "edit", `{"path": "a.go", "old": `)), finish("tool_calls"), "[DONE]"),
		"helpers cut":              sse(text("Hel"), text("lo")),
		"helpers cut after finish": sse(text("done"), finish("stop")),
		"helpers truncated json":   sse(text("a"), `{"choices":[{"delta":`),
		"golden replay": "data: " + golden(`{"role":"assistant","reasoning_content":"I should read "}`, "") + "\n\n" +
			"data: " + golden(`{"content":"Reading "}`, "") + "\n\n" +
			"data: " + golden(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}`, "") + "\n\n" +
			"data: " + golden(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, "") + "\n\n" +
			"data: " + golden(`{"tool_calls":[{"index":0,"function":{"arguments":"\"README.md\"}"}}]}`, "") + "\n\n" +
			"data: " + golden(`{}`, "tool_calls") + "\n\n" +
			`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"mock","choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":12,"total_tokens":1512}}` + "\n\n" +
			"data: [DONE]\n\n",
		"bench mock": "data: " + mock(`{"role": "assistant", "content": ""}`, "null") + "\n\n" +
			"data: " + mock(`{"content": "tok "}`, "null") + "\n\n" + "data: " + mock(`{"content": "tok "}`, "null") + "\n\n" +
			"data: " + mock(`{}`, `"stop"`) + "\n\n" +
			`data: {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 1764590000, "model": "mock", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}` + "\n\n" +
			"data: [DONE]\n\n",
		"ten thousand deltas": tk,
	}
}

// generatedStreams are the edge cases: escapes, odd framing, odd JSON.
func generatedStreams() map[string]string {
	raw := func(d string) string { return `{"id":"g","choices":[{"index":0,"delta":` + d + `}]}` }
	end := sse(finish("stop"), "[DONE]")
	long := strings.Repeat("long line ", 10_000) // beyond the reader's buffer
	m := map[string]string{
		"unicode escapes":      sse(raw(`{"content":"caf\u00e9 \u65e5\u672c \u003cb\u003e"}`)) + end,
		"surrogate pair":       sse(raw(`{"content":"\ud83d\ude00 and \uD83D\uDE00"}`)) + end,
		"lone surrogates":      sse(raw(`{"content":"a\ud800b\udc00c\ud800\u0041\ud800\\u0041\ud800"}`)) + end,
		"escaped quotes":       sse(raw(`{"content":"say \"hi\" \\ \/ \b\f\n\r\t"}`)) + end,
		"raw utf8 and invalid": sse(raw(`{"content":"日本語 é 😀 `+"\xff\xfe\xc3("+` end"}`)) + end,
		"empty deltas":         sse(raw(`{}`), raw(`{"content":""}`), raw(`{"content":null,"reasoning":null}`), raw(`null`), text("x")) + end,
		"multiple choices": sse(`{"id":"m","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`,
			`{"id":"m","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null},{"index":1,"delta":{},"finish_reason":"stop"}]}`) + end,
		"null and empty choices":    sse(`{"id":"n","choices":null}`, `{"choices":[]}`, text("x")) + end,
		"error frame":               sse(text("partial"), `{"error":{"message":"Overloaded","type":"overloaded_error"}}`),
		"error frame after comment": ": keepalive\n\n" + sse(text("partial"), `{"error":{"message":"Overloaded"}}`),
		"error frame not json":      sse(text("partial"), `{"error":nope}`),
		"error frame null error":    sse(text("partial"), `{"error":null}`, "[DONE]"),
		"error object in chunk":     sse(text("partial"), `{"id":"e","error":{"message":"boom","code":"x"},"choices":[]}`),
		"error after end of body":   "event: error\ndata:{\"error\":{\"message\":\"late\"}}",
		"done variants":             sse(text("x"), finish("stop")) + "data:[DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"after\"}}]}\n\n",
		"done without newline":      sse(text("x"), finish("stop")) + "data: [DONE]",
		"comments and keepalives": ": ping\n\n" + sse(text("a")) + ": ping\n:\n\n" + "event: message\nid: 7\nretry: 100\n" +
			sse(text("b"), finish("stop"), "[DONE]"),
		"crlf":              strings.ReplaceAll(sse(text("a"), text("b"), finish("stop"), "[DONE]"), "\n", "\r\n"),
		"lone cr":           strings.ReplaceAll(sse(text("a"), text("b"), finish("stop"), "[DONE]"), "\n", "\r"),
		"no space or tabs":  "data:" + text("a") + "\n\ndata:\t \t" + text("b") + "\n\n  data: " + text("c") + "  \n\n" + end,
		"vertical tab":      "data:\v" + text("a") + "\n\n" + end,
		"data not json":     sse(text("a"), "hello"),
		"trailing garbage":  sse(text("a"), text("b")+"x"),
		"two objects":       sse(text("a"), text("b")+" "+text("c")),
		"top level array":   sse(text("a"), `[1,2]`),
		"top level null":    sse(text("a"), `null`) + end,
		"top level string":  sse(`"s"`) + end,
		"whitespace inside": sse("{ \"id\" : \"w\" ,\t\"choices\" :\n[ { \"index\" : 0 , \"delta\" : { \"content\" : \"spaced\" } } ] }") + end,
		"case variants":     sse(raw(`{"Content":"upper"}`), raw(`{"content":"a","CONTENT":"b"}`), `{"ID":"x","Choices":[]}`) + end,
		"duplicate keys":    sse(raw(`{"content":"a","content":"b"}`), `{"choices":[],"choices":[{"index":0,"delta":{"content":"c"}}]}`) + end,
		"escaped keys":      sse(raw(`{"\u0063ontent":"escaped key"}`), raw(`{"cont\u00e9nt":"x","\u212aey":"k"}`)) + end,
		"kelvin fold":       sse(`{"choices":[{"\u212a":1,"index":0,"delta":{"content":"k"}}]}`, "{\"choices\":[{\"\xe2\x84\xaaindex\":1,\"index\":0,\"delta\":{}}]}") + end,
		"numbers":           sse(`{"choices":[{"index":0.0,"delta":{"content":"f"}}]}`, `{"choices":[{"index":1e0,"delta":{}}]}`, `{"choices":[{"index":-0,"delta":{"content":"z"}}]}`) + end,
		"big numbers":       sse(text("x"), finish("stop"), `{"choices":[],"usage":{"prompt_tokens":123456789012345678901,"completion_tokens":1}}`, "[DONE]"),
		"negative usage":    sse(text("x"), finish("stop"), `{"choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":-1,"cached_tokens":-3}}`, "[DONE]"),
		"wrong types": sse(raw(`{"content":5}`), raw(`{"content":true}`), `{"choices":[{"index":"0","delta":{}}]}`,
			`{"choices":{}}`, `{"usage":[]}`) + end,
		"unknown nested": sse(`{"id":"u","x":{"a":[1,{"b":null},true,false,-1.5e+3,"s\"\\u00e9"],"c":{}},"y":[],"choices":[{"index":0,"delta":{"content":"n","z":[[[]]]}}]}`) + end,
		"deep nesting":   sse(`{"x":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`,"choices":[{"index":0,"delta":{"content":"deep"}}]}`) + end,
		"bad unknown":    sse(text("a"), `{"x":tru,"choices":[]}`, `{"x":01,"choices":[]}`, `{"x":"\q","choices":[]}`) + end,
		"control char":   sse(text("a"), raw("{\"content\":\"tab\there\"}")) + end,
		"null members": sse(`{"id":null,"choices":[{"index":null,"delta":null,"finish_reason":null}],"usage":null}`,
			raw(`{"tool_calls":null}`), raw(`{"tool_calls":[{"index":null,"id":null,"function":null}]}`)) + end,
		"null array element": sse(`{"choices":[null]}`, raw(`{"tool_calls":[null]}`)) + end,
		"usage details null": sse(text("x"), finish("stop"), `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":null,"prompt_cache_hit_tokens":null}}`, "[DONE]"),
		"long line":          sse(text(long), text("b")) + ": " + long + "\n\n" + end,
		"empty body":         "",
		"only keepalives":    ": ping\n\n: ping\n\n",
		"blank lines only":   "\n\n\n",
		"partial last line":  sse(text("a"), finish("stop")) + "data: {\"choices\":[",
		"empty payload":      sse(text("a")) + "data:\n\n" + end,
		"stray closer":       sse(text("a"), `null}0`, text("b"), `{"choices":[]}]`, text("c")) + end,
	}
	return m
}

func TestFastPathMatchesReference(t *testing.T) {
	sets := map[string]map[string]string{"variant": variantStreams(), "fixture": fixtureStreams(), "generated": generatedStreams()}
	for set, streams := range sets {
		for name, body := range streams {
			ss := splits()
			if name == "ten thousand deltas" || name == "long line" {
				ss = [][]int{nil, {1021, 1, 7}} // the big ones: too slow in small reads under -race
			}
			for _, split := range ss {
				want := outcome(t, true, body, split)
				got := outcome(t, false, body, split)
				if got != want {
					t.Errorf("%s %q split %v:\nfast      %s\nreference %s", set, name, split, got, want)
				}
			}
		}
	}
}

// TestFastPathTakesCommonChunks guards the speed: the chunks of every
// supported variant and fixture are decoded by parseFast (and agree with
// encoding/json), not handed to the fallback.
func TestFastPathTakesCommonChunks(t *testing.T) {
	refused := map[string]bool{ // chunks that must take the slow path
		`{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`: true,
		`{"choices":[{"delta":`: true,
	}
	for _, streams := range []map[string]string{variantStreams(), fixtureStreams()} {
		for name, body := range streams {
			for _, line := range strings.Split(body, "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok || data == "[DONE]" {
					continue
				}
				fast, diff := openai.CompareDecoders([]byte(data))
				if diff != "" {
					t.Errorf("%s: %s: %s", name, data, diff)
				}
				if want := !refused[data] && !strings.Contains(data, `"error":`); fast != want {
					t.Errorf("%s: parseFast took it %v, want %v: %s", name, fast, want, data)
				}
			}
		}
	}
}

func TestParseFastAgreesOnGeneratedChunks(t *testing.T) {
	for name, body := range generatedStreams() {
		for _, line := range strings.Split(body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				if _, diff := openai.CompareDecoders([]byte(data)); diff != "" {
					t.Errorf("%s: %q: %s", name, data, diff)
				}
			}
		}
	}
}

// FuzzParseFast: whenever parseFast takes an input, encoding/json decodes
// it to the same chunk.
func FuzzParseFast(f *testing.F) {
	for _, streams := range []map[string]string{variantStreams(), fixtureStreams(), generatedStreams()} {
		for name, body := range streams {
			if name == "ten thousand deltas" || name == "long line" {
				continue
			}
			for _, line := range strings.Split(body, "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					f.Add([]byte(data))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, diff := openai.CompareDecoders(data); diff != "" {
			t.Fatalf("%q: %s", data, diff)
		}
	})
}

// FuzzStream: the fast and the reference path agree on any body, read in
// any pieces.
func FuzzStream(f *testing.F) {
	for _, streams := range []map[string]string{variantStreams(), generatedStreams()} {
		for name, body := range streams {
			if name != "long line" {
				f.Add([]byte(body), uint8(0))
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, piece uint8) {
		var split []int
		if piece > 0 {
			split = []int{int(piece%32) + 1, int(piece/32) + 1}
		}
		if got, want := outcome(t, false, string(body), split), outcome(t, true, string(body), split); got != want {
			t.Fatalf("%q split %v:\nfast      %s\nreference %s", body, split, got, want)
		}
	})
}

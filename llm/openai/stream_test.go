package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

func TestStreamText(t *testing.T) {
	s := newServer(t, replay(sse(
		delta(map[string]any{"role": "assistant", "content": ""}),
		text("Hel"), text("lo"), finish("stop"), "[DONE]")))
	msg, err, rec := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{llm.EvStart, llm.EvTextStart, llm.EvTextDelta, llm.EvTextDelta, llm.EvTextEnd}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if got := msg.Text(""); got != "Hello" {
		t.Errorf("text = %q", got)
	}
	if msg.StopReason != llm.StopStop || msg.RawStopReason != "" || msg.ErrorMessage != "" {
		t.Errorf("stop = %q raw %q err %q", msg.StopReason, msg.RawStopReason, msg.ErrorMessage)
	}
	if msg.API != openai.API || msg.Provider != "testai" || msg.Model != "test-model" || msg.Timestamp != 42 {
		t.Errorf("message header = %s %s %s %d", msg.API, msg.Provider, msg.Model, msg.Timestamp)
	}
	if msg.ResponseID != "chatcmpl-1" {
		t.Errorf("responseId = %q", msg.ResponseID)
	}
	if msg.Usage.Cost == nil {
		t.Error("usage not finalized")
	}
}

func TestStreamReasoningThenText(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			r := func(s string) string { return delta(map[string]any{field: s}) }
			s := newServer(t, replay(sse(r("Let me "), r("think."), text("Answer"), text("."), finish("stop"), "[DONE]")))
			msg, err, rec := run(t, provider(s, nil), request())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{llm.EvStart, llm.EvThinkingStart, llm.EvThinkingDelta, llm.EvThinkingDelta,
				llm.EvThinkingEnd, llm.EvTextStart, llm.EvTextDelta, llm.EvTextDelta, llm.EvTextEnd}
			if d := cmp.Diff(want, rec.types()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if len(msg.Content) != 2 {
				t.Fatalf("content = %d blocks", len(msg.Content))
			}
			th, ok := msg.Content[0].(*llm.ThinkingContent)
			if !ok || th.Thinking != "Let me think." {
				t.Errorf("thinking block = %#v", msg.Content[0])
			}
			if msg.Text("") != "Answer." {
				t.Errorf("text = %q", msg.Text(""))
			}
		})
	}
}

func TestStreamBothReasoningFieldsNotDoubled(t *testing.T) {
	s := newServer(t, replay(sse(delta(map[string]any{"reasoning_content": "a", "reasoning": "a"}), finish("stop"), "[DONE]")))
	msg, err, _ := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	if th := msg.Content[0].(*llm.ThinkingContent); th.Thinking != "a" {
		t.Errorf("thinking = %q", th.Thinking)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	s := newServer(t, replay(sse(
		delta(map[string]any{"role": "assistant", "content": nil}),
		toolDelta(call(0, "call_a", "read", "")),
		toolDelta(call(0, "", "", `{"pa`)),
		toolDelta(call(0, "", "", `th":"a`), call(1, "call_b", "grep", `{"pat`)),
		toolDelta(call(0, "", "", `.go"}`)),
		toolDelta(call(1, "", "", `tern":"x",`)),
		toolDelta(call(1, "", "", `"path":"."}`)),
		finish("tool_calls"),
		usage(100, 0, 20),
		"[DONE]")))
	msg, err, rec := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		Type  string
		Index int
		ID    string
		Name  string
		Delta string
		Args  string
	}
	var got []ev
	for _, e := range rec.events {
		g := ev{Type: e.Type, Index: e.ContentIndex, ID: e.ID, Name: e.Name, Delta: e.Delta}
		if e.ToolCall != nil {
			g.Args = string(e.ToolCall.Arguments)
		}
		got = append(got, g)
	}
	want := []ev{
		{Type: llm.EvStart},
		{Type: llm.EvToolCallStart, Index: 0, ID: "call_a", Name: "read"},
		{Type: llm.EvToolCallDelta, Index: 0, Delta: `{"pa`},
		{Type: llm.EvToolCallDelta, Index: 0, Delta: `th":"a`},
		{Type: llm.EvToolCallStart, Index: 1, ID: "call_b", Name: "grep"},
		{Type: llm.EvToolCallDelta, Index: 1, Delta: `{"pat`},
		{Type: llm.EvToolCallDelta, Index: 0, Delta: `.go"}`},
		{Type: llm.EvToolCallDelta, Index: 1, Delta: `tern":"x",`},
		{Type: llm.EvToolCallDelta, Index: 1, Delta: `"path":"."}`},
		{Type: llm.EvToolCallEnd, Index: 0, Args: `{"path":"a.go"}`},
		{Type: llm.EvToolCallEnd, Index: 1, Args: `{"pattern":"x","path":"."}`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[1].Name != "grep" ||
		string(calls[1].Arguments) != `{"pattern":"x","path":"."}` || calls[0].RawArguments != "" {
		t.Errorf("tool calls = %+v", calls)
	}
	if msg.StopReason != llm.StopToolUse || msg.RawStopReason != "" {
		t.Errorf("stop = %q raw %q", msg.StopReason, msg.RawStopReason)
	}
}

func TestStreamTextThenToolCallClosesText(t *testing.T) {
	s := newServer(t, replay(sse(text("Looking."), toolDelta(call(0, "c1", "ls", `{}`)), finish("tool_calls"), "[DONE]")))
	msg, err, rec := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{llm.EvStart, llm.EvTextStart, llm.EvTextDelta, llm.EvTextEnd,
		llm.EvToolCallStart, llm.EvToolCallDelta, llm.EvToolCallEnd}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q", msg.StopReason)
	}
}

func TestStreamToolCallWithoutIndexOrID(t *testing.T) {
	// Some servers send whole calls without index; one without id gets one.
	noIndex := func(id, name, args string) map[string]any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
	}
	s := newServer(t, replay(sse(toolDelta(noIndex("x1", "a", `{"n":1}`)), toolDelta(noIndex("", "b", `{}`)),
		toolDelta(noIndex("x2", "c", `{"n":2}`)), finish("stop"), "[DONE]")))
	msg, err, _ := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "x1" || calls[1].ID != "x2" {
		t.Fatalf("calls = %+v", calls)
	}
	// "stop" with tool calls (Ollama) still runs the tools.
	if msg.StopReason != llm.StopToolUse || msg.RawStopReason != "stop" {
		t.Errorf("stop = %q raw %q", msg.StopReason, msg.RawStopReason)
	}
}

func TestStreamUsageAndCost(t *testing.T) {
	s := newServer(t, replay(sse(text("ok"), finish("stop"), usage(1200, 200, 40), "[DONE]")))
	msg, err, _ := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{Input: 1000, Output: 40, CacheRead: 200}
	want.Finalize(testModel().Prices)
	if d := cmp.Diff(want, msg.Usage); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	if msg.Usage.TotalTokens != 1240 || msg.Usage.Cost.Input != 0.001 || msg.Usage.Cost.Output != 0.00008 ||
		msg.Usage.Cost.CacheRead != 0.00002 {
		t.Errorf("usage = %+v cost %+v", msg.Usage, *msg.Usage.Cost)
	}
}

func TestStreamDeepSeekCacheHits(t *testing.T) {
	u := js(map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": 500,
		"completion_tokens": 10, "prompt_cache_hit_tokens": 300, "prompt_cache_miss_tokens": 200}})
	s := newServer(t, replay(sse(text("ok"), finish("stop"), u, "[DONE]")))
	msg, err, _ := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatal(err)
	}
	if msg.Usage.Input != 200 || msg.Usage.CacheRead != 300 || msg.Usage.Output != 10 {
		t.Errorf("usage = %+v", msg.Usage)
	}
}

func TestStreamMalformedToolArguments(t *testing.T) {
	s := newServer(t, replay(sse(toolDelta(call(0, "c1", "edit", `{"path": "a.go", "old": `)),
		toolDelta(call(0, "", "", `"x"`)), finish("tool_calls"), "[DONE]")))
	msg, err, rec := run(t, provider(s, nil), request())
	if err != nil {
		t.Fatalf("malformed arguments must not fail the stream: %v", err)
	}
	calls := msg.ToolCalls()
	if len(calls) != 1 {
		t.Fatalf("calls = %+v", calls)
	}
	if string(calls[0].Arguments) != "{}" || calls[0].RawArguments != `{"path": "a.go", "old": "x"` {
		t.Errorf("arguments %s raw %q", calls[0].Arguments, calls[0].RawArguments)
	}
	last := rec.events[len(rec.events)-1]
	if last.Type != llm.EvToolCallEnd || last.ToolCall.RawArguments == "" {
		t.Errorf("last event = %+v", last)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q", msg.StopReason)
	}
}

func TestStreamFinishReasons(t *testing.T) {
	cases := []struct {
		finish, stop, raw string
	}{
		{"stop", llm.StopStop, ""},
		{"length", llm.StopLength, ""},
		{"content_filter", llm.StopRefusal, "content_filter"},
		{"eos", llm.StopStop, "eos"},
	}
	for _, c := range cases {
		t.Run(c.finish, func(t *testing.T) {
			s := newServer(t, replay(sse(text("x"), finish(c.finish), "[DONE]")))
			msg, err, _ := run(t, provider(s, nil), request())
			if err != nil {
				t.Fatal(err)
			}
			if msg.StopReason != c.stop || msg.RawStopReason != c.raw {
				t.Errorf("stop = %q raw %q, want %q %q", msg.StopReason, msg.RawStopReason, c.stop, c.raw)
			}
		})
	}
	t.Run("refusal", func(t *testing.T) {
		s := newServer(t, replay(sse(delta(map[string]any{"refusal": "I can't help with that."}), finish("stop"), "[DONE]")))
		msg, err, _ := run(t, provider(s, nil), request())
		if err != nil {
			t.Fatal(err)
		}
		if msg.StopReason != llm.StopRefusal || msg.Text("") != "I can't help with that." {
			t.Errorf("stop = %q text %q", msg.StopReason, msg.Text(""))
		}
	})
	t.Run("done without finish", func(t *testing.T) {
		s := newServer(t, replay(sse(text("x"), "[DONE]")))
		msg, err, _ := run(t, provider(s, nil), request())
		if err != nil || msg.StopReason != llm.StopStop {
			t.Errorf("stop = %q err %v", msg.StopReason, err)
		}
	})
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		headers map[string]string
		kind    llm.ErrorKind
		retry   time.Duration
		text    string
	}{
		{"429 retry-after seconds", 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			map[string]string{"Retry-After": "7"}, llm.ErrRateLimit, 7 * time.Second, "429 requests: Rate limit reached"},
		{"429 retry-after-ms", 429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`,
			map[string]string{"Retry-After": "7", "retry-after-ms": "1500"}, llm.ErrRateLimit, 1500 * time.Millisecond, "slow down"},
		{"429 quota", 429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			nil, llm.ErrOther, 0, "quota"},
		{"500", 500, `{"error":{"message":"Internal server error","type":"server_error"}}`, nil, llm.ErrServer, 0,
			"500 server_error: Internal server error"},
		{"502 html", 502, `<html>Bad Gateway</html>`, nil, llm.ErrServer, 0, "502 <html>Bad Gateway</html>"},
		{"503", 503, `{"error":{"message":"Service unavailable"}}`, map[string]string{"Retry-After": "2"}, llm.ErrOverloaded, 2 * time.Second, "503"},
		{"529", 529, `{"error":{"message":"Overloaded","type":"overloaded_error"}}`, nil, llm.ErrOverloaded, 0, "529 overloaded_error: Overloaded"},
		{"400 context_length_exceeded", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			nil, llm.ErrOverflow, 0, "maximum context length"},
		{"400 prompt too long", 400, `{"error":{"message":"prompt is too long: 250000 tokens > 200000 maximum","type":"invalid_request_error"}}`,
			nil, llm.ErrOverflow, 0, "400 invalid_request_error: prompt is too long"},
		{"400 vllm too many tokens", 400, `{"object":"error","message":"too many tokens in the prompt","type":"BadRequestError","code":400}`,
			nil, llm.ErrOverflow, 0, "too many tokens"},
		{"400 other", 400, `{"error":{"message":"Invalid value for 'tools'","type":"invalid_request_error"}}`,
			nil, llm.ErrInvalid, 0, "Invalid value for 'tools'"},
		{"404 ollama", 404, `{"error":"model \"qwen\" not found, try pulling it first"}`, nil, llm.ErrInvalid, 0, `model "qwen" not found`},
		{"403", 403, `{"error":{"message":"forbidden"}}`, nil, llm.ErrAuth, 0, "testai: authentication failed (403)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, failWith(c.status, c.body, c.headers))
			msg, err, rec := run(t, provider(s, nil), request())
			e := kindOf(t, err)
			if e.Kind != c.kind || e.Status != c.status || e.RetryAfter != c.retry {
				t.Errorf("error = kind %s status %d retry %v, want %s %d %v (%s)", e.Kind, e.Status, e.RetryAfter, c.kind, c.status, c.retry, e.Message)
			}
			if !strings.Contains(e.Message, c.text) {
				t.Errorf("message %q does not contain %q", e.Message, c.text)
			}
			if msg.StopReason != llm.StopError || msg.ErrorMessage != e.Message || msg.RetryAfterMs != c.retry.Milliseconds() {
				t.Errorf("message stop %q err %q retryMs %d", msg.StopReason, msg.ErrorMessage, msg.RetryAfterMs)
			}
			if len(rec.events) != 0 {
				t.Errorf("events before an HTTP error: %v", rec.types())
			}
			if msg.Usage.Cost == nil {
				t.Error("usage of a failed reply is not finalized")
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	s := newServer(t, failWith(429, `{"error":{"message":"slow"}}`, map[string]string{"Retry-After": at}))
	_, err, _ := run(t, provider(s, nil), request())
	e := kindOf(t, err)
	if e.Kind != llm.ErrRateLimit || e.RetryAfter < 80*time.Second || e.RetryAfter > 91*time.Second {
		t.Errorf("kind %s retry %v", e.Kind, e.RetryAfter)
	}
}

func TestAuthErrorNamesProviderAndKeySource(t *testing.T) {
	body := js(map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + secret +
		". You can find your API key at https://example.invalid.", "type": "invalid_request_error", "code": "invalid_api_key"}})
	s := newServer(t, failWith(401, body, nil))
	msg, err, _ := run(t, provider(s, nil), request())
	e := kindOf(t, err)
	if e.Kind != llm.ErrAuth || e.Status != 401 || e.Retryable() {
		t.Errorf("kind %s status %d", e.Kind, e.Status)
	}
	for _, want := range []string{"testai", "401", "environment variable TESTAI_API_KEY", "Incorrect API key provided"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q does not contain %q", e.Message, want)
		}
	}
	if strings.Contains(e.Message, secret) || strings.Contains(msg.ErrorMessage, secret) {
		t.Errorf("key leaked: %q", e.Message)
	}
	if h := s.lastHeader(t).Get("Authorization"); h != "Bearer "+secret {
		t.Errorf("Authorization = %q", h)
	}

	for _, c := range []struct{ source, env, want string }{
		{openai.KeySourceCLI, "", "the key given on the command line"},
		{openai.KeySourceConfig, "", "the apiKey from the config"},
	} {
		p := provider(s, func(o *openai.Options) { o.KeySource, o.KeyEnv = c.source, c.env })
		_, err, _ := run(t, p, request())
		if m := err.Error(); !strings.Contains(m, c.want) || strings.Contains(m, secret) {
			t.Errorf("%s: message %q", c.source, m)
		}
	}
}

func TestKeyNeverInErrorTexts(t *testing.T) {
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, "you sent "+r.Header.Get("Authorization")+" and "+secret)
		}
	}
	for _, status := range []int{400, 401, 429, 500} {
		s := newServer(t, echo(status))
		msg, err, _ := run(t, provider(s, nil), request())
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(msg.ErrorMessage, secret) {
			t.Errorf("%d: %v", status, err)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%d: key fragment in %q", status, err)
		}
	}
	// Mid-stream error event echoing the key.
	s := newServer(t, replay(sse(text("a"), js(map[string]any{"error": map[string]any{"message": "bad key " + secret, "type": "server_error"}}))))
	_, err, _ := run(t, provider(s, nil), request())
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("mid-stream: %v", err)
	}
	// The provider and its options print without the key.
	p := provider(s, nil)
	o := openai.Options{ID: "x", APIKey: secret}
	for _, v := range []string{p.String(), o.String()} {
		if strings.Contains(v, secret) {
			t.Errorf("printed key: %s", v)
		}
	}
}

func TestMidStreamErrorEvents(t *testing.T) {
	cases := []struct {
		name  string
		event string
		kind  llm.ErrorKind
	}{
		{"openai error event", js(map[string]any{"error": map[string]any{"message": "Overloaded", "type": "overloaded_error"}}), llm.ErrOverloaded},
		{"openrouter chunk error", js(map[string]any{"id": "gen-1", "choices": []any{map[string]any{"index": 0,
			"delta": map[string]any{"content": ""}, "finish_reason": "error"}},
			"error": map[string]any{"code": 502, "message": "Upstream error"}}), llm.ErrServer},
		{"openrouter rate limit", js(map[string]any{"id": "gen-1", "choices": []any{},
			"error": map[string]any{"code": 429, "message": "Rate limited upstream"}}), llm.ErrRateLimit},
		{"finish error", finish("error"), llm.ErrServer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, replay(sse(text("partial"), c.event, "[DONE]")))
			msg, err, _ := run(t, provider(s, nil), request())
			e := kindOf(t, err)
			if e.Kind != c.kind {
				t.Errorf("kind = %s (%s), want %s", e.Kind, e.Message, c.kind)
			}
			if msg.StopReason != llm.StopError || msg.Text("") != "partial" {
				t.Errorf("stop %q text %q", msg.StopReason, msg.Text(""))
			}
		})
	}
}

func TestStreamCut(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"handler returns": func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, sse(text("Hel"), text("lo")))
		},
		"usage on every chunk": func(w http.ResponseWriter, _ *http.Request) {
			// vLLM's continuous_usage_stats: usage alone does not mean done.
			withUsage := func(s string) string {
				return js(map[string]any{"id": "x", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}}},
					"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 1}})
			}
			io.WriteString(w, sse(withUsage("Hel"), withUsage("lo")))
		},
		"connection dropped": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sse(text("Hel"), text("lo")))
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, h)
			msg, err, rec := run(t, provider(s, nil), request())
			e := kindOf(t, err)
			if e.Kind != llm.ErrDisconnect || !e.Retryable() {
				t.Errorf("kind = %s (%s)", e.Kind, e.Message)
			}
			if msg.StopReason != llm.StopError || msg.ErrorMessage == "" || msg.Text("") != "Hello" {
				t.Errorf("stop %q err %q text %q", msg.StopReason, msg.ErrorMessage, msg.Text(""))
			}
			if rec.types()[len(rec.events)-1] != llm.EvTextEnd {
				t.Errorf("events = %v", rec.types())
			}
		})
	}
}

func TestFinishedThenConnectionDropped(t *testing.T) {
	// The reply is complete when finish_reason arrived; a lost usage chunk
	// is not a failure.
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, sse(text("done"), finish("stop")))
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	})
	msg, err, _ := run(t, provider(s, nil), request())
	if err != nil || msg.StopReason != llm.StopStop || msg.Text("") != "done" {
		t.Errorf("stop %q err %v", msg.StopReason, err)
	}
}

func TestNetworkErrors(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		s := newServer(t, replay(""))
		p := provider(s, nil)
		s.Close()
		msg, err, rec := run(t, p, request())
		e := kindOf(t, err)
		if e.Kind != llm.ErrNetwork || !strings.Contains(e.Message, "testai") || msg.StopReason != llm.StopError || len(rec.events) != 0 {
			t.Errorf("kind %s msg %q stop %q", e.Kind, e.Message, msg.StopReason)
		}
	})
	t.Run("empty body", func(t *testing.T) {
		s := newServer(t, replay(""))
		_, err, _ := run(t, provider(s, nil), request())
		if e := kindOf(t, err); e.Kind != llm.ErrNetwork {
			t.Errorf("kind %s msg %q", e.Kind, e.Message)
		}
	})
	t.Run("malformed chunk", func(t *testing.T) {
		s := newServer(t, replay(sse(text("a"), `{"choices":[{"delta":`)))
		_, err, _ := run(t, provider(s, nil), request())
		if e := kindOf(t, err); e.Kind != llm.ErrServer {
			t.Errorf("kind %s msg %q", e.Kind, e.Message)
		}
	})
}

func TestAbortMidStream(t *testing.T) {
	cancelled := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, sse(text("Hel")))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // blocked until the client goes away
		close(cancelled)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	emit := func(ev llm.StreamEvent, m *llm.AssistantMessage) {
		rec.emit(ev, m)
		if ev.Type == llm.EvTextDelta {
			cancel()
		}
	}
	// The server holds the stream until the client goes away, so only an
	// abort that ends the request returns at all; the bound is a backstop
	// (it was 2 s: a deadline against the machine's load).
	start := time.Now()
	msg, err := provider(s, nil).Stream(ctx, request(), emit)
	elapsed := time.Since(start)
	if elapsed > 30*time.Second {
		t.Errorf("abort took %v", elapsed)
	}
	if llm.KindOf(err) != llm.ErrAborted || msg.StopReason != llm.StopAborted || msg.ErrorMessage != llm.AbortMessage {
		t.Errorf("err %v stop %q msg %q", err, msg.StopReason, msg.ErrorMessage)
	}
	if msg.Text("") != "Hel" {
		t.Errorf("partial text %q", msg.Text(""))
	}
	checkBalanced(t, rec)
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second): // a backstop
		t.Fatal("server never saw the request cancelled")
	}
}

func TestAbortBeforeFirstChunk(t *testing.T) {
	got := make(chan struct{})
	cancelled := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(got)
		<-r.Context().Done()
		close(cancelled)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-got
		cancel()
	}()
	msg, err := provider(s, nil).Stream(ctx, request(), nil)
	if llm.KindOf(err) != llm.ErrAborted || msg.StopReason != llm.StopAborted {
		t.Errorf("err %v stop %q", err, msg.StopReason)
	}
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second): // a backstop
		t.Fatal("server never saw the request cancelled")
	}

	// An already cancelled context sends nothing.
	n := s.requests()
	msg, err = provider(s, nil).Stream(ctx, request(), nil)
	if llm.KindOf(err) != llm.ErrAborted || msg.StopReason != llm.StopAborted || s.requests() != n {
		t.Errorf("err %v stop %q requests %d→%d", err, msg.StopReason, n, s.requests())
	}
}

func TestNoKey(t *testing.T) {
	s := newServer(t, replay(sse(text("x"), "[DONE]")))
	p := provider(s, func(o *openai.Options) {
		o.APIKey, o.KeySource, o.KeyEnvs = "", openai.KeySourceNone, []string{"TESTAI_API_KEY", "AMA_API_KEY_TESTAI"}
	})
	msg, err, _ := run(t, p, request())
	e := kindOf(t, err)
	if e.Kind != llm.ErrNoKey || msg.StopReason != llm.StopError {
		t.Errorf("kind %s stop %q", e.Kind, msg.StopReason)
	}
	for _, want := range []string{"testai", "TESTAI_API_KEY", "AMA_API_KEY_TESTAI"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q lacks %q", e.Message, want)
		}
	}
	if s.requests() != 0 {
		t.Error("a request was sent without a key")
	}
	// A provider that needs no key sends no Authorization header.
	p = provider(s, func(o *openai.Options) { o.APIKey, o.NeedsKey = "", false })
	if _, err, _ := run(t, p, request()); err != nil {
		t.Fatal(err)
	}
	if h := s.lastHeader(t).Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q", h)
	}
}

func TestExtraHeaders(t *testing.T) {
	s := newServer(t, replay(sse(text("x"), finish("stop"), "[DONE]")))
	p := provider(s, func(o *openai.Options) {
		o.Headers = map[string]string{"X-Title": "ama", "HTTP-Referer": "https://example.invalid"}
	})
	if _, err, _ := run(t, p, request()); err != nil {
		t.Fatal(err)
	}
	h := s.lastHeader(t)
	if h.Get("X-Title") != "ama" || h.Get("HTTP-Referer") != "https://example.invalid" || h.Get("Authorization") != "Bearer "+secret {
		t.Errorf("headers = %v", h)
	}
}

func TestConcurrentStreams(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		last := req.Messages[len(req.Messages)-1].Content
		io.WriteString(w, sse(text("echo: "), text(last), finish("stop"), usage(10, 0, 2), "[DONE]"))
	})
	p := provider(s, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := strings.Repeat("x", i+1)
			msg, err := p.Stream(context.Background(), request(llm.NewUser(in, 1, "")), nil)
			if err != nil {
				errs <- err
				return
			}
			if msg.Text("") != "echo: "+in {
				errs <- errors.New("wrong reply " + msg.Text(""))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A secret in the base URL (user info or query) never appears in an error
// text: the transport quotes the request URL in its errors.
func TestBaseURLSecretRedacted(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:1/v1?api-key=url-secret-123", "http://u:url-secret-123@127.0.0.1:1/v1"} {
		p := openai.New(openai.Options{ID: "x", BaseURL: base, APIKey: "k", KeySource: openai.KeySourceEnv})
		_, err := p.Stream(context.Background(), request(), func(llm.StreamEvent, *llm.AssistantMessage) {})
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		if strings.Contains(err.Error(), "url-secret-123") {
			t.Errorf("secret in error: %v", err)
		}
	}
}

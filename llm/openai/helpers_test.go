package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// secret is the key given to providers under test; no error text may
// contain it.
const secret = "sk-test-SECRET-0123456789abcdef"

// sse renders events as server-sent events; "[DONE]" is passed as is.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: ")
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return b.String()
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// delta returns a chunk with one choice whose delta is d.
func delta(d map[string]any) string {
	return js(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}})
}

func text(s string) string      { return delta(map[string]any{"content": s}) }
func reasoning(s string) string { return delta(map[string]any{"reasoning_content": s}) }

func finish(reason string) string {
	return js(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": reason}}})
}

func usage(prompt, cached, completion int) string {
	return js(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion,
			"total_tokens": prompt + completion, "prompt_tokens_details": map[string]any{"cached_tokens": cached}}})
}

func toolDelta(calls ...map[string]any) string {
	list := make([]any, len(calls))
	for i, c := range calls {
		list[i] = c
	}
	return delta(map[string]any{"tool_calls": list})
}

func call(index int, id, name, args string) map[string]any {
	c := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		c["id"], c["type"] = id, "function"
		c["function"].(map[string]any)["name"] = name
	}
	return c
}

// server is an httptest server that records request bodies and headers.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func (s *server) lastBody(t *testing.T) []byte {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		t.Fatal("server got no request")
	}
	return s.bodies[len(s.bodies)-1]
}

func (s *server) lastHeader(t *testing.T) http.Header {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.headers) == 0 {
		t.Fatal("server got no request")
	}
	return s.headers[len(s.headers)-1]
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "bad path "+r.URL.Path, http.StatusNotFound)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// replay answers every request with body as an event stream.
func replay(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

// failWith answers with an HTTP error.
func failWith(status int, body string, headers map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func provider(s *server, mod func(*openai.Options)) *openai.Provider {
	o := openai.Options{ID: "testai", BaseURL: s.URL + "/v1", APIKey: secret, KeySource: openai.KeySourceEnv,
		KeyEnv: "TESTAI_API_KEY", NeedsKey: true, HTTPClient: s.Client()}
	if mod != nil {
		mod(&o)
	}
	return openai.New(o)
}

func testModel() *llm.Model {
	return &llm.Model{Provider: "testai", ID: "test-model", Name: "Test", API: openai.API, Reasoning: true,
		Input: []string{"text", "image"}, ContextWindow: 100_000, MaxTokens: 8192,
		Prices: llm.Prices{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}}
}

func request(msgs ...llm.Message) *llm.Request {
	if len(msgs) == 0 {
		msgs = []llm.Message{llm.NewUser("hi", 1, "")}
	}
	return &llm.Request{Model: testModel(), System: "You are a test.", Messages: msgs, ThinkingLevel: "off", Timestamp: 42}
}

// recorder keeps the emitted events.
type recorder struct{ events []llm.StreamEvent }

func (r *recorder) emit(ev llm.StreamEvent, _ *llm.AssistantMessage) { r.events = append(r.events, ev) }

func (r *recorder) types() []string {
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.Type
	}
	return out
}

func run(t *testing.T, p *openai.Provider, req *llm.Request) (*llm.AssistantMessage, error, *recorder) {
	t.Helper()
	rec := &recorder{}
	msg, err := p.Stream(context.Background(), req, rec.emit)
	if msg == nil {
		t.Fatal("Stream returned a nil message")
	}
	checkBalanced(t, rec)
	return msg, err, rec
}

// checkBalanced asserts every *_start has exactly one *_end.
func checkBalanced(t *testing.T, rec *recorder) {
	t.Helper()
	open := map[int]string{}
	for _, e := range rec.events {
		switch {
		case strings.HasSuffix(e.Type, "_start"):
			if _, dup := open[e.ContentIndex]; dup {
				t.Errorf("block %d opened twice", e.ContentIndex)
			}
			open[e.ContentIndex] = strings.TrimSuffix(e.Type, "_start")
		case strings.HasSuffix(e.Type, "_end"):
			if open[e.ContentIndex] != strings.TrimSuffix(e.Type, "_end") {
				t.Errorf("%s for block %d that is not open", e.Type, e.ContentIndex)
			}
			delete(open, e.ContentIndex)
		}
	}
	if len(open) > 0 {
		t.Errorf("blocks left open: %v", open)
	}
}

func kindOf(t *testing.T, err error) *llm.Error {
	t.Helper()
	e, ok := err.(*llm.Error)
	if !ok {
		t.Fatalf("error %T %v is not *llm.Error", err, err)
	}
	return e
}

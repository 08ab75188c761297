package golden_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// sse writes an OpenAI chat-completions stream.
func sse(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"mock","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, delta, f)
}

func usage(in, out int) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"mock","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out)
}

// A full tool-using turn through the real go-openai client and a loopback
// OpenAI-compatible server gives the same event sequence as the fake
// provider playing the same reply.
func TestHTTPProviderMatchesFakeSequence(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		switch calls.Add(1) {
		case 1:
			sse(w,
				chunk(`{"role":"assistant","reasoning_content":"I should read "}`, ""),
				chunk(`{"reasoning_content":"the file first."}`, ""),
				chunk(`{"content":"Reading "}`, ""),
				chunk(`{"content":"it."}`, ""),
				chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"README.md\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				usage(1200, 40))
		default:
			sse(w, chunk(`{"role":"assistant","content":"The README "}`, ""), chunk(`{"content":"describes the project."}`, ""),
				chunk(`{}`, "stop"), usage(1500, 12))
		}
	}))
	defer srv.Close()

	files := map[string]string{"README.md": "# Demo\n"}
	input := []string{`{"id":"p","type":"prompt","message":"what is this?"}`}
	run := func(cfg golden.Config) [][]byte {
		cfg.Files = files
		r := golden.Start(t, cfg)
		r.WaitFor("hello", 1, isType("hello"))
		for _, l := range input {
			r.Send(l)
		}
		r.WaitFor("agent_settled", 1, isType("agent_settled"))
		r.CloseStdin()
		if code := r.Wait(); code != 0 {
			t.Fatalf("exit %d: %s", code, r.Stderr())
		}
		return r.Lines()
	}
	httpLines := run(golden.Config{Args: []string{"--model", "openai/mock", "--permission-mode", "auto-edit"},
		Env: map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "sk-test"}})
	fakeLines := run(golden.Config{Args: []string{"--model", "fake/reasoning", "--permission-mode", "auto-edit"},
		Script: []byte(`[{"steps":[{"thinking":"I should read the file first."},{"text":"Reading it."},{"toolCall":{"name":"read","id":"call_1","arguments":{"path":"README.md"}}}],"usage":{"input":1200,"output":40}},{"text":"The README describes the project.","usage":{"input":1500,"output":12}}]`)})

	a, b := shapeSequence(t, httpLines), shapeSequence(t, fakeLines)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("event sequences differ\nhttp:\n%s\n\nfake:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if calls.Load() != 2 {
		t.Fatalf("%d HTTP requests, want 2", calls.Load())
	}
}

// shapeSequence lists the output as event types (deltas collapsed, since
// chunking differs between providers) with the final assistant texts and
// tool calls, which must agree.
func shapeSequence(t *testing.T, lines [][]byte) []string {
	var out []string
	for _, l := range lines {
		var v struct {
			Type  string `json:"type"`
			Event struct {
				Type string `json:"type"`
			} `json:"assistantMessageEvent"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Entry struct {
				Type string `json:"type"`
			} `json:"entry"`
		}
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatal(err)
		}
		item := v.Type
		switch v.Type {
		case "message_update":
			item += ":" + v.Event.Type
		case "entry_appended":
			item += ":" + v.Entry.Type
		case "message_end":
			item += ":" + v.Message.Role
			if v.Message.Role == "assistant" {
				var blocks []json.RawMessage
				_ = json.Unmarshal(v.Message.Content, &blocks)
				for _, c := range blocks {
					var b struct {
						Type, Text, Thinking, ID, Name string
						Arguments                      json.RawMessage
					}
					_ = json.Unmarshal(c, &b)
					item += fmt.Sprintf(" [%s %q%q %s %s %s]", b.Type, b.Text, b.Thinking, b.ID, b.Name, b.Arguments)
				}
			}
		}
		if n := len(out); n > 0 && out[n-1] == item && strings.HasSuffix(item, "_delta") {
			continue
		}
		out = append(out, item)
	}
	return out
}

// Retries through the real client: 429 with Retry-After then success, 500
// until retries run out, and a stream cut mid-reply then success.
func TestHTTPRetries(t *testing.T) {
	type step func(w http.ResponseWriter, r *http.Request)
	ok := func(text string) step {
		return func(w http.ResponseWriter, r *http.Request) {
			sse(w, chunk(`{"role":"assistant","content":"`+text+`"}`, ""), chunk(`{}`, "stop"), usage(10, 2))
		}
	}
	status := func(code int, retryAfter string) step {
		return func(w http.ResponseWriter, r *http.Request) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":{"message":"status %d","type":"server_error"}}`, code)
		}
	}
	cut := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", chunk(`{"role":"assistant","content":"partial answ"}`, ""))
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	cases := []struct {
		name      string
		config    string
		steps     []step
		wantEvent []string // auto_retry_* lines, normalised
		final     string   // final assistant text, or "" for a failed run
	}{
		{"429 then success", `{"retry":{"baseDelayMs":5}}`, []step{status(429, "1"), ok("after 429")},
			[]string{`auto_retry_start attempt=1 delayMs=1000`, `auto_retry_end success=true attempt=2`}, "after 429"},
		{"500 until retries run out", `{"retry":{"baseDelayMs":5,"maxAttempts":2}}`, []step{status(500, ""), status(500, ""), status(500, "")},
			[]string{`auto_retry_start attempt=1 delayMs=5`, `auto_retry_start attempt=2 delayMs=10`, `auto_retry_end success=false attempt=3`}, ""},
		{"stream cut then success", `{"retry":{"baseDelayMs":5}}`, []step{cut, ok("complete answer")},
			[]string{`auto_retry_start attempt=1 delayMs=5`, `auto_retry_end success=true attempt=2`}, "complete answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i >= len(tc.steps) {
					t.Errorf("unexpected request %d", i+1)
					http.Error(w, "no more", 500)
					return
				}
				tc.steps[i](w, r)
			}))
			defer srv.Close()
			r := golden.Start(t, golden.Config{Args: []string{"--model", "openai/mock"}, UserConfig: []byte(tc.config),
				Env: map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "sk-test"}})
			r.WaitFor("hello", 1, isType("hello"))
			r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
			r.WaitFor("agent_settled", 1, isType("agent_settled"))
			r.Send(`{"id":"m","type":"get_messages"}`)
			r.WaitFor("messages", 1, isResponse("m"))
			r.CloseStdin()
			r.Wait()
			var got []string
			var msgs []json.RawMessage
			for _, l := range r.Lines() {
				var v struct {
					Type, ID string
					Attempt  int
					DelayMs  int64
					Success  bool
					Message  json.RawMessage
					Data     struct{ Messages []json.RawMessage }
				}
				_ = json.Unmarshal(l, &v)
				switch v.Type {
				case "auto_retry_start":
					got = append(got, fmt.Sprintf("auto_retry_start attempt=%d delayMs=%d", v.Attempt, v.DelayMs))
				case "auto_retry_end":
					got = append(got, fmt.Sprintf("auto_retry_end success=%t attempt=%d", v.Success, v.Attempt))
				case "response":
					if v.ID == "m" {
						msgs = v.Data.Messages
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.wantEvent, "\n") {
				t.Fatalf("retry events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantEvent, "\n"))
			}
			// The context keeps the user message and, on success, only the
			// final reply: failed attempts were removed.
			if tc.final != "" {
				if len(msgs) != 2 || !strings.Contains(string(msgs[1]), tc.final) {
					t.Fatalf("context after retries: %s", msgs)
				}
			}
			if int(n.Load()) != len(tc.steps) {
				t.Fatalf("%d requests, want %d", n.Load(), len(tc.steps))
			}
		})
	}
}

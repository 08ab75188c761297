package openai

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfterParsing(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": "-1"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": base.Add(42 * time.Second).Format(http.TimeFormat)}, 42 * time.Second},
		{map[string]string{"Retry-After": base.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"retry-after-ms": "x", "Retry-After": "9"}, 9 * time.Second},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, base); got != c.want {
			t.Errorf("%v: got %v, want %v", c.h, got, c.want)
		}
	}
}

func TestTailBody(t *testing.T) {
	cases := []struct {
		reads []string
		done  bool
	}{
		{[]string{"data: [DONE]\n\n"}, true},
		{[]string{"data: {\"a\":1}\n\n", "data: [DO", "NE]\n\n"}, true},
		{[]string{"data: [DONE]", "\n", "\n"}, true},
		{[]string{strings.Repeat("x", 100), "data: [DONE]\r\n\r\n"}, true},
		{[]string{"data: {\"content\":\"[DONE]\"}\n\n"}, false},
		{[]string{"data: [DONE]\n\n", "data: {}\n\n"}, false},
		{nil, false},
	}
	for _, c := range cases {
		var tb tailBody
		for _, r := range c.reads {
			tb.push([]byte(r))
		}
		if got := tb.sawDone(); got != c.done {
			t.Errorf("%q: sawDone %t", c.reads, got)
		}
	}
}

func TestRedactTokens(t *testing.T) {
	for in, want := range map[string]string{
		"Incorrect API key provided: sk-proj-abcd****wxyz.": "Incorrect API key provided: [redacted].",
		"header was Bearer abc.def.ghi":                     "header was [redacted]",
		"gsk_0123456789abcdef rejected":                     "[redacted] rejected",
		"plain message":                                     "plain message",
		"max-tokens too-large":                              "max-tokens too-large",
		`Post "https://h.example/v1/chat/completions?key=abc123": dial tcp: no such host`: `Post "https://h.example/v1/chat/completions?[redacted]": dial tcp: no such host`,
		`Post "https://user:pw@h.example/v1/chat/completions": EOF`:                       `Post "https://[redacted]@h.example/v1/chat/completions": EOF`,
		"see https://docs.example/errors for help":                                        "see https://docs.example/errors for help",
		"base http://k:s@10.0.0.1:8000/v1?api-key=x#frag end":                             "base http://[redacted]@10.0.0.1:8000/v1?[redacted] end",
	} {
		if got := redactTokens(in); got != want {
			t.Errorf("redactTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKindFor(t *testing.T) {
	cases := []struct {
		status         int
		code, typ, msg string
		want           string
	}{
		{429, "", "", "Rate limit reached for requests", "rate_limit"},
		{429, "", "tokens", "Rate limit reached on tokens per min (TPM): too many tokens", "rate_limit"},
		{413, "", "", "Request too large: context window exceeded", "overflow"},
		{422, "", "", "Input is too long for requested model", "overflow"},
		{400, "", "", "the request exceeds the available context size, try increasing it", "overflow"},
		{408, "", "", "timeout", "server"},
		{0, "context_length_exceeded", "", "", "overflow"},
		{0, "", "rate_limit_error", "", "rate_limit"},
		{0, "", "", "something odd", "server"},
		{0, "invalid_api_key", "", "", "auth"},
	}
	for _, c := range cases {
		if got := kindFor(c.status, c.code, c.typ, c.msg); string(got) != c.want {
			t.Errorf("kindFor(%d, %q, %q, %q) = %s, want %s", c.status, c.code, c.typ, c.msg, got, c.want)
		}
	}
}

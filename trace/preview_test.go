package trace_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestPreviews(t *testing.T) {
	s := newSession()
	u0 := s.user("old turn", "")
	s.reply("old reply", usage(1, 1, 0, 0))
	u1 := s.user("deploy with Authorization: Bearer abcdefghijklmnop1234", "")
	long := strings.Repeat("x", 600)
	a1 := s.reply("", usage(1, 1, 0, 0), call{"c1", "bash", `{"command":"echo ` + long + `"}`}, call{"c2", "read", `{"path":"k"}`})
	s.result("c1", "bash", strings.Repeat("é", 2500), false)
	s.result("c2", "read", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123", false)
	a2 := s.reply("Done: token ghp_abcdefghijklmnopqrstuvwxyz0123456789.", usage(1, 1, 0, 0))
	// Tool call with invalid JSON arguments: the raw text is previewed.
	a3 := s.add(store.MessageEntry(&llm.AssistantMessage{Role: llm.RoleAssistant, Provider: "fake", Model: "echo",
		StopReason: llm.StopToolUse, Content: []llm.Content{&llm.ToolCall{Type: "toolCall", ID: "c3", Name: "bash",
			Arguments: json.RawMessage(`{}`), RawArguments: `{"command": "ls`}}}))

	r := build(t, s.input(false), trace.Query{Content: trace.ContentPreview, TurnLimit: limit(1)})
	eqSlice(t, "window", turnIDs(r), []string{u1})
	keys := []string{}
	byKey := map[string]trace.Preview{}
	for _, p := range r.Previews {
		keys = append(keys, p.Key)
		byKey[p.Key] = p
	}
	// Tree order; only the window; a step without text has no preview.
	eqSlice(t, "keys", keys, []string{"turn:" + u1, "tool:c1", "tool:c2", "step:" + a2, "tool:c3"})
	if _, ok := byKey["turn:"+u0]; ok {
		t.Error("preview of a turn outside the window")
	}
	if _, ok := byKey["step:"+a1]; ok {
		t.Error("empty step output previewed")
	}
	_ = a3

	turn := byKey["turn:"+u1]
	eq(t, "turn input", str(turn.Input), "deploy with Authorization: [redacted]")
	if turn.Output != nil || turn.Args != nil || turn.Result != nil {
		t.Error("turn preview has only input")
	}

	c1 := byKey["tool:c1"]
	args := str(c1.Args)
	eq(t, "args cut at 500 chars + …", utf8.RuneCountInString(args), 501)
	eq(t, "args ends with …", strings.HasSuffix(args, "…"), true)
	eq(t, "args start", strings.HasPrefix(args, `{"command":"echo xxx`), true)
	res := str(c1.Result)
	eq(t, "result cut at 2000 chars + … (runes)", utf8.RuneCountInString(res), 2001)
	eq(t, "result is valid UTF-8", utf8.ValidString(res), true)

	c2 := byKey["tool:c2"]
	eq(t, "small args kept", str(c2.Args), `{"path":"k"}`)
	eq(t, "result redacted", str(c2.Result), "OPENAI_API_KEY=[redacted]")

	eq(t, "step output", str(byKey["step:"+a2].Output), "Done: token [redacted].")
	eq(t, "raw arguments", str(byKey["tool:c3"].Args), `{"command": "ls`)
	eq(t, "running tool has no result", byKey["tool:c3"].Result == nil, true)
}

func TestPreviewKeysRepeatKeepFirst(t *testing.T) {
	s := newSession()
	s.user("go", "")
	s.reply("", usage(1, 1, 0, 0), call{"call_0", "read", `{"path":"a"}`})
	s.result("call_0", "read", "A", false)
	s.reply("", usage(1, 1, 0, 0), call{"call_0", "read", `{"path":"b"}`})
	s.result("call_0", "read", "B", false)
	r := build(t, s.input(false), trace.Query{Content: trace.ContentPreview})
	n := 0
	for _, p := range r.Previews {
		if p.Key == "tool:call_0" {
			n++
			eq(t, "first kept", str(p.Args), `{"path":"a"}`)
		}
	}
	eq(t, "one key", n, 1)
}

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text with task-runner and sk-learn", "plain text with task-runner and sk-learn"},
		{"key sk-abcdefghijklmnopqrstuvwx end", "key [redacted] end"},
		{"anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "anthropic [redacted]"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "Authorization: [redacted]"},
		{"curl -H 'authorization: bearer abc.def-ghi_jkl'", "curl -H 'authorization: [redacted]'"},
		{"gh ghp_0123456789abcdefghijABCDEFGHIJ", "gh [redacted]"},
		{"pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "pat [redacted]"},
		{"slack xoxb-1234567890-abcdefghij", "slack [redacted]"},
		{"aws AKIAIOSFODNN7EXAMPLE", "aws [redacted]"},
		{"google AIzaSyA1234567890abcdefghijklmnopqrstuv", "google [redacted]"},
		{"jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0NTY3.SflKxwRJSMeKKF2QT4fw", "jwt [redacted]"},
		{"export API_KEY=hunter2hunter2", "export API_KEY=[redacted]"},
		{`{"apiKey": "abc123def456"}`, `{"apiKey": "[redacted]"}`},
		{"password: s3cr3t-pass", "password: [redacted]"},
		{"DB_PASSWORD='x9y8z7w6'", "DB_PASSWORD='[redacted]'"},
		{"maxTokens: 4096, tokens=123456", "maxTokens: 4096, tokens=123456"},
		{`"api_key": "sk-abcdefghijklmnopqrstuvwx"`, `"api_key": "[redacted]"`},
	}
	for _, c := range cases {
		if got := trace.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	eq(t, "short", trace.Truncate("abc", 3), "abc")
	eq(t, "cut", trace.Truncate("abcd", 3), "abc…")
	eq(t, "runes", trace.Truncate("日本語テキスト", 3), "日本語…")
	eq(t, "empty", trace.Truncate("", 0), "")
	eq(t, "zero", trace.Truncate("a", 0), "…")
}

func TestHugeResultPreview(t *testing.T) {
	s := newSession()
	s.user("go", "")
	s.reply("", usage(1, 1, 0, 0), call{"c1", "read", `{}`})
	s.result("c1", "read", "secret=abcdefgh12345 "+strings.Repeat("y", 1<<20), false)
	r := build(t, s.input(false), trace.Query{Content: trace.ContentPreview})
	got := str(r.Previews[1].Result)
	eq(t, "key", r.Previews[1].Key, "tool:c1")
	eq(t, "length", utf8.RuneCountInString(got), trace.OtherPreviewChars+1)
	eq(t, "redacted", strings.HasPrefix(got, "secret=[redacted] yyy"), true)
}

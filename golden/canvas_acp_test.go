package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// canvas32 is shaped like the Armadra canvas's adapter: 32 canvas_* tools
// of the three permission classes; canvas_report answers what a canvas
// node's report needs (its transcriptPath: api.session.file() and
// ctx.sessionFile).
const canvas32 = `"use strict";
const CLASSES = ["read", "write", "execute"];
module.exports = { hostApi: 1, create(api) {
  if (!api.env.ARMADRA_NODE_ID) return undefined;
  for (let i = 0; i < 31; i++) {
    api.tools.register({ name: "canvas_verb_" + i, description: "Canvas verb " + i + ".", permission: CLASSES[i % 3],
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      async execute(input) { return { content: "verb " + i + ": " + input.text }; } });
  }
  api.tools.register({ name: "canvas_report", description: "Report this node's transcript.", permission: "read",
    parameters: { type: "object", properties: {} },
    async execute(input, ctx) { return { content: "transcriptPath=" + api.session.file() + " ctx=" + ctx.sessionFile }; } });
  api.instructions.add({ kind: "text", name: "armadra-canvas", text: "You are a member of an Armadra canvas." });
  return { id: "armadra-test" };
} };
`

// The canvas launches ama as "--mode acp --profile <profile>" without a
// model; its profile config is {version:1, permission:{mode:"default"},
// compaction:{enabled:true}, tools:{default:["+task"]}} (issue 29). Without
// a model the session methods answer -32000 ("agent not signed in"); once a
// model is configured the same process starts: task is active beside the
// 32 host tools, the first run's host tool sees the transcript path, a
// model that reuses one tool call id gives unique ACP ids, and the write's
// permission request carries its diff.
func TestCanvasProfileOverACP(t *testing.T) {
	adapter := writeAdapter(t, "ama-armadra.cjs", canvas32)
	dir := filepath.Dir(adapter)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("config.json", `{"version":1,"permission":{"mode":"default"},"compaction":{"enabled":true},"tools":{"default":["+task"]}}`)
	instr := write("instructions.md", "Canvas instructions.\n")
	profile := write("profile.json", `{"version":1,"host":"`+adapter+`","instructions":["`+instr+`"],"config":"`+cfg+`","sessionDir":"`+filepath.Join(dir, "sessions")+`"}`)
	record := filepath.Join(dir, "record.jsonl")
	// One id for every call, as some models do.
	script := `{"version":1,"responses":[
		{"steps":[{"toolCall":{"id":"call_0","name":"canvas_report","arguments":{}}}]},
		{"steps":[{"toolCall":{"id":"call_0","name":"write","arguments":{"path":"notes.txt","content":"canvas notes\n"}}}]},
		{"steps":[{"toolCall":{"id":"call_0","name":"canvas_verb_0","arguments":{"text":"x"}}}]},
		{"text":"done"}]}`
	r := golden.Start(t, golden.Config{
		Args:      []string{"--mode", "acp", "--profile", profile},
		Env:       map[string]string{"ARMADRA_NODE_ID": "node-1", "AMA_FAKE_RECORD": record},
		Script:    []byte(script),
		BootRetry: 1, // retry start-up at every session method
	})
	errCode := func(id string) int64 {
		i := r.WaitFor("response "+id, 1, acpResponse(id))
		var m struct {
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.Lines()[i], &m)
		if m.Error == nil {
			return 0
		}
		return m.Error.Code
	}

	// No model: initialize works, session/new and session/prompt are -32000.
	r.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if code := errCode("1"); code != 0 {
		t.Fatalf("initialize without a model: error %d", code)
	}
	r.Send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + r.Work + `","mcpServers":[]}}`)
	if code := errCode("2"); code != -32000 {
		t.Fatalf("session/new without a model: %d, want -32000", code)
	}
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"00000000-0000-4000-8000-000000000001","prompt":[{"type":"text","text":"hi"}]}}`)
	if code := errCode("3"); code != -32000 {
		t.Fatalf("session/prompt without a model: %d, want -32000", code)
	}

	// The user signs in (here: a model in the user config).
	userCfg := filepath.Join(r.Home, ".config", "ama", "config.json")
	if err := os.MkdirAll(filepath.Dir(userCfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(userCfg, []byte(`{"model":"fake/echo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Send(`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"` + r.Work + `","mcpServers":[]}}`)
	if code := errCode("4"); code != 0 {
		t.Fatalf("session/new after sign-in: error %d\n%s", code, r.Stderr())
	}
	var sid string
	for _, l := range r.Lines() {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(l, &m) == nil && m.ID == 4 {
			sid = m.Result.SessionID
		}
	}
	r.Send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"report, write, verb"}]}}`)
	n := r.WaitFor("session/request_permission", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
	var ask struct {
		Params struct {
			ToolCall struct {
				ToolCallID string            `json:"toolCallId"`
				Content    []json.RawMessage `json:"content"`
			} `json:"toolCall"`
		} `json:"params"`
	}
	_ = json.Unmarshal(r.Lines()[n], &ask)
	wantDiff := `{"type":"diff","path":"` + filepath.Join(r.Work, "notes.txt") + `","oldText":null,"newText":"canvas notes\n"}`
	if len(ask.Params.ToolCall.Content) != 1 || string(ask.Params.ToolCall.Content[0]) != strings.ReplaceAll(wantDiff, "\n", `\n`) {
		t.Errorf("the write's permission request carries %s, want the diff %s", r.Lines()[n], wantDiff)
	}
	acpAnswerPermission(r, n, "allow_once")
	if code := errCode("5"); code != 0 {
		t.Fatalf("prompt: error %d", code)
	}

	// Unique tool call ids; the ask names the write's own card.
	var cards []string
	var report string
	for _, l := range r.Lines() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string            `json:"sessionUpdate"`
					ToolCallID    string            `json:"toolCallId"`
					Content       []json.RawMessage `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) != nil || m.Method != "session/update" {
			continue
		}
		if m.Params.Update.SessionUpdate == "tool_call" {
			cards = append(cards, m.Params.Update.ToolCallID)
		}
		if m.Params.Update.SessionUpdate == "tool_call_update" && strings.Contains(string(l), "transcriptPath=") {
			report = string(l)
		}
	}
	if len(cards) != 3 || cards[0] == cards[1] || cards[1] == cards[2] || cards[0] == cards[2] {
		t.Errorf("tool_call ids %v: want three distinct", cards)
	}
	if len(cards) == 3 && ask.Params.ToolCall.ToolCallID != cards[1] {
		t.Errorf("the permission request names %s, the write's card is %s", ask.Params.ToolCall.ToolCallID, cards[1])
	}

	// The first run's host tool sees the transcript, which exists.
	matches, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*"+sid+"*.jsonl"))
	if len(matches) != 1 {
		t.Fatalf("session file of %s: %v", sid, matches)
	}
	if want := "transcriptPath=" + matches[0] + " ctx=" + matches[0]; !strings.Contains(report, want) {
		t.Errorf("canvas_report: %s, want %q", report, want)
	}

	// task is active beside the defaults and the 32 host tools.
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &req); err != nil {
		t.Fatal(err)
	}
	host := 0
	for _, name := range req.Tools {
		if strings.HasPrefix(name, "canvas_") {
			host++
		}
	}
	for _, want := range []string{"task", "task_ctl", "bash", "read", "write"} {
		if !slices.Contains(req.Tools, want) {
			t.Errorf("the first request's tools lack %s: %v", want, req.Tools)
		}
	}
	if host != 32 {
		t.Errorf("%d host tools in the first request, want 32: %v", host, req.Tools)
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
}

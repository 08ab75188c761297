package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/tools"
)

// js encodes v as the wire would.
func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsAll(t *testing.T, vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, js(t, v))
	}
	return out
}

func expectUpdates(t *testing.T, got []any, want ...string) {
	t.Helper()
	g := jsAll(t, got)
	if len(g) != len(want) {
		t.Fatalf("got %d updates, want %d:\n%s", len(g), len(want), strings.Join(g, "\n"))
	}
	for i := range want {
		if g[i] != want[i] {
			t.Errorf("update %d:\n got  %s\n want %s", i, g[i], want[i])
		}
	}
}

func TestTranslateChunks(t *testing.T) {
	tr := newTranslator()
	delta := func(typ, d string) events.Event {
		return events.MessageUpdate{AssistantMessageEvent: llm.StreamEvent{Type: typ, Delta: d}}
	}
	expectUpdates(t, tr.translate(delta(llm.EvTextDelta, "hi <b>")),
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi \u003cb\u003e"}}`)
	expectUpdates(t, tr.translate(delta(llm.EvThinkingDelta, "hmm")),
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`)
	expectUpdates(t, tr.translate(delta(llm.EvToolCallDelta, `{"pa`)))
	expectUpdates(t, tr.translate(delta(llm.EvTextDelta, "")))
	expectUpdates(t, tr.translate(events.MessageUpdate{AssistantMessageEvent: llm.StreamEvent{Type: llm.EvTextStart}}))
	// Events without an ACP counterpart.
	for _, e := range []events.Event{events.AgentStart{}, events.TurnStart{}, events.QueueUpdate{}, events.SessionStart{}, events.AgentSettled{}} {
		expectUpdates(t, tr.translate(e))
	}
}

// The location and the diff are the events' (the path the session
// resolved, the diff the tool computed): the translator reads no file
// (there is none here).
func TestTranslateWriteWithPermission(t *testing.T) {
	tr := newTranslator()
	args := json.RawMessage(`{"path":"a.txt","content":"new\n"}`)
	abs := filepath.Join(t.TempDir(), "a.txt")
	expectUpdates(t, tr.translate(events.ToolExecutionStart{ToolCallID: "c1", ToolName: "write", Args: args, Path: abs}),
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Write a.txt","kind":"edit","status":"pending","locations":[{"path":"`+abs+`"}],"rawInput":{"path":"a.txt","content":"new\n"}}`)
	expectUpdates(t, tr.translate(events.PermissionRequest{RequestID: "r1", ToolName: "write", Context: &events.PermissionCtx{ToolCallID: "c1"}}))
	expectUpdates(t, tr.translate(events.PermissionResolved{RequestID: "r1", Decision: "allow"}),
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`)
	end := events.ToolExecutionEnd{ToolCallID: "c1", ToolName: "write", Diff: &events.FileDiff{Path: abs, NewText: "new\n"},
		Result: events.ToolResult{Content: []llm.Content{llm.Text("Created a.txt")}, Details: json.RawMessage(`{"path":"a.txt","created":true}`)}}
	expectUpdates(t, tr.translate(end),
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[`+
			`{"type":"diff","path":"`+abs+`","oldText":null,"newText":"new\n"},`+
			`{"type":"content","content":{"type":"text","text":"Created a.txt"}}],`+
			`"rawOutput":{"isError":false,"details":{"path":"a.txt","created":true}}}`)
	if len(tr.running) != 0 || len(tr.asks) != 0 {
		t.Errorf("state left behind: %v %v", tr.running, tr.asks)
	}
}

// An edit's diff is the one its event carries, whatever the file holds
// now; a text over maxDiffBytes leaves the diff out.
func TestTranslateEditDiff(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "f.go")
	if err := os.WriteFile(abs, []byte("changed since\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTranslator()
	tr.translate(events.ToolExecutionStart{ToolCallID: "e", ToolName: "edit", Args: json.RawMessage(`{"path":"f.go","edits":[{"oldText":"b","newText":"c"}]}`), Path: abs})
	old := "a\nb\n"
	got := tr.translate(events.ToolExecutionEnd{ToolCallID: "e", ToolName: "edit", Diff: &events.FileDiff{Path: abs, OldText: &old, NewText: "a\nc\n"},
		Result: events.ToolResult{Content: []llm.Content{llm.Text("ok")}}})
	expectUpdates(t, got, `{"sessionUpdate":"tool_call_update","toolCallId":"e","status":"completed","content":[`+
		`{"type":"diff","path":"`+abs+`","oldText":"a\nb\n","newText":"a\nc\n"},`+
		`{"type":"content","content":{"type":"text","text":"ok"}}],"rawOutput":{"isError":false}}`)
	big := strings.Repeat("x", maxDiffBytes+1)
	for i, d := range []*events.FileDiff{{Path: abs, OldText: &big, NewText: "a"}, {Path: abs, OldText: &old, NewText: big}} {
		tr.translate(events.ToolExecutionStart{ToolCallID: "e", ToolName: "edit", Path: abs})
		expectUpdates(t, tr.translate(events.ToolExecutionEnd{ToolCallID: "e", ToolName: "edit", Diff: d, Result: events.ToolResult{Content: []llm.Content{llm.Text("ok")}}}),
			`{"sessionUpdate":"tool_call_update","toolCallId":"e#`+strconv.Itoa(i+2)+`","status":"completed","content":[`+
				`{"type":"content","content":{"type":"text","text":"ok"}}],"rawOutput":{"isError":false}}`)
	}
}

func TestTranslateFailuresAndStreaming(t *testing.T) {
	tr := newTranslator()
	tr.translate(events.ToolExecutionStart{ToolCallID: "b", ToolName: "bash", Args: json.RawMessage(`{"command":"make test\nmore"}`)})
	// A denied ask: no in_progress.
	tr.translate(events.PermissionRequest{RequestID: "r", Context: &events.PermissionCtx{ToolCallID: "b"}})
	expectUpdates(t, tr.translate(events.PermissionResolved{RequestID: "r", Decision: "deny"}))
	expectUpdates(t, tr.translate(events.ToolExecutionUpdate{ToolCallID: "b", Partial: "line1\n"}),
		`{"sessionUpdate":"tool_call_update","toolCallId":"b","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"line1\n"}}]}`)
	expectUpdates(t, tr.translate(events.ToolExecutionUpdate{ToolCallID: "b", Partial: "line1\nline2\n"}),
		`{"sessionUpdate":"tool_call_update","toolCallId":"b","content":[{"type":"content","content":{"type":"text","text":"line1\nline2\n"}}]}`)
	expectUpdates(t, tr.translate(events.ToolExecutionEnd{ToolCallID: "b", ToolName: "bash", IsError: true,
		Result: events.ToolResult{IsError: true, Content: []llm.Content{llm.Text("exit 2"), llm.Image("AAAA", "image/png")}}}),
		`{"sessionUpdate":"tool_call_update","toolCallId":"b","status":"failed","content":[`+
			`{"type":"content","content":{"type":"text","text":"exit 2"}},`+
			`{"type":"content","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}],"rawOutput":{"isError":true}}`)
	// A failed write carries no diff.
	tr.translate(events.ToolExecutionStart{ToolCallID: "w", ToolName: "write", Args: json.RawMessage(`{"path":"x","content":"y"}`)})
	expectUpdates(t, tr.translate(events.ToolExecutionEnd{ToolCallID: "w", ToolName: "write", IsError: true, Denied: true,
		Result: events.ToolResult{IsError: true, Content: []llm.Content{llm.Text("Not run")}}}),
		`{"sessionUpdate":"tool_call_update","toolCallId":"w","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Not run"}}],"rawOutput":{"isError":true}}`)
	// An end without a start (never happens) still maps.
	expectUpdates(t, tr.translate(events.ToolExecutionEnd{ToolCallID: "z", ToolName: "read", Result: events.ToolResult{Content: []llm.Content{}}}),
		`{"sessionUpdate":"tool_call_update","toolCallId":"z","status":"completed","rawOutput":{"isError":false}}`)
}

func TestTranslateCapsText(t *testing.T) {
	tr := newTranslator()
	long := strings.Repeat("é", 3000) // 6000 bytes
	u := tr.translate(events.ToolExecutionEnd{ToolCallID: "r", ToolName: "read", Result: events.ToolResult{Content: []llm.Content{llm.Text(long)}}})
	text := u[0].(toolCallUpdate).Content[0].Content.Text
	if !strings.HasPrefix(text, strings.Repeat("é", 2048)) || !strings.HasSuffix(text, "(1904 more bytes)") {
		t.Errorf("capped text: %q…%q", text[:10], text[len(text)-30:])
	}
	p := tr.translate(events.ToolExecutionUpdate{ToolCallID: "r", Partial: long})[0].(toolCallUpdate).Content[0].Content.Text
	if !strings.HasPrefix(p, "… (1904 earlier bytes)\n") || !strings.HasSuffix(p, "é") {
		t.Errorf("tail: %q", p[:40])
	}
}

func TestTranslateTodos(t *testing.T) {
	tr := newTranslator()
	expectUpdates(t, tr.translate(events.TodoUpdated{Items: []plan.TodoItem{
		{ID: "1", Text: "read", Status: plan.TodoDone},
		{ID: "2", Text: "write", Status: plan.TodoInProgress},
		{ID: "3", Text: "test", Status: plan.TodoPending},
	}}), `{"sessionUpdate":"plan","entries":[{"content":"read","priority":"medium","status":"completed"},`+
		`{"content":"write","priority":"medium","status":"in_progress"},{"content":"test","priority":"medium","status":"pending"}]}`)
	expectUpdates(t, tr.translate(events.TodoUpdated{}), `{"sessionUpdate":"plan","entries":[]}`)
}

func TestToolKindsTitlesLocations(t *testing.T) {
	cases := []struct {
		name, args, kind, title, locs string
	}{
		{"read", `{"path":"a/b.go","offset":10}`, "read", "Read a/b.go", `[{"path":"/w/a/b.go","line":10}]`},
		{"read", `{"path":"/abs/x"}`, "read", "Read /abs/x", `[{"path":"/abs/x"}]`},
		{"write", `{"path":"n.txt","content":"x"}`, "edit", "Write n.txt", `[{"path":"/w/n.txt"}]`},
		{"edit", `{"path":"../up.txt","edits":[]}`, "edit", "Edit ../up.txt", `[{"path":"/up.txt"}]`},
		{"ls", `{}`, "read", "List .", `null`},
		{"grep", `{"pattern":"TODO","path":"src"}`, "search", `Search "TODO" in src`, `[{"path":"/w/src"}]`},
		{"glob", `{"pattern":"**/*.go"}`, "search", "Find **/*.go", `null`},
		{"bash", `{"command":"go test ./...\necho done"}`, "execute", "Run go test ./...…", `null`},
		{"bash", `{"job":"j1","action":"wait"}`, "execute", "Job j1: wait", `null`},
		{"todo", `{}`, "think", "todo", `null`},
		{"task", `{}`, "other", "task", `null`},
		{"web_fetch", `{}`, "fetch", "web_fetch", `null`},
		{"read", `not json`, "read", "read", `null`},
	}
	for _, c := range cases {
		args := json.RawMessage(c.args)
		if k := toolKind(c.name); k != c.kind {
			t.Errorf("toolKind(%s) = %s, want %s", c.name, k, c.kind)
		}
		if ti := toolTitle(c.name, args); ti != c.title {
			t.Errorf("toolTitle(%s, %s) = %q, want %q", c.name, c.args, ti, c.title)
		}
		if l := js(t, toolLocations(c.name, args, (&tools.Env{Cwd: "/w"}).Target(c.name, args))); l != c.locs {
			t.Errorf("toolLocations(%s, %s) = %s, want %s", c.name, c.args, l, c.locs)
		}
	}
}

func TestContentItemsHaveOneShape(t *testing.T) {
	old := "a"
	for _, c := range []struct {
		item toolCallContent
		want string
	}{
		{textItem("x"), `{"type":"content","content":{"type":"text","text":"x"}}`},
		{diffItem("/p", nil, ""), `{"type":"diff","path":"/p","oldText":null,"newText":""}`},
		{diffItem("/p", &old, "b"), `{"type":"diff","path":"/p","oldText":"a","newText":"b"}`},
	} {
		if got := js(t, c.item); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func TestReplayUpdates(t *testing.T) {
	msgs := []llm.Message{
		&llm.SystemMessage{Role: llm.RoleSystem},
		llm.NewUser("hello", 1, ""),
		&llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{
			&llm.ThinkingContent{Type: "thinking", Thinking: "plan"},
			&llm.ThinkingContent{Type: "thinking", Thinking: "secret", Redacted: true},
			llm.Text("reading"),
			llm.NewToolCall("t1", "read", json.RawMessage(`{"path":"a"}`)),
			llm.NewToolCall("t2", "bash", json.RawMessage(`{"command":"x"}`)),
			llm.NewToolCall("t3", "grep", json.RawMessage(`{"pattern":"p"}`)),
		}},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "t1", ToolName: "read", Content: []llm.Content{llm.Text("body")}},
		&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "t2", ToolName: "bash", IsError: true, Content: []llm.Content{llm.Text("denied")}},
		&llm.UserMessage{Role: llm.RoleUser, Content: llm.BlockContent(llm.Text("look"), llm.Image("QQ==", "image/png"))},
		&llm.CustomMessage{Role: llm.RoleCustom, CustomType: "x", Content: llm.StringContent("hidden")},
		&llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("done")}},
	}
	expectUpdates(t, replayUpdates(msgs, "/w", newCallIDs()),
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hello"}}`,
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"plan"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"reading"}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a","kind":"read","status":"completed","locations":[{"path":"/w/a"}],"rawInput":{"path":"a"},"content":[{"type":"content","content":{"type":"text","text":"body"}}],"rawOutput":{"isError":false}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Run x","kind":"execute","status":"failed","rawInput":{"command":"x"},"content":[{"type":"content","content":{"type":"text","text":"denied"}}],"rawOutput":{"isError":true}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t3","title":"Search \"p\"","kind":"search","status":"pending","rawInput":{"pattern":"p"}}`,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"look"}}`,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"image","data":"QQ==","mimeType":"image/png"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}`,
	)
}

// A model that reuses one tool call id (call_0 in every turn) still gives
// the client one card per call: the session's ACP ids are unique, and
// every update of a call names its own card (issue 29).
func TestToolCallIDsUniquePerSession(t *testing.T) {
	tr := newTranslator()
	var got []any
	for i := 0; i < 3; i++ {
		got = append(got, tr.translate(events.ToolExecutionStart{ToolCallID: "call_0", ToolName: "glob", Args: json.RawMessage(`{"pattern":"*"}`)})...)
		got = append(got, tr.translate(events.ToolExecutionUpdate{ToolCallID: "call_0", ToolName: "glob", Partial: "a"})...)
		got = append(got, tr.translate(events.ToolExecutionEnd{ToolCallID: "call_0", ToolName: "glob", Result: events.ToolResult{Content: []llm.Content{llm.Text("a")}}})...)
	}
	var ids []string
	for _, line := range jsAll(t, got) {
		var u struct {
			ToolCallID string `json:"toolCallId"`
		}
		_ = json.Unmarshal([]byte(line), &u)
		ids = append(ids, u.ToolCallID)
	}
	want := []string{"call_0", "call_0", "call_0", "call_0#2", "call_0#2", "call_0#2", "call_0#3", "call_0#3", "call_0#3"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("toolCallIds %v, want %v", ids, want)
	}
}

// Replay pairs each call with the first later result of its id and gives
// reused ids their own ACP ids; a live call after the replay does not
// take an id the replay showed.
func TestReplayReusedToolCallIDs(t *testing.T) {
	call := func(args string) *llm.AssistantMessage {
		return &llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall("call_0", "bash", json.RawMessage(args))}}
	}
	result := func(text string) *llm.ToolResultMessage {
		return &llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "call_0", ToolName: "bash", Content: []llm.Content{llm.Text(text)}}
	}
	ids := newCallIDs()
	expectUpdates(t, replayUpdates([]llm.Message{call(`{"command":"a"}`), result("A"), call(`{"command":"b"}`), result("B")}, "/w", ids),
		`{"sessionUpdate":"tool_call","toolCallId":"call_0","title":"Run a","kind":"execute","status":"completed","rawInput":{"command":"a"},"content":[{"type":"content","content":{"type":"text","text":"A"}}],"rawOutput":{"isError":false}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"call_0#2","title":"Run b","kind":"execute","status":"completed","rawInput":{"command":"b"},"content":[{"type":"content","content":{"type":"text","text":"B"}}],"rawOutput":{"isError":false}}`,
	)
	if id := ids.open("call_0"); id != "call_0#3" {
		t.Errorf("a live call after the replay gets %s, want call_0#3", id)
	}
}

// A codemode script's nested call is its own tool_call, titled under
// codemode and pointing at the outer call's ACP id.
func TestNestedCodemodeCallFolded(t *testing.T) {
	tr := newTranslator()
	tr.translate(events.ToolExecutionStart{ToolCallID: "c1", ToolName: "codemode", Args: json.RawMessage(`{"script":"1"}`)})
	got := tr.translate(events.ToolExecutionStart{ToolCallID: "c1_n1", ToolName: "read", Args: json.RawMessage(`{"path":"a"}`),
		ParentToolCallID: "c1", ViaCodemode: true})
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"title":"codemode › `) || !strings.Contains(string(b), `"_meta":{"ama":{"parentToolCallId":"c1"}}`) {
		t.Fatalf("%s", b)
	}
}

package golden_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// ctxAdapter exercises what a host tool reaches through its ToolContext
// (ctx.tools.executeTool, ctx.session, ctx.spawnSubagent) and what an
// adapter registers after create() returned.
const ctxAdapter = `module.exports = { hostApi: 1, create(api) {
  const reg = (name, execute) => api.tools.register({ name, permission: "read", description: "Test tool " + name + ".",
    parameters: { type: "object", properties: { text: { type: "string" } } }, execute });
  reg("register_more", async () => {
    api.tools.register({ name: "late_tool", permission: "read", description: "Late tool.", promptGuidelines: ["Late tools come last."],
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: async (i) => ({ content: "late ran: " + i.text }) });
    api.instructions.add({ kind: "text", name: "late", text: "Late rule." });
    const codes = [];
    for (const name of ["bash", "task", "late_tool", "register_more"]) {
      try { api.tools.register({ name, permission: "read", description: "x", execute: async () => ({ content: "" }) }); codes.push("ok"); }
      catch (e) { codes.push(e.code); }
    }
    return { content: "again: " + codes.join(",") + "; listed: " + api.tools.list().includes("late_tool") };
  });
  reg("nested", async (input, ctx) => {
    const out = [];
    for (const [name, args] of JSON.parse(input.text)) {
      const r = await ctx.tools.executeTool(name, args);
      out.push(name + (r.isError ? " ERR " : " OK ") + r.content.map((c) => c.text).join(""));
    }
    return { content: out.join("\n---\n") };
  });
  reg("nested_signal", async (input, ctx) => {
    const r = await ctx.tools.executeTool("bash", { command: input.text }, { signal: AbortSignal.timeout(200) });
    return { content: (r.isError ? "ERR " : "OK ") + r.content.map((c) => c.text).join("") };
  });
  reg("mark_edit", async (input, ctx) => {
    const file = require("path").resolve(ctx.cwd, input.text);
    const edit = () => ctx.tools.executeTool("edit", { path: file, edits: [{ oldText: "old", newText: "new" }] });
    const before = await edit();
    const had = ctx.readFiles.has(file);
    ctx.markRead(file);
    const after = await edit();
    return { content: "before " + (before.isError ? "ERR" : "OK") + " had " + had + " after " + (after.isError ? "ERR " + after.content[0].text : "OK") };
  });
  reg("has_read", async (input, ctx) => ({ content: String(ctx.readFiles.has(require("path").resolve(ctx.cwd, input.text))) }));
  reg("ctx_info", async (input, ctx) => ({ content: JSON.stringify({ thinkingLevel: ctx.thinkingLevel,
    active: [...(ctx.activeTools || [])].filter((n) => ["ctx_info", "read", "ls"].includes(n)) }) }));
  reg("note", async (input, ctx) => {
    const prev = ctx.session.lastCustom("canvas.note");
    ctx.session.appendCustom("canvas.note", { text: input.text });
    return { content: "prev=" + JSON.stringify(prev) + " now=" + JSON.stringify(ctx.session.lastCustom("canvas.note")) };
  });
  reg("spawn", async (input, ctx) => {
    if (!ctx.spawnSubagent) return { content: "no spawnSubagent", isError: true };
    const r = await ctx.spawnSubagent({ prompt: input.text, description: "from the host" });
    return { content: "sub: " + JSON.stringify(r) };
  });
  api.approvals.setBroker({ ask(req) {
    return req.toolName === "bash" && JSON.stringify(req.input).includes("broker-ok") ? "allow" : undefined;
  } });
  return { id: "ctx-host" };
} };
`

func writeCtxAdapter(t *testing.T) string {
	t.Helper()
	return writeAdapter(t, "ctx.cjs", ctxAdapter)
}

// promptToEnd sends the prompt "go", waits for the run to settle, closes
// stdin and requires a clean exit.
func promptToEnd(t *testing.T, r *golden.Run) {
	t.Helper()
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
}

// turns is a fake script with one tool call per response, then "Done.".
func turns(calls ...string) []byte {
	var rs []string
	for _, c := range calls {
		rs = append(rs, `{"steps":[{"toolCall":`+c+`}]}`)
	}
	rs = append(rs, `{"text":"Done."}`)
	return []byte(`{"version":1,"responses":[` + strings.Join(rs, ",") + `]}`)
}

// toolEnds maps toolCallId to the tool_execution_end line; the fake
// model's ids repeat per reply, so the model's calls are also "#<n>" in
// order.
func toolEnds(r *golden.Run) map[string]string {
	out := map[string]string{}
	n := 0
	for _, l := range r.Lines() {
		var m struct{ Type, ToolCallID, ParentToolCallID string }
		if json.Unmarshal(l, &m) == nil && m.Type == "tool_execution_end" {
			out[m.ToolCallID] = string(l)
			if m.ParentToolCallID == "" {
				out["#"+strconv.Itoa(n)] = string(l)
				n++
			}
		}
	}
	return out
}

type recorded struct {
	System string   `json:"system"`
	Tools  []string `json:"tools"`
}

func readRequests(t *testing.T, path string) []recorded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recorded
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rq recorded
		if err := json.Unmarshal(sc.Bytes(), &rq); err != nil {
			t.Fatal(err)
		}
		out = append(out, rq)
	}
	return out
}

// A tool registered after create() is offered from the next request on,
// appended at the end of the tool table; instructions added later reach
// the host section at the next prompt; tool_exists still applies.
func TestHostLateToolsAndInstructions(t *testing.T) {
	adapter := writeCtxAdapter(t)
	record := filepath.Join(t.TempDir(), "record.jsonl")
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter},
		Env:  map[string]string{"AMA_FAKE_RECORD": record},
		Script: []byte(`{"version":1,"responses":[{"steps":[{"toolCall":{"name":"register_more","arguments":{}}}]},` +
			`{"steps":[{"toolCall":{"name":"late_tool","arguments":{}}}]},{"steps":[{"toolCall":{"name":"late_tool","arguments":{"text":"x"}}}]},{"text":"Done."},{"text":"Again."},{"text":"Third."}]}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"one"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"p2","type":"prompt","message":"two"}`)
	r.WaitFor("settled again", 2, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"tl","type":"get_tools"}`)
	r.WaitFor("tools", 1, func(o *golden.Object) bool { return o.String("id") == "tl" })
	r.Send(`{"id":"n","type":"new_session"}`)
	r.WaitFor("new session", 1, func(o *golden.Object) bool { return o.String("type") == "session_start" && o.String("reason") == "new" })
	r.Send(`{"id":"p3","type":"prompt","message":"three"}`)
	r.WaitFor("settled in the new session", 3, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	ends := toolEnds(r)
	if e := ends["#0"]; !strings.Contains(e, "again: tool_exists,tool_exists,tool_exists,tool_exists; listed: true") {
		t.Errorf("late registration: %s", e)
	}
	if e := ends["#1"]; !strings.Contains(e, "Invalid arguments for late_tool") {
		t.Errorf("the late tool's schema was not checked: %s", e)
	}
	if e := ends["#2"]; !strings.Contains(e, "late ran: x") || strings.Contains(e, `"isError":true`) {
		t.Errorf("the late tool did not run at the next request: %s", e)
	}
	reqs := readRequests(t, record)
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	has := func(list []string, n string) bool {
		for _, x := range list {
			if x == n {
				return true
			}
		}
		return false
	}
	if has(reqs[0].Tools, "late_tool") {
		t.Errorf("late_tool offered before it was registered: %v", reqs[0].Tools)
	}
	if tl := reqs[1].Tools; len(tl) == 0 || tl[len(tl)-1] != "late_tool" || strings.Join(tl[:len(tl)-1], ",") != strings.Join(reqs[0].Tools, ",") {
		t.Errorf("late_tool must be appended to the first request's table: %v then %v", reqs[0].Tools, tl)
	}
	if !strings.Contains(reqs[1].System, "- late_tool: late tool") {
		t.Errorf("the tools section does not list the late tool:\n%s", reqs[1].System)
	}
	for i := 0; i < 4; i++ {
		if strings.Contains(reqs[i].System, "Late rule.") {
			t.Errorf("request %d (same prompt) already has the late instruction", i)
		}
	}
	if tl := reqs[4].Tools; tl[len(tl)-1] != "late_tool" {
		t.Errorf("the late tool moved in the table: %v", tl)
	}
	if s := reqs[4].System; !strings.HasSuffix(s, "Late rule.") || !strings.Contains(s, "- Late tools come last.") {
		t.Errorf("next prompt: host section and guideline missing:\n%s", s)
	}
	if n := reqs[5]; !has(n.Tools, "late_tool") || !strings.HasSuffix(n.System, "Late rule.") {
		t.Errorf("a session made later lacks the late tool or instruction: %v\n%s", n.Tools, n.System)
	}
	var tools string
	for _, l := range r.Lines() {
		if bytes.Contains(l, []byte(`"id":"tl"`)) {
			tools = string(l)
		}
	}
	if !strings.Contains(tools, `"name":"late_tool"`) {
		t.Errorf("get_tools lacks late_tool: %s", tools)
	}
}

// ctx.tools.executeTool runs the call through the whole pipeline: events
// with parentToolCallId, the approval chain (the client is unattended:
// deny; the host broker allows one), a PreToolUse hook's deny, schema
// validation, inactive but registered tools, unknown tools. Denied and
// blocked calls never run: their marker files are absent.
func TestHostExecuteTool(t *testing.T) {
	adapter := writeCtxAdapter(t)
	steps, _ := json.Marshal([][]any{
		{"bash", map[string]string{"command": "touch denied-marker"}},
		{"bash", map[string]string{"command": "touch broker-ok-marker"}},
		{"write", map[string]string{"path": "hooked.txt", "content": "x"}},
		{"read", map[string]string{}},
		{"ls", map[string]string{"path": "."}},
		{"nope", map[string]string{}},
	})
	arg, _ := json.Marshal(map[string]any{"name": "nested", "arguments": map[string]string{"text": string(steps)}})
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter, "--trust"},
		Files: map[string]string{".ama/hooks.json": `{"version":1,"hooks":{
			"PreToolUse":[{"matcher":"write","hooks":[{"type":"command","command":"cat > pretool.json; echo 'no writing' >&2; exit 2"}]}]}}`},
		Script: turns(string(arg)),
	})
	promptToEnd(t, r)
	for _, f := range []string{"denied-marker", "hooked.txt"} {
		if _, err := os.Stat(filepath.Join(r.Work, f)); err == nil {
			t.Errorf("%s exists: a denied nested call ran", f)
		}
	}
	if _, err := os.Stat(filepath.Join(r.Work, "broker-ok-marker")); err != nil {
		t.Errorf("the nested call the broker allowed did not run: %v", err)
	}
	if in, _ := os.ReadFile(filepath.Join(r.Work, "pretool.json")); !bytes.Contains(in, []byte(`"toolCallId":"fake_call_0.3"`)) || !bytes.Contains(in, []byte(`"parentToolCallId":"fake_call_0"`)) {
		t.Errorf("PreToolUse input of the nested call: %s", in)
	}
	ends := toolEnds(r)
	lines := strings.Split(textOf(t, ends["fake_call_0"]), "\n---\n")
	wants := []string{"bash ERR Not run: this call needed approval", "bash OK", "write ERR no writing", "read ERR Invalid arguments for read",
		"ls OK ", "nope ERR Tool nope not found"}
	if len(lines) != len(wants) {
		t.Fatalf("nested results: %q", lines)
	}
	for i, w := range wants {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("nested call %d: %q, want prefix %q", i, lines[i], w)
		}
	}
	var out string
	for _, l := range r.Lines() {
		out += string(l) + "\n"
	}
	for _, want := range []string{
		`{"type":"tool_execution_start","toolCallId":"fake_call_0.1","toolName":"bash","args":{"command":"touch denied-marker"},"parentToolCallId":"fake_call_0"}`,
		`"toolCallId":"fake_call_0.6","toolName":"nope"`,
		`"context":{"toolCallId":"fake_call_0.1","parentToolCallId":"fake_call_0"}`,
		`"context":{"toolCallId":"fake_call_0.2","parentToolCallId":"fake_call_0"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	for id := range map[string]bool{"fake_call_0.1": true, "fake_call_0.3": true} {
		if e := ends[id]; !strings.Contains(e, `"parentToolCallId":"fake_call_0"`) || !strings.Contains(e, `"denied":true`) {
			t.Errorf("end of denied nested call %s: %s", id, e)
		}
	}
	if strings.Contains(out, `"context":{"toolCallId":"fake_call_0.3"`) {
		t.Errorf("a hook-denied call was asked")
	}
}

// textOf is the text of a tool_execution_end line's result.
func textOf(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Result.Content) == 0 {
		t.Fatalf("tool end %q: %v", line, err)
	}
	return m.Result.Content[0].Text
}

// ctx.session.appendCustom writes a custom entry; lastCustom sees the
// latest one on the branch (an earlier call's) and the call's own. Without
// the task tool there is no ctx.spawnSubagent.
func TestHostSessionCustom(t *testing.T) {
	adapter := writeCtxAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter},
		Script: turns(`{"name":"note","arguments":{"text":"a"}}`, `{"name":"note","arguments":{"text":"b"}}`, `{"name":"spawn","arguments":{"text":"x"}}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"st","type":"get_state"}`)
	r.WaitFor("state", 1, func(o *golden.Object) bool { return o.String("id") == "st" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	ends := toolEnds(r)
	if got := textOf(t, ends["#0"]); got != `prev=undefined now={"text":"a"}` {
		t.Errorf("first note: %s", got)
	}
	if got := textOf(t, ends["#1"]); got != `prev={"text":"a"} now={"text":"b"}` {
		t.Errorf("second note: %s", got)
	}
	if got := textOf(t, ends["#2"]); got != "no spawnSubagent" {
		t.Errorf("ctx.spawnSubagent offered without the task tool: %s", got)
	}
	var file string
	for _, l := range r.Lines() {
		var m struct {
			ID   string
			Data struct{ SessionFile string } `json:"data"`
		}
		if json.Unmarshal(l, &m) == nil && m.ID == "st" {
			file = m.Data.SessionFile
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("session file %q: %v", file, err)
	}
	for _, want := range []string{`"customType":"canvas.note","data":{"text":"a"}`, `"customType":"canvas.note","data":{"text":"b"}`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("session file lacks %s", want)
		}
	}
}

// ctx.spawnSubagent runs a sub-agent through the task machinery, linked to
// the host tool's call; its result comes back as a SubagentResult.
func TestHostSpawnSubagent(t *testing.T) {
	adapter := writeCtxAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--host", adapter, "--tools", "read,task,spawn"},
		UserConfig: []byte(`{"subagents":{"background":"never"}}`),
		Script: []byte(`{"version":1,"responses":[{"steps":[{"toolCall":{"name":"spawn","arguments":{"text":"look around"}}}]},` +
			`{"text":"child says hi"},{"text":"Done."}]}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" && o.String("sessionId") == "" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	var out string
	for _, l := range r.Lines() {
		out += string(l) + "\n"
	}
	got := textOf(t, toolEnds(r)["fake_call_0"])
	for _, want := range []string{`sub: {"text":"child says hi"`, `"stopReason":"stop"`, `"isError":false`, `"status":"completed"`, `"taskId":"t1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("spawnSubagent result %s lacks %s", got, want)
		}
	}
	if !strings.Contains(out, `"type":"subagent_start","taskId":"t1","parentToolCallId":"fake_call_0"`) {
		t.Errorf("subagent_start not linked to the host tool call:\n%s", out)
	}
}

// The signal an adapter gives executeTool aborts that nested call only:
// the command is stopped, the host tool goes on with an aborted result.
func TestHostExecuteToolSignal(t *testing.T) {
	adapter := writeCtxAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto"},
		Script: turns(`{"name":"nested_signal","arguments":{"text":"sleep 30"}}`),
	})
	promptToEnd(t, r)
	ends := toolEnds(r)
	if got := textOf(t, ends["#0"]); got != "ERR aborted by user" {
		t.Errorf("host tool result: %q", got)
	}
	if e := ends["fake_call_0.1"]; !strings.Contains(e, "aborted by user") {
		t.Errorf("nested end: %s", e)
	}
}

// Under ACP (the canvas's wire) a nested call's ask that the host broker
// passes on reaches the client as session/request_permission; the
// client's rejection means the command never runs.
func TestHostExecuteToolACP(t *testing.T) {
	adapter := writeCtxAdapter(t)
	steps, _ := json.Marshal([][]any{
		{"bash", map[string]string{"command": "touch rejected-marker"}},
		{"bash", map[string]string{"command": "touch broker-ok-marker"}},
	})
	arg, _ := json.Marshal(map[string]any{"name": "nested", "arguments": map[string]string{"text": string(steps)}})
	r := golden.Start(t, golden.Config{
		Args:   []string{"--mode", "acp", "--model", "fake/echo", "--host", adapter},
		Script: turns(string(arg)),
	})
	sid := acpNewSession(t, r)
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"go"}]}}`)
	n := r.WaitFor("request_permission", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
	line := r.Lines()[n]
	if !bytes.Contains(line, []byte("rejected-marker")) {
		t.Fatalf("the client was not asked about the nested call: %s", line)
	}
	acpAnswerPermission(r, n, "reject_once")
	r.WaitFor("prompt", 1, acpResponse("3"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	if _, err := os.Stat(filepath.Join(r.Work, "rejected-marker")); err == nil {
		t.Errorf("the nested call the client rejected ran")
	}
	if _, err := os.Stat(filepath.Join(r.Work, "broker-ok-marker")); err != nil {
		t.Errorf("the nested call the broker allowed did not run: %v", err)
	}
	all := string(bytes.Join(r.Lines(), []byte("\n")))
	if c := strings.Count(all, "session/request_permission"); c != 1 {
		t.Errorf("%d session/request_permission requests, want 1", c)
	}
}

// Two host tools of one reply run in parallel (read class), each with its
// own nested calls (ids and parents kept apart).
func TestHostExecuteToolParallel(t *testing.T) {
	adapter := writeCtxAdapter(t)
	call := func(id, file string) string {
		steps, _ := json.Marshal([][]any{{"write", map[string]string{"path": file, "content": id}}, {"read", map[string]string{"path": file}}})
		b, _ := json.Marshal(map[string]any{"name": "nested", "arguments": map[string]string{"text": string(steps)}})
		return string(b)
	}
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto"},
		Script: toolScript(call("one", "a.txt"), call("two", "b.txt")),
	})
	promptToEnd(t, r)
	ends := toolEnds(r)
	for i, want := range []string{"one", "two"} {
		got := textOf(t, ends["fake_call_"+strconv.Itoa(i)])
		if !strings.Contains(got, "write OK") || !strings.Contains(got, "read OK") || !strings.Contains(got, want) {
			t.Errorf("host tool %d: %q", i, got)
		}
	}
	for _, id := range []string{"fake_call_0.1", "fake_call_0.2", "fake_call_1.1", "fake_call_1.2"} {
		if e, parent := ends[id], id[:strings.LastIndexByte(id, '.')]; !strings.Contains(e, `"parentToolCallId":"`+parent+`"`) {
			t.Errorf("nested %s: %s", id, e)
		}
	}
}

// ctx.markRead records a read in the session: a nested edit of a file the
// session never read fails, after markRead it runs; ctx.readFiles of a
// later call has the file. ctx.thinkingLevel and ctx.activeTools are the
// session's.
func TestHostMarkRead(t *testing.T) {
	adapter := writeCtxAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto", "--thinking", "high"},
		Files:  map[string]string{"f.txt": "old text\n"},
		Script: turns(`{"name":"mark_edit","arguments":{"text":"f.txt"}}`, `{"name":"has_read","arguments":{"text":"f.txt"}}`, `{"name":"ctx_info","arguments":{}}`),
	})
	promptToEnd(t, r)
	ends := toolEnds(r)
	if got := textOf(t, ends["#0"]); got != "before ERR had false after OK" {
		t.Errorf("mark_edit: %s", got)
	}
	if got := textOf(t, ends["#1"]); got != "true" {
		t.Errorf("readFiles of a later call: %s", got)
	}
	if got := textOf(t, ends["#2"]); got != `{"thinkingLevel":"high","active":["ctx_info","read"]}` {
		t.Errorf("ctx.thinkingLevel / ctx.activeTools (ls is registered, not active): %s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Work, "f.txt")); string(data) != "new text\n" {
		t.Errorf("f.txt: %q", data)
	}
}

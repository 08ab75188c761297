package golden_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// canvasAdapter is the Armadra-shaped test adapter.
func canvasAdapter(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs Node.js")
	}
	p, err := filepath.Abs("../test/fixtures/host/canvas.cjs")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAdapter writes a host adapter's source to a temporary file (the
// test is skipped without Node.js) and returns its path.
func writeAdapter(t *testing.T, name, src string) string {
	t.Helper()
	canvasAdapter(t) // needs node
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func toolScript(calls ...string) []byte {
	var steps []string
	for _, c := range calls {
		steps = append(steps, `{"toolCall":`+c+`}`)
	}
	return []byte(`{"version":1,"responses":[{"steps":[` + strings.Join(steps, ",") + `]},{"text":"Done."}]}`)
}

func readTrace(t *testing.T, path string) []string {
	t.Helper()
	data, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func index(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

// The adapter's startup session_start is delivered (awaited) before hello;
// its instructions are the system prompt's host section after the cwd
// section in the first request, with its tools in the tool table; on exit
// session_shutdown is awaited before dispose.
func TestHostStartupPromptAndExit(t *testing.T) {
	adapter := canvasAdapter(t)
	dir := t.TempDir()
	trace, record := filepath.Join(dir, "trace"), filepath.Join(dir, "record.jsonl")
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter},
		Env:    map[string]string{"ARMADRA_NODE_ID": "n1", "CANVAS_TRACE": trace, "AMA_FAKE_RECORD": record},
		Script: toolScript(`{"name":"canvas_read_node","arguments":{"text":"a"}}`),
	})
	r.WaitFor("hello", 1, func(o *golden.Object) bool { return o.String("type") == "hello" })
	if lines := readTrace(t, trace); index(lines, "session_start ") != 0 {
		t.Fatalf("session_start not delivered before hello: %q", lines)
	}
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	lines := readTrace(t, trace)
	for _, want := range []string{"before_agent_start {\"prompt\":\"hi\"}", "agent_start {}", "tool_call ", "tool_result ", "agent_end ", "agent_settled "} {
		if index(lines, want) < 0 {
			t.Errorf("host did not see %s: %q", want, lines)
		}
	}
	if s, d := index(lines, "shutdown-done"), index(lines, "dispose"); s < 0 || d < 0 || s > d {
		t.Errorf("session_shutdown must finish before dispose: %q", lines)
	}
	if !strings.Contains(r.Stderr(), "ama: [host] canvas adapter warns once") || strings.Contains(r.Stderr(), "canvas adapter ready") {
		t.Errorf("log: warn goes to stderr, info is dropped:\n%s", r.Stderr())
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var req struct {
		System []string `json:"system"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(first, &req)
	all := string(first)
	cwd, host := strings.Index(all, "Current working directory:"), strings.Index(all, "You are a member of an Armadra canvas.")
	if cwd < 0 || host < 0 || host < cwd {
		t.Errorf("host section missing or before the cwd section:\n%s", first)
	}
	for _, want := range []string{`- canvas_send: post a message to a canvas node`, `- canvas_read_node: canvas verb read-node`,
		`- Wipe a canvas node only when the user asked for it.`} {
		if !strings.Contains(all, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	for _, n := range []string{"canvas_read_node", "canvas_send", "canvas_run_member", "canvas_wipe"} {
		if !strings.Contains(all, `"`+n+`"`) {
			t.Errorf("tool %s not offered in the first request", n)
		}
	}
}

// The run's abort reaches the tool's ctx.signal.
func TestHostToolAbort(t *testing.T) {
	adapter := canvasAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto"},
		Env:    map[string]string{"ARMADRA_NODE_ID": "n1"},
		Script: toolScript(`{"name":"canvas_run_member","arguments":{"text":"hang"}}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.WaitFor("update", 1, func(o *golden.Object) bool { return o.String("type") == "tool_execution_update" })
	r.Send(`{"id":"a","type":"abort"}`)
	r.WaitFor("end", 1, func(o *golden.Object) bool { return o.String("type") == "tool_execution_end" })
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	var end string
	for _, l := range r.Lines() {
		if bytes.Contains(l, []byte(`"tool_execution_end"`)) {
			end = string(l)
		}
	}
	if !strings.Contains(end, "aborted") {
		t.Errorf("tool end after abort: %s", end)
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A bridge that dies after startup is reported (notification and stderr);
// its tools answer errors and the session keeps working.
func TestHostBridgeCrash(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs Node.js")
	}
	dir := t.TempDir()
	adapter := filepath.Join(dir, "crash.cjs")
	_ = os.WriteFile(adapter, []byte(`module.exports = {hostApi: 1, create(api) {
  api.tools.register({name: "canvas_crash", permission: "read", description: "Crash.", parameters: {type: "object"}, execute() { process.exit(3) }});
  api.tools.register({name: "canvas_ok", permission: "read", description: "Ok.", parameters: {type: "object"}, execute: async () => ({content: "ok"})});
  return {id: "crashy"};
}};`), 0o644)
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter},
		Script: []byte(`{"version":1,"responses":[{"steps":[{"toolCall":{"name":"canvas_crash","arguments":{}}}]},{"steps":[{"toolCall":{"name":"canvas_ok","arguments":{}}}]},{"text":"Done."},
		{"steps":[{"toolCall":{"name":"read","arguments":{"path":"a.txt"}}}]},{"text":"still here"}]}`),
		Files: map[string]string{"a.txt": "alpha\n"},
	})
	r.Send(`{"id":"p","type":"prompt","message":"crash it"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.WaitFor("notification", 1, func(o *golden.Object) bool {
		return o.String("type") == "notification" && strings.Contains(o.String("message"), "crashy exited")
	})
	r.Send(`{"id":"p2","type":"prompt","message":"go on"}`)
	r.WaitFor("settled", 2, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	var ends []string
	for _, l := range r.Lines() {
		if bytes.Contains(l, []byte(`"tool_execution_end"`)) {
			ends = append(ends, string(l))
		}
	}
	if len(ends) != 3 || !strings.Contains(ends[0], `"isError":true`) || !strings.Contains(ends[1], "not running") || !strings.Contains(ends[2], "alpha") {
		t.Errorf("tool ends:\n%s", strings.Join(ends, "\n"))
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	if !strings.Contains(r.Stderr(), "ama: [error] host adapter crashy exited") {
		t.Errorf("stderr lacks the crash report:\n%s", r.Stderr())
	}
}

// The same adapter under --mode acp: host tools run, the broker answers a
// write ask without session/request_permission, an execute ask it passes
// on reaches the client as session/request_permission.
func TestHostACP(t *testing.T) {
	adapter := canvasAdapter(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	r := golden.Start(t, golden.Config{
		Args: []string{"--mode", "acp", "--model", "fake/echo", "--host", adapter},
		Env:  map[string]string{"ARMADRA_NODE_ID": "n1", "CANVAS_TRACE": trace},
		Script: toolScript(`{"name":"canvas_read_node","arguments":{"text":"a"}}`, `{"name":"canvas_send","arguments":{"text":"broker-allow"}}`,
			`{"name":"canvas_run_member","arguments":{"text":"ask the client"}}`),
	})
	sid := acpNewSession(t, r)
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"go"}]}}`)
	n := r.WaitFor("request_permission", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
	line := r.Lines()[n]
	if !bytes.Contains(line, []byte("canvas_run_member")) {
		t.Fatalf("the first permission request to the client is not the passed-on one: %s", line)
	}
	acpAnswerPermission(r, n, "allow_once")
	r.WaitFor("prompt", 1, acpResponse("3"))
	all := string(bytes.Join(r.Lines(), []byte("\n")))
	for _, want := range []string{"canvas_read_node ok: a", "canvas_send ok: broker-allow", "canvas_run_member ok: ask the client"} {
		if !strings.Contains(all, want) {
			t.Errorf("ACP transcript lacks %q", want)
		}
	}
	if c := strings.Count(all, "session/request_permission"); c != 1 {
		t.Errorf("%d session/request_permission requests, want 1 (the broker answered the other)", c)
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	lines := readTrace(t, trace)
	if index(lines, "session_start ") != 0 || index(lines, "tool_approval_resolved ") < 0 || index(lines, "dispose") < 0 {
		t.Errorf("host events under acp: %q", lines)
	}
}

// probeAdapter exposes the HostApi's view through a tool (canvas_probe)
// and exercises messages.sendUser: busy during create, queued while
// streaming, started when idle.
const probeAdapter = `"use strict";
const fs = require("fs");
module.exports = {hostApi: 1, create(api) {
  const note = (s) => fs.appendFileSync(api.env.PROBE_TRACE, s + "\n");
  api.messages.sendUser("too early").then((d) => note("create:" + d), (e) => note("create:" + e.code));
  api.tools.disable("grep");
  let envFrozen = false;
  try { api.env.X = "y"; envFrozen = api.env.X === undefined; } catch (e) { envFrozen = true; }
  api.tools.register({name: "canvas_probe", permission: "read", description: "Probe.", parameters: {type: "object"},
    execute: async () => ({content: JSON.stringify({version: api.version, agent: api.agent.name, mode: api.mode, envFrozen,
      node: api.env.PROBE_NODE, list: api.tools.list(), id: api.session.id(), cwd: api.session.cwd(), model: api.session.model()})})});
  api.tools.register({name: "canvas_steer", permission: "read", description: "Steer.", parameters: {type: "object"},
    execute: async () => { note("steer:" + await api.messages.sendUser("steered by host")); return {content: "steered"}; }});
  let sent = false;
  api.events.on("agent_settled", () => {
    if (sent) return;
    sent = true;
    return api.messages.sendUser("from host").then((d) => note("settled:" + d));
  });
  api.events.on("session_start", (p) => note("session_start " + p.reason + " " + p.sessionId + " now " + api.session.id()));
  return {id: "probe"};
}};`

func TestHostApiMembers(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs Node.js")
	}
	dir := t.TempDir()
	adapter, trace := filepath.Join(dir, "probe.cjs"), filepath.Join(dir, "trace")
	_ = os.WriteFile(adapter, []byte(probeAdapter), 0o644)
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--mode", "acp", "--host", adapter},
		Env:  map[string]string{"PROBE_TRACE": trace, "PROBE_NODE": "n7"},
	})
	r.CloseStdin()
	if code := r.Wait(); code != 0 { // api.mode is "rpc" under --mode acp as well (probed over rpc below)
		t.Fatalf("acp exit %d\n%s", code, r.Stderr())
	}
	r = golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter},
		Env:  map[string]string{"PROBE_TRACE": trace, "PROBE_NODE": "n7"},
		Script: []byte(`{"version":1,"responses":[{"steps":[{"toolCall":{"name":"canvas_probe","arguments":{}}},{"toolCall":{"name":"canvas_steer","arguments":{}}}]},
			{"text":"after steer"},{"text":"host run"},{"steps":[{"toolCall":{"name":"canvas_probe","arguments":{}}}]},{"text":"probed again"}]}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"probe"}`)
	r.WaitFor("two settled runs", 2, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"n","type":"new_session"}`)
	r.WaitFor("new session", 1, func(o *golden.Object) bool { return o.String("type") == "session_start" && o.String("reason") == "new" })
	r.Send(`{"id":"p2","type":"prompt","message":"probe again"}`)
	r.WaitFor("third settled run", 3, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	var probes []map[string]any
	all := string(bytes.Join(r.Lines(), []byte("\n")))
	for _, l := range r.Lines() {
		var m struct {
			Type     string `json:"type"`
			ToolName string `json:"toolName"`
			Result   struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(l, &m) == nil && m.Type == "tool_execution_end" && m.ToolName == "canvas_probe" {
			var p map[string]any
			_ = json.Unmarshal([]byte(m.Result.Content[0].Text), &p)
			probes = append(probes, p)
		}
	}
	if len(probes) != 2 {
		t.Fatalf("probes: %v\n%s", probes, all)
	}
	p := probes[0]
	if p["version"] != float64(1) || p["agent"] != "ama" || p["mode"] != "rpc" || p["envFrozen"] != true || p["node"] != "n7" {
		t.Errorf("api members: %v", p)
	}
	list, _ := json.Marshal(p["list"])
	if string(list) != `["bash","canvas_probe","canvas_steer","edit","glob","ls","read","todo","write"]` {
		t.Errorf("tools.list (grep disabled, sorted): %s", list)
	}
	if strings.Contains(all, `"name":"grep"`) {
		t.Errorf("disabled grep still declared")
	}
	if p["id"] == probes[1]["id"] || p["id"] == "" {
		t.Errorf("session.id does not follow new_session: %v then %v", p["id"], probes[1]["id"])
	}
	if m, _ := p["model"].(map[string]any); m["provider"] != "fake" || m["id"] != "echo" {
		t.Errorf("session.model: %v", p["model"])
	}
	lines := readTrace(t, trace)
	for _, want := range []string{"create:busy", "steer:queued", "settled:started"} {
		if index(lines, want) < 0 {
			t.Errorf("sendUser: no %s in %q", want, lines)
		}
	}
	if i := index(lines, "session_start new "); i < 0 || !strings.HasSuffix(lines[i], " now "+probes[1]["id"].(string)) {
		t.Errorf("session_start after new_session: %q (second id %v)", lines, probes[1]["id"])
	}
	marked := map[string]bool{}
	for _, l := range r.Lines() {
		for _, text := range []string{"from host", "steered by host"} {
			if bytes.Contains(l, []byte(`"role":"user","content":"`+text+`"`)) && bytes.Contains(l, []byte(`"origin":"host"`)) {
				marked[text] = true
			}
		}
	}
	if !marked["from host"] || !marked["steered by host"] {
		t.Errorf("host messages with origin host in the transcript: %v", marked)
	}
}

// Hooks apply to host tools as to built-in ones: a PreToolUse deny means
// the adapter's execute never runs (its marker file names only the tool
// that was allowed), PostToolUse context reaches the result; the adapter
// sees hook_executed for every hook, SessionStart and SessionEnd included.
func TestHostToolsUnderHooks(t *testing.T) {
	adapter := canvasAdapter(t)
	dir := t.TempDir()
	trace, mark := filepath.Join(dir, "trace"), filepath.Join(dir, "executed")
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter, "--trust"},
		Env:  map[string]string{"ARMADRA_NODE_ID": "n1", "CANVAS_TRACE": trace, "CANVAS_EXEC_MARK": mark, "CANVAS_HOOKS": "1"},
		Files: map[string]string{".ama/hooks.json": `{"version":1,"hooks":{
			"SessionStart":[{"hooks":[{"type":"command","command":"true"}]}],
			"PreToolUse":[{"matcher":"canvas_wipe","hooks":[{"type":"command","command":"cat > pretool.json; echo 'no wiping' >&2; exit 2"}]}],
			"PostToolUse":[{"matcher":"canvas_read_node","hooks":[{"type":"command","command":"echo '{\"additionalContext\":\"read checked\"}'"}]}],
			"SessionEnd":[{"hooks":[{"type":"command","command":"true"}]}]}}`},
		Script: toolScript(`{"name":"canvas_wipe","arguments":{"text":"all"}}`, `{"name":"canvas_read_node","arguments":{"text":"a"}}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	if got, _ := os.ReadFile(mark); string(got) != "canvas_read_node\n" {
		t.Fatalf("executed host tools: %q (canvas_wipe must never run)", got)
	}
	var wipe, read string
	for _, l := range r.Lines() {
		var m struct {
			Type, ToolName string
			Result         json.RawMessage
		}
		if json.Unmarshal(l, &m) == nil && m.Type == "tool_execution_end" {
			switch m.ToolName {
			case "canvas_wipe":
				wipe = string(m.Result)
			case "canvas_read_node":
				read = string(m.Result)
			}
		}
	}
	if !strings.Contains(wipe, "no wiping") || !strings.Contains(wipe, `"isError":true`) {
		t.Errorf("denied host tool result: %s", wipe)
	}
	if !strings.Contains(read, "read checked") {
		t.Errorf("PostToolUse context missing from the host tool result: %s", read)
	}
	in, _ := os.ReadFile(filepath.Join(r.Work, "pretool.json"))
	if !bytes.Contains(in, []byte(`"host":"armadra-test"`)) || !bytes.Contains(in, []byte(`"toolName":"canvas_wipe"`)) {
		t.Errorf("PreToolUse input: %s", in)
	}
	lines := readTrace(t, trace)
	for _, ev := range []string{"SessionStart", "PreToolUse", "PostToolUse", "SessionEnd"} {
		if index(lines, `hook_executed {"event":"`+ev+`","command":`) < 0 {
			t.Errorf("host did not see hook_executed for %s: %q", ev, lines)
		}
	}
	if i := index(lines, `hook_executed {"event":"PreToolUse","command":"cat > pretool.json; echo 'no wiping' >&2; exit 2","exitCode":2,`); i < 0 {
		t.Errorf("PreToolUse hook_executed payload: %q", lines)
	}
}

// task(agent=X) runs on the host runner X (runners.provide): the runner
// gets the SubagentRunRequest over the bridge's runner.start, its events
// and result come back, get_agents lists it with source "host".
func TestHostRunnerTask(t *testing.T) {
	canvasAdapter(t) // needs node
	dir := t.TempDir()
	seen := filepath.Join(dir, "request.json")
	adapter := filepath.Join(dir, "runner.cjs")
	if err := os.WriteFile(adapter, []byte(`const fs = require("fs");
module.exports = { hostApi: 1, create(api) {
  api.runners.provide({ id: "canvas-agent", description: "An agent on a canvas node", async start(req) {
    fs.writeFileSync(`+"`"+seen+"`"+`, JSON.stringify({ prompt: req.prompt, cwd: req.cwd, mode: req.mode, taskId: req.taskId, signal: typeof req.signal }));
    req.onEvent({ type: "turn", turn: 1 });
    req.onEvent({ type: "text", delta: "painting " });
    return { id: "node-7", send() {}, stop() {}, async wait() {
      req.onEvent({ type: "tool", toolName: "canvas_paint", status: "started" });
      return { text: "canvas did: " + req.prompt, usage: { input: 5, output: 3 }, stopReason: "stop", isError: false };
    } };
  } });
  return { id: "runner-host" };
} };
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := golden.Start(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--host", adapter, "--tools", "read,task", "--allow", "task"},
		UserConfig: []byte(`{"subagents":{"background":"never"}}`),
		Script: []byte(`{"version":1,"responses":[{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"paint it","agent":"canvas-agent","description":"paint"}}}]},` +
			`{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"hi","agent":"acp:ama","description":"external"}}}]},{"text":"Done."}]}`),
	})
	r.Send(`{"id":"ag","type":"get_agents"}`)
	r.WaitFor("agents", 1, func(o *golden.Object) bool { return o.String("id") == "ag" })
	r.Send(`{"id":"tl","type":"get_tools"}`)
	r.WaitFor("tools", 1, func(o *golden.Object) bool { return o.String("id") == "tl" })
	promptToEnd(t, r)
	var out string
	for _, l := range r.Lines() {
		out += string(l) + "\n"
	}
	for _, want := range []string{
		`{"name":"canvas-agent","description":"An agent on a canvas node","runner":"canvas-agent","source":"host"}`,
		`"type":"subagent_start","taskId":"t1","parentToolCallId":"fake_call_0","agent":"canvas-agent","runner":"canvas-agent"`,
		`"type":"subagent_update","taskId":"t1","kind":"turn","turn":1`,
		`"kind":"tool","toolName":"canvas_paint"`,
		`[task t1] canvas did: paint it`,
		// Hosted mode: no external CLI is spawned (no first-run ask either).
		`external agents are provided by the host, and it provides no runner acp:ama`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, `"type":"permission_request"`) {
		t.Errorf("a permission was asked:\n%s", out)
	}
	if n := strings.Count(out, `{"name":"canvas-agent",`); n != 1 {
		t.Errorf("get_agents lists the runner %d times", n)
	}
	// Provided during create(): described in the task tool like a type.
	if !strings.Contains(out, `- canvas-agent: An agent on a canvas node`) {
		t.Errorf("the task tool does not describe the host runner:\n%s", out)
	}
	var req map[string]string
	data, _ := os.ReadFile(seen)
	if err := json.Unmarshal(data, &req); err != nil || req["prompt"] != "paint it" || req["mode"] != "default" || req["taskId"] != "t1" || req["cwd"] != r.Work || req["signal"] != "object" {
		t.Fatalf("runner request %s: %v", data, err)
	}
}

// The session file exists from the first model request on: a host tool
// of the first run sees it as api.session.file() and ctx.sessionFile, and
// the adapter's session_start trace of a later switch is not needed for it
// (issue 29: a canvas node's first report carried no transcriptPath).
func TestHostSessionFileInFirstRun(t *testing.T) {
	adapter := writeAdapter(t, "where.cjs", `module.exports = {hostApi: 1, create(api) {
  api.tools.register({name: "host_where", description: "where", permission: "read",
    parameters: {type: "object", properties: {}},
    async execute(input, ctx) { return {content: "api=" + api.session.file() + " ctx=" + ctx.sessionFile}; }});
  return {id: "where"};
}};`)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter},
		Script: toolScript(`{"name":"host_where","arguments":{}}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"where am I"}`)
	r.WaitFor("agent_settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"s","type":"get_state"}`)
	i := r.WaitFor("get_state", 1, func(o *golden.Object) bool { return o.String("id") == "s" })
	st, _ := golden.Parse(r.Lines()[i])
	file := st.(*golden.Object).Values["data"].(*golden.Object).String("sessionFile")
	if file == "" {
		t.Fatalf("no session file after the first run: %s", r.Lines()[i])
	}
	want := "api=" + file + " ctx=" + file
	var got string
	for _, l := range r.Lines() {
		if bytes.Contains(l, []byte(`"tool_execution_end"`)) {
			got = string(l)
		}
	}
	if !strings.Contains(got, want) {
		t.Errorf("the host tool of the first run sees %s, want %q", got, want)
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Over ACP a host adapter's notifications are _ama/notice notifications;
// the ones sent before any session exists (from create() and the startup
// session_start handler) are queued and sent once the first session is
// opened, after its answer (issue 29: nothing announced is lost).
func TestHostEarlyNoticesOverACP(t *testing.T) {
	adapter := writeAdapter(t, "early.cjs", `module.exports = {hostApi: 1, create(api) {
  api.ui.notify("from create", "warn");
  api.events.on("session_start", (p) => api.ui.notify("session_start " + p.reason));
  return {id: "early"};
}};`)
	r := golden.Start(t, golden.Config{Args: []string{"--mode", "acp", "--model", "fake/echo", "--host", adapter}})
	sid := acpNewSession(t, r)
	r.WaitFor("two notices", 2, func(o *golden.Object) bool { return o.String("method") == "_ama/notice" })
	answered := -1
	var notices []string
	for i, l := range r.Lines() {
		if acpResponse("2")(mustObject(t, l)) {
			answered = i
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID, Level, Message string
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) == nil && m.Method == "_ama/notice" {
			if answered < 0 || m.Params.SessionID != sid {
				t.Errorf("notice before the session/new answer or for another session: %s", l)
			}
			notices = append(notices, m.Params.Level+" "+m.Params.Message)
		}
	}
	if strings.Join(notices, "|") != "warn from create|info session_start startup" {
		t.Errorf("notices %q", notices)
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func mustObject(t *testing.T, line []byte) *golden.Object {
	t.Helper()
	v, err := golden.Parse(line)
	if err != nil {
		t.Fatalf("not JSON: %s", line)
	}
	o, _ := v.(*golden.Object)
	if o == nil {
		return &golden.Object{Values: map[string]golden.Value{}}
	}
	return o
}

// At the end of input over ACP the running turn finishes and the host's
// notice from its agent_settled handler (sent after a pause) still goes
// out before the connection closes.
func TestHostSettledNoticeAfterEOFOverACP(t *testing.T) {
	adapter := writeAdapter(t, "settled.cjs", `module.exports = {hostApi: 1, create(api) {
  api.events.on("agent_settled", async () => { await new Promise((r) => setTimeout(r, 150)); api.ui.notify("settled"); });
  return {id: "settled"};
}};`)
	r := golden.Start(t, golden.Config{Args: []string{"--mode", "acp", "--model", "fake/echo", "--host", adapter}})
	sid := acpNewSession(t, r)
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`)
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	found := false
	for _, l := range r.Lines() {
		found = found || (strings.Contains(string(l), `"method":"_ama/notice"`) && strings.Contains(string(l), `"message":"settled"`))
	}
	if !found {
		t.Errorf("the notice of the agent_settled handler was lost:\n%s", bytes.Join(r.Lines(), []byte("\n")))
	}
}

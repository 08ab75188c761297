package agents

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The fake external CLIs: the test binary re-executed through a script on
// PATH (AGENTS_FAKE_CLI names the protocol). They speak the message shapes
// the drivers cite (Claude stream-json with the SDK control protocol;
// Codex app-server JSON-RPC without the jsonrpc member), record what they
// receive in FAKE_DIR, and perform their tool's side effect (creating
// FAKE_DIR/marker) only when the approval they asked for was granted.

func TestMain(m *testing.M) {
	switch os.Getenv("AGENTS_FAKE_CLI") {
	case "claude":
		fakeClaude()
		os.Exit(0)
	case "codex":
		fakeCodex()
		os.Exit(0)
	case "acp":
		fakeACP()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// installFakeCLI puts program on PATH as the fake of protocol and returns
// the directory the fake records into.
func installFakeCLI(t *testing.T, program, protocol, scenario string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	rec := filepath.Join(dir, "rec")
	if err := os.MkdirAll(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeBin(t, bin, program, fmt.Sprintf("AGENTS_FAKE_CLI=%s FAKE_DIR='%s' FAKE_SCENARIO=%s exec '%s' \"$@\"", protocol, rec, scenario, self))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return rec
}

// fakeIO is the fake's stdio: lines in, lines out, a record file.
type fakeIO struct {
	in  *bufio.Scanner
	out *bufio.Writer
	mu  sync.Mutex
	dir string
}

func newFakeIO() *fakeIO {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &fakeIO{in: sc, out: bufio.NewWriter(os.Stdout), dir: os.Getenv("FAKE_DIR")}
}

func (f *fakeIO) send(v any) {
	b, _ := json.Marshal(v)
	f.mu.Lock()
	f.out.Write(append(b, '\n'))
	f.out.Flush()
	f.mu.Unlock()
}

// next reads the next line as a map (nil at EOF).
func (f *fakeIO) next() map[string]any {
	for f.in.Scan() {
		var m map[string]any
		if json.Unmarshal(f.in.Bytes(), &m) == nil {
			f.record("in", f.in.Text())
			return m
		}
	}
	return nil
}

func (f *fakeIO) record(name, line string) {
	fh, err := os.OpenFile(filepath.Join(f.dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(fh, line)
		fh.Close()
	}
}

func (f *fakeIO) marker() string { return filepath.Join(f.dir, "marker") }

func fakeArgs(f *fakeIO) (help, version bool) {
	if len(os.Args) < 2 || (os.Args[1] != "--help" && os.Args[1] != "--version") {
		f.record("starts", fmt.Sprint(os.Getpid())) // one line per started session process
	}
	for _, a := range os.Args[1:] {
		f.record("argv", a)
		switch a {
		case "--help":
			help = true
		case "--version":
			version = true
		}
	}
	return help, version
}

// fakeClaude speaks stream-json.
func fakeClaude() {
	f := newFakeIO()
	help, version := fakeArgs(f)
	switch {
	case help:
		fmt.Println(`--permission-mode <mode>  (choices: "acceptEdits", "auto", "default", "manual", "plan")`)
		return
	case version:
		fmt.Println("2.1.7 (Claude Code)")
		return
	}
	session := ""
	for i, a := range os.Args {
		if (a == "--session-id" || a == "--resume") && i+1 < len(os.Args) {
			session = os.Args[i+1]
		}
	}
	scenario := os.Getenv("FAKE_SCENARIO")
	cost := 0.0
	for {
		m := f.next()
		if m == nil {
			return
		}
		switch m["type"] {
		case "control_request":
			req, _ := m["request"].(map[string]any)
			f.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m["request_id"], "response": map[string]any{}}})
			if req["subtype"] == "interrupt" {
				f.record("interrupted", "yes")
				f.send(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "session_id": session})
			}
		case "user":
			f.send(map[string]any{"type": "system", "subtype": "init", "session_id": session})
			if scenario == "hang" {
				f.send(map[string]any{"type": "stream_event", "parent_tool_use_id": nil, "event": map[string]any{"type": "content_block_delta", "delta": map[string]any{"type": "text_delta", "text": "working"}}})
				continue // until interrupted
			}
			tool, input := "Bash", map[string]any{"command": "touch " + f.marker()}
			if scenario == "question" {
				tool, input = "AskUserQuestion", map[string]any{"questions": []any{"which?"}}
			}
			f.send(map[string]any{"type": "stream_event", "parent_tool_use_id": nil, "event": map[string]any{"type": "content_block_delta", "delta": map[string]any{"type": "text_delta", "text": "checking. "}}})
			f.send(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "checking. "},
				map[string]any{"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}}}})
			f.send(map[string]any{"type": "control_request", "request_id": "cli-1", "request": map[string]any{"subtype": "can_use_tool", "tool_name": tool, "input": input, "tool_use_id": "toolu_1"}})
			var resp map[string]any
			for resp == nil {
				r := f.next()
				if r == nil {
					return
				}
				if r["type"] == "control_response" {
					body, _ := r["response"].(map[string]any)
					if body["request_id"] == "cli-1" {
						resp, _ = body["response"].(map[string]any)
					}
				}
			}
			allowed := resp["behavior"] == "allow"
			if allowed && tool == "Bash" {
				os.WriteFile(f.marker(), []byte("ran"), 0o644)
			}
			f.send(map[string]any{"type": "user", "parent_tool_use_id": nil, "message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": !allowed, "content": "x"}}}})
			f.send(map[string]any{"type": "stream_event", "parent_tool_use_id": nil, "event": map[string]any{"type": "content_block_delta", "delta": map[string]any{"type": "text_delta", "text": "done"}}})
			f.send(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "done"}}}})
			cost += 0.0123
			f.send(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "checking. done", "session_id": session,
				"total_cost_usd": cost, "usage": map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 30}})
		}
	}
}

// fakeCodex speaks the app-server protocol.
func fakeCodex() {
	f := newFakeIO()
	if _, version := fakeArgs(f); version {
		fmt.Println("codex-cli 0.165.0")
		return
	}
	f.record("env", "FOO_API_KEY="+os.Getenv("FOO_API_KEY"))
	scenario := os.Getenv("FAKE_SCENARIO")
	reply := func(id any, result any) { f.send(map[string]any{"id": id, "result": result}) }
	notify := func(method string, params any) { f.send(map[string]any{"method": method, "params": params}) }
	thread := "thr_1"
	for {
		m := f.next()
		if m == nil {
			return
		}
		if _, ok := m["jsonrpc"]; ok {
			f.record("errors", "a message carried the jsonrpc member")
		}
		params, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "initialize":
			reply(m["id"], map[string]any{"userAgent": "fake-codex"})
		case "thread/start":
			reply(m["id"], map[string]any{"thread": map[string]any{"id": thread}})
		case "thread/resume":
			if params["threadId"] != thread {
				f.send(map[string]any{"id": m["id"], "error": map[string]any{"code": -32600, "message": "no such thread"}})
				continue
			}
			reply(m["id"], map[string]any{"thread": map[string]any{"id": thread}})
		case "turn/interrupt":
			f.record("interrupted", "yes")
			reply(m["id"], map[string]any{})
			notify("turn/completed", map[string]any{"threadId": thread, "turn": map[string]any{"id": "turn_1", "status": "interrupted", "items": []any{}}})
		case "turn/start":
			reply(m["id"], map[string]any{"turn": map[string]any{"id": "turn_1", "status": "inProgress", "items": []any{}}})
			notify("turn/started", map[string]any{"threadId": thread, "turn": map[string]any{"id": "turn_1", "status": "inProgress", "items": []any{}}})
			if scenario == "hang" {
				notify("item/agentMessage/delta", map[string]any{"threadId": thread, "turnId": "turn_1", "itemId": "msg_0", "delta": "working"})
				continue
			}
			cmd := "touch " + f.marker()
			notify("item/started", map[string]any{"threadId": thread, "turnId": "turn_1", "item": map[string]any{"id": "item_1", "type": "commandExecution", "command": cmd, "cwd": "/w", "status": "inProgress"}})
			f.send(map[string]any{"id": 100, "method": "item/commandExecution/requestApproval", "params": map[string]any{
				"itemId": "item_1", "threadId": thread, "turnId": "turn_1", "command": cmd, "cwd": "/w", "reason": "writes a file"}})
			var decision any
			for decision == nil {
				r := f.next()
				if r == nil {
					return
				}
				if id, ok := r["id"].(float64); ok && id == 100 && r["method"] == nil {
					res, _ := r["result"].(map[string]any)
					decision = res["decision"]
				}
			}
			status := "declined"
			if decision == "accept" || decision == "acceptForSession" {
				os.WriteFile(f.marker(), []byte("ran"), 0o644)
				status = "completed"
			}
			notify("item/completed", map[string]any{"threadId": thread, "turnId": "turn_1", "item": map[string]any{"id": "item_1", "type": "commandExecution", "command": cmd, "status": status}})
			notify("item/agentMessage/delta", map[string]any{"threadId": thread, "turnId": "turn_1", "itemId": "msg_1", "delta": "ran"})
			notify("item/completed", map[string]any{"threadId": thread, "turnId": "turn_1", "item": map[string]any{"id": "msg_1", "type": "agentMessage", "text": "ran it"}})
			notify("thread/tokenUsage/updated", map[string]any{"threadId": thread, "turnId": "turn_1", "tokenUsage": map[string]any{
				"total": map[string]any{"totalTokens": 150, "inputTokens": 100, "cachedInputTokens": 40, "outputTokens": 10}, "modelContextWindow": 200000}})
			notify("turn/completed", map[string]any{"threadId": thread, "turn": map[string]any{"id": "turn_1", "status": "completed", "items": []any{}}})
		}
	}
}

func readRec(dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return string(b)
}

func recLines(dir, name string) []string {
	return strings.Split(strings.TrimSpace(readRec(dir, name)), "\n")
}

// fakeACP is an ACP agent without session modes; a prompt creates the
// marker.
func fakeACP() {
	f := newFakeIO()
	fakeArgs(f)
	for {
		m := f.next()
		if m == nil {
			return
		}
		res := map[string]any{}
		switch m["method"] {
		case "initialize":
			res = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}}
		case "session/new":
			res = map[string]any{"sessionId": "s1"}
		case "session/prompt":
			os.WriteFile(f.marker(), []byte("ran"), 0o644)
			res = map[string]any{"stopReason": "end_turn"}
		}
		if m["id"] != nil {
			f.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": res})
		}
	}
}

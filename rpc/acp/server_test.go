package acp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client drives an in-process `ama-rpc --mode acp` through golden.Run.
type client struct {
	t *testing.T
	r *golden.Run
}

func startACP(t *testing.T, script string, args ...string) *client {
	t.Helper()
	cfg := golden.Config{Args: append([]string{"--mode", "acp", "--model", "fake/echo"}, args...)}
	if script != "" {
		cfg.Script = []byte(script)
	}
	return &client{t: t, r: golden.Start(t, cfg)}
}

func (c *client) send(id any, method string, params any) {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.r.Send(string(b))
}

// response waits for the response with id and returns it.
func (c *client) response(id any) *golden.Object {
	c.t.Helper()
	want, _ := json.Marshal(id)
	i := c.r.WaitFor(fmt.Sprintf("response %s", want), 1, func(o *golden.Object) bool { return isResponse(o) && idIs(o, string(want)) })
	v, _ := golden.Parse(c.r.Lines()[i])
	return v.(*golden.Object)
}

// call sends a request and returns its result (failing on an error).
func (c *client) call(id any, method string, params any) *golden.Object {
	c.t.Helper()
	c.send(id, method, params)
	res := c.response(id)
	r, ok := res.Get("result")
	if !ok {
		c.t.Fatalf("%s failed: %s", method, golden.Encode(res))
	}
	o, _ := r.(*golden.Object)
	return o
}

// callErr sends a request that must fail and returns the error code.
func (c *client) callErr(id any, method string, params any) int64 {
	c.t.Helper()
	c.send(id, method, params)
	res := c.response(id)
	e, ok := res.Get("error")
	if !ok {
		c.t.Fatalf("%s succeeded: %s", method, golden.Encode(res))
	}
	var code int64
	_ = json.Unmarshal(golden.Encode(e.(*golden.Object).Values["code"]), &code)
	return code
}

func (c *client) initialize() {
	c.t.Helper()
	c.call(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
}

func (c *client) newSession() string {
	c.t.Helper()
	return c.call("new", "session/new", map[string]any{"cwd": c.r.Work, "mcpServers": []any{}}).String("sessionId")
}

// waitUpdate waits for the n-th session/update matching pred.
func (c *client) waitUpdate(desc string, n int, pred func(u *golden.Object) bool) int {
	c.t.Helper()
	return c.r.WaitFor(desc, n, func(o *golden.Object) bool {
		if o.String("method") != "session/update" {
			return false
		}
		u, _ := o.Values["params"].(*golden.Object).Values["update"].(*golden.Object)
		return u != nil && pred(u)
	})
}

func kindIs(kind string) func(*golden.Object) bool {
	return func(u *golden.Object) bool { return u.String("sessionUpdate") == kind }
}

// finish closes stdin and checks the exit code and that every line is a
// JSON-RPC 2.0 message.
func (c *client) finish(code int) {
	c.t.Helper()
	c.r.CloseStdin()
	if got := c.r.Wait(); got != code {
		c.t.Fatalf("exit %d, want %d; stderr:\n%s", got, code, c.r.Stderr())
	}
	c.checkLines()
}

func (c *client) checkLines() {
	c.t.Helper()
	for i, l := range c.r.Lines() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			c.t.Fatalf("stdout line %d is not a JSON-RPC 2.0 message: %q", i+1, l)
		}
	}
}

func (c *client) stopReason(id any) string {
	c.t.Helper()
	res := c.response(id)
	r, ok := res.Get("result")
	if !ok {
		c.t.Fatalf("prompt %v failed: %s", id, golden.Encode(res))
	}
	return r.(*golden.Object).String("stopReason")
}

func prompt(sid, text string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

func TestInitializeThenEOF(t *testing.T) {
	c := startACP(t, "")
	res := c.call(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": map[string]any{}, "unknown": true}})
	if string(golden.Encode(res.Values["protocolVersion"])) != "1" {
		t.Fatalf("protocolVersion %s", golden.Encode(res))
	}
	c.finish(0)
	if n := len(c.r.Lines()); n != 1 {
		t.Fatalf("%d output lines, want 1", n)
	}
}

func TestErrors(t *testing.T) {
	c := startACP(t, "")
	// Requests before initialize are served.
	sid := c.newSession()
	c.initialize()
	other := t.TempDir()
	cases := []struct {
		method string
		params any
		code   int64
	}{
		{"session/delete", map[string]any{"sessionId": sid}, -32601},
		{"logout", nil, -32601},
		{"fs/read_text_file", nil, -32601},
		{"authenticate", map[string]any{"methodId": "x"}, -32602},
		{"session/new", map[string]any{"cwd": "relative", "mcpServers": []any{}}, -32602},
		{"session/new", map[string]any{"cwd": other, "mcpServers": []any{}}, -32602},
		{"session/new", map[string]any{"cwd": 7}, -32602},
		{"session/prompt", prompt("nope", "hi"), -32002},
		{"session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}}, -32602},
		{"session/prompt", map[string]any{"sessionId": sid, "prompt": []any{}}, -32602},
		{"session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}, -32602},
		{"session/set_mode", map[string]any{"sessionId": "nope", "modeId": "plan"}, -32002},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "colour", "value": "red"}, -32602},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "fake/nope"}, -32602},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "nope"}, -32602},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "thinking", "value": "high"}, -32602},
		{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": true}, -32602},
		{"session/close", map[string]any{"sessionId": "nope"}, -32002},
		{"session/load", map[string]any{"sessionId": "00000000-0000-4000-8000-00000000ffff", "cwd": c.r.Work, "mcpServers": []any{}}, -32002},
		{"session/resume", map[string]any{"sessionId": "../x", "cwd": c.r.Work}, -32602},
		{"session/resume", map[string]any{"sessionId": sid, "cwd": other}, -32602},
		{"session/list", map[string]any{"cursor": "%%%"}, -32602},
	}
	for i, tc := range cases {
		if code := c.callErr(100+i, tc.method, tc.params); code != tc.code {
			t.Errorf("%s %v: code %d, want %d", tc.method, tc.params, code, tc.code)
		}
	}
	// Unknown and malformed notifications are ignored.
	c.send(nil, "something/else", map[string]any{})
	c.send(nil, "session/cancel", map[string]any{"sessionId": "nope"})
	c.send(nil, "$/cancel_request", map[string]any{"requestId": 12345})
	c.r.Send(`{"jsonrpc":"2.0","method":"session/cancel","params":"x"}`)
	// Another cwd lists nothing; the start dir lists the session made by
	// session/new (its file is written when it is created).
	if got := string(golden.Encode(c.call("list-other", "session/list", map[string]any{"cwd": other}))); got != `{"sessions":[]}` {
		t.Errorf("list %s: %s", other, got)
	}
	if got := string(golden.Encode(c.call("list-work", "session/list", map[string]any{"cwd": c.r.Work}))); !strings.Contains(got, `"sessionId":"`) {
		t.Errorf("list %s: %s", c.r.Work, got)
	}
	c.finish(0)
}

func TestStartupSessionID(t *testing.T) {
	const id = "0b5e7c2e-1111-4222-8333-444455556666"
	c := startACP(t, "", "--session-id", id)
	c.initialize()
	if got := c.newSession(); got != id {
		t.Fatalf("first session/new = %s, want the startup id %s", got, id)
	}
	if got := c.call("new2", "session/new", map[string]any{"cwd": c.r.Work, "mcpServers": []any{}}).String("sessionId"); got == id || got == "" {
		t.Fatalf("second session/new = %q", got)
	}
	c.finish(0)
}

const slowScript = `{"version":1,"responses":[{"steps":[{"text":"working"},{"delayMs":600000},{"text":" never"}]}]}`

func TestCancelQueueAndWithdraw(t *testing.T) {
	c := startACP(t, slowScript)
	c.initialize()
	sid := c.newSession()
	c.send(10, "session/prompt", prompt(sid, "first"))
	c.waitUpdate("the first chunk", 1, kindIs("agent_message_chunk"))
	c.send(11, "session/prompt", prompt(sid, "second"))
	c.send(12, "session/prompt", prompt(sid, "third"))
	// Withdrawing a queued prompt answers it -32800 at once.
	c.send(nil, "$/cancel_request", map[string]any{"requestId": 11})
	res := c.response(11)
	if got := string(golden.Encode(res.Values["error"].(*golden.Object).Values["code"])); got != "-32800" {
		t.Fatalf("withdrawn prompt: %s", golden.Encode(res))
	}
	c.send(nil, "session/cancel", map[string]any{"sessionId": sid})
	if got := c.stopReason(12); got != "cancelled" {
		t.Errorf("queued prompt: %s", got)
	}
	if got := c.stopReason(10); got != "cancelled" {
		t.Errorf("running prompt: %s", got)
	}
	// The session goes on: the next prompt echoes (script exhausted).
	c.send(13, "session/prompt", prompt(sid, "again"))
	if got := c.stopReason(13); got != "end_turn" {
		t.Errorf("after cancel: %s", got)
	}
	c.finish(0)
}

func TestWithdrawRunningPrompt(t *testing.T) {
	c := startACP(t, slowScript)
	c.initialize()
	sid := c.newSession()
	c.send("p", "session/prompt", prompt(sid, "first"))
	c.waitUpdate("the first chunk", 1, kindIs("agent_message_chunk"))
	c.send(nil, "$/cancel_request", map[string]any{"requestId": "p"})
	res := c.response("p")
	if got := string(golden.Encode(res.Values["error"].(*golden.Object).Values["code"])); got != "-32800" {
		t.Fatalf("withdrawn prompt: %s", golden.Encode(res))
	}
	c.finish(0)
}

func TestPromptsRunInOrder(t *testing.T) {
	c := startACP(t, `{"version":1,"responses":[{"text":"one"},{"text":"two"},{"text":"three"}]}`)
	c.initialize()
	sid := c.newSession()
	for i := 1; i <= 3; i++ {
		c.send(i, "session/prompt", prompt(sid, fmt.Sprint(i)))
	}
	var order []string
	last := -1
	for i := 1; i <= 3; i++ {
		if got := c.stopReason(i); got != "end_turn" {
			t.Fatalf("prompt %d: %s", i, got)
		}
	}
	for i, l := range c.r.Lines() {
		v, _ := golden.Parse(l)
		o := v.(*golden.Object)
		if isResponse(o) {
			if id := string(golden.Encode(o.Values["id"])); id == "1" || id == "2" || id == "3" {
				order = append(order, "r"+id)
				if i < last {
					t.Fatal("out of order")
				}
				last = i
			}
			continue
		}
		if p, ok := o.Values["params"].(*golden.Object); ok {
			if u, ok := p.Values["update"].(*golden.Object); ok && u.String("sessionUpdate") == "agent_message_chunk" {
				order = append(order, u.Values["content"].(*golden.Object).String("text"))
			}
		}
	}
	if got := strings.Join(order, " "); got != "one r1 two r2 three r3" {
		t.Errorf("order: %s", got)
	}
	c.finish(0)
}

func TestEOFDuringTurnFinishesIt(t *testing.T) {
	c := startACP(t, `{"version":1,"responses":[{"steps":[{"text":"a"},{"delayMs":300},{"text":"b"}]}]}`)
	c.initialize()
	sid := c.newSession()
	c.send(1, "session/prompt", prompt(sid, "go"))
	c.waitUpdate("the first chunk", 1, kindIs("agent_message_chunk"))
	c.finish(0)
	if got := c.stopReason(1); got != "end_turn" {
		t.Fatalf("stop reason %s", got)
	}
}

func TestSignalDuringTurn(t *testing.T) {
	c := startACP(t, slowScript)
	c.initialize()
	sid := c.newSession()
	c.send(1, "session/prompt", prompt(sid, "go"))
	c.waitUpdate("the first chunk", 1, kindIs("agent_message_chunk"))
	c.r.Interrupt(app.SignalError{Signal: syscall.SIGTERM})
	if got := c.stopReason(1); got != "cancelled" {
		t.Fatalf("stop reason %s", got)
	}
	if code := c.r.Wait(); code != 143 {
		t.Fatalf("exit %d, want 143", code)
	}
	c.checkLines()
	c.r.CloseStdin()
}

const writeScript = `{"version":1,"responses":[
	{"steps":[{"toolCall":{"id":"w1","name":"write","arguments":{"path":"out.txt","content":"x"}}}]},
	{"text":"after"}]}`

func TestPermissionWithdrawnAtEOF(t *testing.T) {
	c := startACP(t, writeScript)
	c.initialize()
	sid := c.newSession()
	c.send(1, "session/prompt", prompt(sid, "write it"))
	i := c.r.WaitFor("session/request_permission", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
	v, _ := golden.Parse(c.r.Lines()[i])
	reqID := string(golden.Encode(v.(*golden.Object).Values["id"]))
	if reqID != "1" {
		t.Errorf("our first request id is %s, want 1", reqID)
	}
	c.finish(0)
	if got := c.stopReason(1); got != "end_turn" {
		t.Fatalf("stop reason %s", got)
	}
	c.r.WaitFor("$/cancel_request", 1, func(o *golden.Object) bool {
		p, _ := o.Values["params"].(*golden.Object)
		return o.String("method") == "$/cancel_request" && p != nil && string(golden.Encode(p.Values["requestId"])) == reqID
	})
	if _, err := os.Stat(filepath.Join(c.r.Work, "out.txt")); err == nil {
		t.Fatal("the write ran without approval")
	}
}

func TestPermissionAnswers(t *testing.T) {
	for _, tc := range []struct {
		answer string
		status string
		file   bool
	}{
		{`{"outcome":{"outcome":"selected","optionId":"allow_once"}}`, "completed", true},
		{`{"outcome":{"outcome":"selected","optionId":"allow_always"}}`, "completed", true},
		{`{"outcome":{"outcome":"selected","optionId":"reject_once"}}`, "failed", false},
		{`{"outcome":{"outcome":"selected","optionId":"made_up"}}`, "failed", false},
		{`{"outcome":{"outcome":"cancelled"}}`, "failed", false},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			c := startACP(t, writeScript)
			c.initialize()
			sid := c.newSession()
			c.send("p", "session/prompt", prompt(sid, "write it"))
			i := c.r.WaitFor("session/request_permission", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
			v, _ := golden.Parse(c.r.Lines()[i])
			req := v.(*golden.Object)
			tool := req.Values["params"].(*golden.Object).Values["toolCall"].(*golden.Object)
			if tool.String("toolCallId") != "w1" || tool.String("kind") != "edit" || tool.String("status") != "pending" {
				t.Errorf("toolCall %s", golden.Encode(tool))
			}
			// The write's diff comes with the request (issue 29), as the rpc
			// preview shows it: a new file, so oldText is null.
			want := `[{"type":"diff","path":"` + filepath.Join(c.r.Work, "out.txt") + `","oldText":null,"newText":"x"}]`
			if got := string(golden.Encode(tool.Values["content"])); got != want {
				t.Errorf("toolCall content %s, want %s", got, want)
			}
			c.r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, golden.Encode(req.Values["id"]), tc.answer))
			if got := c.stopReason("p"); got != "end_turn" {
				t.Fatalf("stop reason %s", got)
			}
			c.waitUpdate("the final tool update", 1, func(u *golden.Object) bool {
				return u.String("sessionUpdate") == "tool_call_update" && u.String("status") == tc.status
			})
			if _, err := os.Stat(filepath.Join(c.r.Work, "out.txt")); (err == nil) != tc.file {
				t.Errorf("file written: %v, want %v", err == nil, tc.file)
			}
			c.finish(0)
		})
	}
}

// TestSessionIDsAcrossModes: a session created over ACP is resumed by
// --mode rpc --resume <id>, and one created over RPC is loaded over ACP.
func TestSessionIDsAcrossModes(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	if r, err := filepath.EvalSymlinks(work); err == nil {
		work = r
	}
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_DATA_HOME": filepath.Join(home, ".local", "share")}
	start := func(mode string, args ...string) *golden.Run {
		return golden.Start(t, golden.Config{Args: append([]string{"--mode", mode, "--model", "fake/echo", "--cwd", work}, args...), Env: env})
	}

	// ACP: new + prompt, then EOF.
	a := &client{t: t, r: start("acp")}
	a.initialize()
	acpID := a.call("new", "session/new", map[string]any{"cwd": work, "mcpServers": []any{}}).String("sessionId")
	a.send(1, "session/prompt", prompt(acpID, "from acp"))
	if got := a.stopReason(1); got != "end_turn" {
		t.Fatal(got)
	}
	a.finish(0)

	// RPC: --resume the ACP session; its messages are there.
	r := start("rpc", "--resume", acpID)
	r.Send(`{"id":"m","type":"get_messages"}`)
	i := r.WaitFor("get_messages", 1, func(o *golden.Object) bool { return o.String("type") == "response" && o.String("id") == "m" })
	if !strings.Contains(string(r.Lines()[i]), `"from acp"`) {
		t.Fatalf("rpc --resume %s does not see the ACP prompt: %s", acpID, r.Lines()[i])
	}
	r.Send(`{"id":"p","type":"prompt","message":"from rpc"}`)
	r.WaitFor("agent_settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("rpc exit %d", code)
	}

	// ACP again: load replays both prompts before the answer.
	b := &client{t: t, r: start("acp")}
	b.initialize()
	list := b.call("list", "session/list", map[string]any{})
	if !strings.Contains(string(golden.Encode(list)), acpID) {
		t.Fatalf("session/list: %s", golden.Encode(list))
	}
	b.send("load", "session/load", map[string]any{"sessionId": acpID, "cwd": work, "mcpServers": []any{}})
	resp := b.r.WaitFor("load", 1, func(o *golden.Object) bool { return isResponse(o) && idIs(o, `"load"`) })
	var users []string
	for _, l := range b.r.Lines()[:resp] {
		v, _ := golden.Parse(l)
		if p, ok := v.(*golden.Object).Values["params"].(*golden.Object); ok {
			if u, ok := p.Values["update"].(*golden.Object); ok && u.String("sessionUpdate") == "user_message_chunk" {
				users = append(users, u.Values["content"].(*golden.Object).String("text"))
			}
		}
	}
	if got := strings.Join(users, "|"); got != "from acp|from rpc" {
		t.Fatalf("replayed user messages %q", got)
	}
	b.finish(0)
}

const planScript = `{"version":1,"responses":[
	{"text":"<proposed_plan>\n# Add greeting\n## Steps\n- [ ] S1 Read src/hello.ts\n- [ ] S2 Add the greeting [depends: S1]\n</proposed_plan>","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0}},
	{"text":"implemented","usage":{"input":20,"output":2,"cacheRead":0,"cacheWrite":0}}]}`

// TestPlanProposal: in plan mode a proposal is offered as a permission
// request inside the prompt turn; approving it runs the plan in the same
// turn, rejecting it ends the turn.
func TestPlanProposal(t *testing.T) {
	for _, tc := range []struct {
		option, stop, mode, status string
		texts                      string
	}{
		{"approve", "end_turn", "default", "completed", "implemented"},
		{"reject", "end_turn", "plan", "failed", ""},
	} {
		t.Run(tc.option, func(t *testing.T) {
			c := startACP(t, planScript)
			c.initialize()
			sid := c.newSession()
			c.call("mode", "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"})
			c.send("p", "session/prompt", prompt(sid, "add a greeting"))
			i := c.r.WaitFor("the plan's permission request", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
			v, _ := golden.Parse(c.r.Lines()[i])
			req := v.(*golden.Object)
			params := req.Values["params"].(*golden.Object)
			tool := params.Values["toolCall"].(*golden.Object)
			if !strings.HasPrefix(tool.String("toolCallId"), "plan:") || tool.String("kind") != "switch_mode" || tool.String("title") != "Plan: Add greeting" {
				t.Fatalf("plan tool call %s", golden.Encode(tool))
			}
			if got := string(golden.Encode(params.Values["options"])); !strings.Contains(got, `"optionId":"approve"`) || !strings.Contains(got, `"optionId":"reject"`) {
				t.Fatalf("options %s", got)
			}
			c.waitUpdate("the proposal's tool_call", 1, func(u *golden.Object) bool {
				return u.String("sessionUpdate") == "tool_call" && u.String("toolCallId") == tool.String("toolCallId")
			})
			c.waitUpdate("the proposal's steps", 1, func(u *golden.Object) bool {
				return u.String("sessionUpdate") == "plan" && strings.Contains(string(golden.Encode(u)), "Read src/hello.ts")
			})
			// The turn is still open while the plan waits.
			for _, l := range c.r.Lines() {
				if strings.Contains(string(l), `"id":"p"`) {
					t.Fatalf("the prompt was answered before the plan: %s", l)
				}
			}
			c.r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, golden.Encode(req.Values["id"]), tc.option))
			if got := c.stopReason("p"); got != tc.stop {
				t.Fatalf("stop reason %s", got)
			}
			c.waitUpdate("the proposal's outcome", 1, func(u *golden.Object) bool {
				return u.String("sessionUpdate") == "tool_call_update" && u.String("toolCallId") == tool.String("toolCallId") && u.String("status") == tc.status
			})
			if tc.texts != "" {
				c.waitUpdate("the execution run's reply", 1, func(u *golden.Object) bool {
					return u.String("sessionUpdate") == "agent_message_chunk" && u.Values["content"].(*golden.Object).String("text") == tc.texts
				})
				c.waitUpdate("the mode switch", 1, func(u *golden.Object) bool {
					return u.String("sessionUpdate") == "current_mode_update" && u.String("currentModeId") == tc.mode
				})
				c.waitUpdate("the todos", 1, func(u *golden.Object) bool {
					return u.String("sessionUpdate") == "plan" && strings.Contains(string(golden.Encode(u)), `"status":"pending"`)
				})
			}
			c.finish(0)
		})
	}
}

// TestPlanCancelled: cancelling while the plan waits ends the turn
// cancelled and withdraws the request.
func TestPlanCancelled(t *testing.T) {
	c := startACP(t, planScript)
	c.initialize()
	sid := c.newSession()
	c.call("mode", "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"})
	c.send("p", "session/prompt", prompt(sid, "add a greeting"))
	c.r.WaitFor("the plan's permission request", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
	c.send(nil, "session/cancel", map[string]any{"sessionId": sid})
	if got := c.stopReason("p"); got != "cancelled" {
		t.Fatalf("stop reason %s", got)
	}
	c.r.WaitFor("$/cancel_request", 1, func(o *golden.Object) bool { return o.String("method") == "$/cancel_request" })
	c.finish(0)
}

// How a run ended reaches the prompt answer: the turn limit gives
// max_turn_requests with the usage of the turns that ran; a turn whose
// plan is approved runs twice and answers with the usage of both runs.
func TestPromptAnswerFromOutcome(t *testing.T) {
	result := func(c *client, id any) string {
		c.t.Helper()
		r, ok := c.response(id).Get("result")
		if !ok {
			c.t.Fatalf("prompt %v failed", id)
		}
		return string(golden.Encode(r))
	}
	t.Run("turn limit", func(t *testing.T) {
		script := `{"version":1,"responses":[
	{"steps":[{"toolCall":{"id":"call-1","name":"ls","arguments":{}}}],"usage":{"input":7,"output":3,"cacheRead":1,"cacheWrite":0}},
	{"text":"never","usage":{"input":100,"output":100,"cacheRead":0,"cacheWrite":0}}]}`
		c := &client{t: t, r: golden.Start(t, golden.Config{Args: []string{"--mode", "acp", "--model", "fake/echo"},
			Script: []byte(script), UserConfig: []byte(`{"limits":{"turns":1}}`)})}
		c.initialize()
		sid := c.newSession()
		c.send("p", "session/prompt", prompt(sid, "list"))
		if got, want := result(c, "p"), `{"stopReason":"max_turn_requests","usage":{"inputTokens":7,"outputTokens":3,"cachedReadTokens":1,"cachedWriteTokens":0,"totalTokens":11}}`; got != want {
			t.Fatalf("answer %s, want %s", got, want)
		}
		c.finish(0)
	})
	t.Run("plan approved", func(t *testing.T) {
		c := startACP(t, planScript)
		c.initialize()
		sid := c.newSession()
		c.call("mode", "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"})
		c.send("p", "session/prompt", prompt(sid, "add a greeting"))
		i := c.r.WaitFor("the plan's permission request", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
		v, _ := golden.Parse(c.r.Lines()[i])
		c.r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"approve"}}}`, golden.Encode(v.(*golden.Object).Values["id"])))
		if got, want := result(c, "p"), `{"stopReason":"end_turn","usage":{"inputTokens":30,"outputTokens":7,"cachedReadTokens":0,"cachedWriteTokens":0,"totalTokens":37}}`; got != want {
			t.Fatalf("answer %s, want %s", got, want)
		}
		c.finish(0)
	})
}

// Ids round-trip on the whole server, and $/cancel_request names a
// request by the id as the client wrote it (-1 was answered as
// 18446744073709551615 and could not be withdrawn).
func TestIDsRoundTripThroughTheServer(t *testing.T) {
	c := startACP(t, slowScript)
	c.r.Send(`{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.r.WaitFor("initialize answer", 1, func(o *golden.Object) bool { return isResponse(o) })
	sid := c.newSession()
	c.r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":-2.5e3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, sid))
	c.waitUpdate("the first chunk", 1, kindIs("agent_message_chunk"))
	c.r.Send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":-2.5e3}}`)
	c.r.WaitFor("the withdrawn prompt", 2, func(o *golden.Object) bool { return isResponse(o) && !idIs(o, `"new"`) })
	var got []string
	for _, b := range c.r.Lines() {
		l := string(b)
		if strings.Contains(l, `"result"`) || strings.Contains(l, `"error"`) {
			if !strings.Contains(l, `"method"`) {
				got = append(got, l[:min(len(l), 40)])
			}
		}
	}
	want := []string{`{"jsonrpc":"2.0","id":-1,"result":{"prot`, `{"jsonrpc":"2.0","id":"new","result":{"s`, `{"jsonrpc":"2.0","id":-2.5e3,"error":{"c`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, b := range c.r.Lines() {
		l := string(b)
		if strings.Contains(l, `-2.5e3,"error"`) && !strings.Contains(l, `"code":-32800`) {
			t.Errorf("the prompt was not withdrawn: %s", l)
		}
	}
	c.finish(0)
}

// Without a usable model the process still answers initialize; the session
// methods answer -32000 (authentication required, data.authMethods) until a
// model is configured, and then work without a restart, as ama's ACP mode
// does (issue 29; rpc mode still exits 4).
func TestNoModelAuthRequired(t *testing.T) {
	c := &client{t: t, r: golden.Start(t, golden.Config{Args: []string{"--mode", "acp"}, BootRetry: time.Nanosecond})}
	init := c.call(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if got := string(golden.Encode(init.Values["authMethods"])); got != "[]" {
		t.Errorf("authMethods %s", got)
	}
	newParams := map[string]any{"cwd": c.r.Work, "mcpServers": []any{}}
	if code := c.callErr("n1", "session/new", newParams); code != -32000 {
		t.Fatalf("session/new without a model: %d, want -32000", code)
	}
	if data := string(golden.Encode(c.response("n1").Values["error"].(*golden.Object).Values["data"])); data != `{"authMethods":[]}` {
		t.Errorf("error data %s", data)
	}
	if code := c.callErr("p1", "session/prompt", prompt("00000000-0000-4000-8000-000000000001", "hi")); code != -32000 {
		t.Fatalf("session/prompt without a model: %d, want -32000", code)
	}
	if code := c.callErr("x", "session/bogus", map[string]any{}); code != -32601 {
		t.Errorf("an unknown method: %d", code)
	}
	// The user configures a model: the next session method starts up.
	cfg := filepath.Join(c.r.Home, ".config", "ama", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"model":"fake/echo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := c.call("n2", "session/new", newParams).String("sessionId")
	c.send("p2", "session/prompt", prompt(sid, "hello"))
	if got := c.stopReason("p2"); got != "end_turn" {
		t.Fatalf("stop reason %s", got)
	}
	c.finish(0)
}

// The client's mcpServers are used (they start at a session's first
// prompt, so nothing is said here), except by a resume of a session that
// is already open: that one says once, in a notice the client can show
// (not in the reply text), that it keeps the servers it was opened with.
func TestMCPServersNoticeOncePerSession(t *testing.T) {
	c := startACP(t, "")
	c.initialize()
	mcp := []any{map[string]any{"name": "fs", "command": "mcp-fs", "args": []any{}, "env": []any{}}}
	params := map[string]any{"cwd": c.r.Work, "mcpServers": mcp}
	s1 := c.call("n1", "session/new", params).String("sessionId")
	c.call("r1", "session/resume", map[string]any{"sessionId": s1, "cwd": c.r.Work, "mcpServers": mcp})
	s2 := c.call("n2", "session/new", params).String("sessionId")
	c.call("n3", "session/new", map[string]any{"cwd": c.r.Work, "mcpServers": []any{}})
	c.r.CloseStdin()
	if code := c.r.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	count := map[string]int{}
	for _, l := range c.r.Lines() {
		v, _ := golden.Parse(l)
		o, _ := v.(*golden.Object)
		if o == nil {
			continue
		}
		if o.String("method") == "_ama/notice" {
			p := o.Values["params"].(*golden.Object)
			if p.String("level") != "warn" || !strings.Contains(p.String("message"), "MCP") {
				t.Errorf("notice %s", l)
			}
			count[p.String("sessionId")]++
		}
		if strings.Contains(string(l), "MCP") && o.String("method") == "session/update" {
			t.Errorf("the notice is a session update: %s", l)
		}
	}
	if count[s1] != 1 || len(count) != 1 {
		t.Errorf("notices per session %v, want one for %s (its resume while open)", count, s1)
	}
	_ = s2
}

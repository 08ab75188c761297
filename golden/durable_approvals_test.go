package golden_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/golden"
)

// Durable approvals (issue 35), on the real binary: a host that declared
// durable_approvals answers defer, the process is SIGKILLed while the
// request is open, a restarted process resumes the session and re-sends
// the request before anything else; the answer runs the call exactly once
// (the marker file gets one line), a second answer is approval_resolved.

const durableCmd = `echo ran >> marker.txt`

// durableScripts writes the first process's script (one bash call that
// asks) and the later processes' (a plain reply).
func durableScripts(t *testing.T) (first, later string) {
	t.Helper()
	dir := t.TempDir()
	first = filepath.Join(dir, "first.json")
	later = filepath.Join(dir, "later.json")
	call := `{"steps":[{"toolCall":{"name":"bash","arguments":{"command":"` + durableCmd + `"},"id":"call_d1"}}]}`
	if err := os.WriteFile(first, []byte(`{"whenExhausted":"echo","responses":[`+call+`,{"text":"done"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(later, []byte(`{"whenExhausted":"echo","responses":[{"text":"done after approval"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return first, later
}

func markerLines(t *testing.T, work string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(work, "marker.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "ran\n")
}

func isTyped(typ string) func(map[string]any) bool {
	return func(v map[string]any) bool { return v["type"] == typ }
}

func isResp(id string) func(map[string]any) bool {
	return func(v map[string]any) bool { return v["type"] == "response" && v["id"] == id }
}

// deferAndKill starts a session, defers its one request and SIGKILLs the
// process while the request is open. It returns the request id.
func deferAndKill(t *testing.T, bin, home, work, script, id string, clean bool, env ...string) string {
	t.Helper()
	p := startKproc(t, bin, home, work, append([]string{"AMA_FAKE_SCRIPT=" + script}, env...), "--model", "fake/echo", "--session-id", id)
	p.send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
	p.until(isResp("c"))
	p.send(`{"id":"p","type":"prompt","message":"append to the marker"}`)
	lines := p.until(isTyped("permission_request"))
	req := lines[len(lines)-1]
	rid, _ := req["requestId"].(string)
	if rid == "" {
		t.Fatalf("permission_request without requestId: %v", req)
	}
	p.send(`{"id":"d","type":"permission_response","requestId":"` + rid + `","decision":"defer"}`)
	var settled map[string]any
	for _, l := range p.until(isTyped("agent_settled")) {
		if l["type"] == "permission_resolved" {
			t.Fatalf("a deferred request was resolved: %v", l)
		}
		settled = l
	}
	if settled["warning"] != "waiting_approval" {
		t.Fatalf("agent_settled %v, want warning waiting_approval", settled)
	}
	p.send(`{"id":"s","type":"get_state"}`)
	st := p.until(isResp("s"))
	data := st[len(st)-1]["data"].(map[string]any)
	if data["status"] != "waiting_approval" || !strings.Contains(asJSON(t, data["waitingApproval"]), rid) {
		t.Fatalf("get_state while parked: %v", data)
	}
	if clean { // end of input: a clean exit must not turn the deferred request into a deny
		_ = p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("clean exit while parked: %v\n%s", err, p.stderr)
		}
	} else {
		_ = p.cmd.Process.Kill() // SIGKILL while the request is open
		_ = p.cmd.Wait()
	}
	if n := markerLines(t, work); n != 0 {
		t.Fatalf("the deferred call ran before it was answered (%d)", n)
	}
	return rid
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// resumeDurable restarts the session and declares the capability; it
// returns the process and the lines up to and including the re-sent
// request with id rid.
func resumeDurable(t *testing.T, bin, home, work, script, id, rid string, env ...string) (*kproc, []map[string]any) {
	t.Helper()
	p := startKproc(t, bin, home, work, append([]string{"AMA_FAKE_SCRIPT=" + script}, env...), "--model", "fake/echo", "--resume", id)
	p.send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
	lines := p.until(func(v map[string]any) bool {
		return v["type"] == "permission_request" || v["type"] == "permission_resolved"
	})
	return p, lines
}

func TestDurableApprovalDeferKillResumeAllow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	first, later := durableScripts(t)
	const id = "7d1e2f3a-4b5c-4d6e-8f70-1a2b3c4d5e6f"
	rid := deferAndKill(t, bin, home, work, first, id, false)

	p, lines := resumeDurable(t, bin, home, work, later, id, rid)
	last := lines[len(lines)-1]
	if last["type"] != "permission_request" || last["requestId"] != rid {
		t.Fatalf("after resume: %v, want the open request %s again", last, rid)
	}
	for _, l := range lines {
		switch l["type"] {
		case "agent_start", "turn_start", "tool_execution_start", "message_start":
			t.Fatalf("%v before the re-sent request", l["type"])
		}
	}
	in := asJSON(t, last["input"])
	if !strings.Contains(in, "marker.txt") {
		t.Fatalf("re-sent request lost its frozen input: %s", in)
	}
	p.send(`{"id":"a","type":"permission_response","requestId":"` + rid + `","decision":"allow"}`)
	resp := p.until(isResp("a"))
	if r := resp[len(resp)-1]; r["success"] != true {
		t.Fatalf("answer after resume: %v", r)
	}
	got := p.until(isTyped("agent_settled"))
	resolved := false
	for _, l := range got {
		if l["type"] == "permission_resolved" && l["requestId"] == rid && l["decision"] == "allow" && l["reason"] == "answered" {
			resolved = true
		}
	}
	if !resolved {
		t.Fatalf("no permission_resolved{allow, answered} for %s", rid)
	}
	if n := markerLines(t, work); n != 1 {
		t.Fatalf("marker written %d times, want exactly once", n)
	}
	// Answering twice is a typed error, and nothing runs again.
	p.send(`{"id":"a2","type":"permission_response","requestId":"` + rid + `","decision":"allow"}`)
	resp = p.until(isResp("a2"))
	if r := resp[len(resp)-1]; r["success"] != false || r["code"] != "approval_resolved" {
		t.Fatalf("second answer: %v, want code approval_resolved", r)
	}
	p.send(`{"id":"s","type":"get_state"}`)
	st := p.until(isResp("s"))
	if d := st[len(st)-1]["data"].(map[string]any); d["status"] != nil || d["waitingApproval"] != nil {
		t.Fatalf("get_state after the answer still waits: %v", d)
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()

	// A third process: nothing is open, nothing is re-sent or run again.
	q := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + later}, "--model", "fake/echo", "--resume", id)
	q.send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
	q.send(`{"id":"a3","type":"permission_response","requestId":"` + rid + `","decision":"allow"}`)
	for _, l := range q.until(isResp("a3")) {
		if l["type"] == "permission_request" {
			t.Fatalf("a resolved request was re-sent: %v", l)
		}
		if l["id"] == "a3" && l["code"] != "approval_resolved" {
			t.Fatalf("answer in a later process: %v", l)
		}
	}
	_ = q.stdin.Close()
	_ = q.cmd.Wait()
	if n := markerLines(t, work); n != 1 {
		t.Fatalf("marker written %d times after another restart, want once", n)
	}
}

// The deadline passed while the process was gone: resume resolves the
// request as deny (permission_resolved reason expired) and the call never
// runs.
func TestDurableApprovalExpiresOnResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	first, later := durableScripts(t)
	const id = "8e2f3a4b-5c6d-4e7f-9a81-2b3c4d5e6f70"
	// The first process is killed right after the defer, long before the
	// 3 s deadline; the test then waits (on the wall clock, which is what
	// the binary reads) until the recorded deadline has passed.
	rid, file := deferAndKillExpiring(t, bin, home, work, first, id, "AMA_APPROVAL_DEFER_TTL_MS=3000")
	deadline := recordedDeadline(t, file, rid)
	if wait := time.Until(time.UnixMilli(deadline)); wait > 0 {
		time.Sleep(wait + 20*time.Millisecond)
	}
	p, lines := resumeDurable(t, bin, home, work, later, id, rid)
	last := lines[len(lines)-1]
	if last["type"] != "permission_resolved" || last["requestId"] != rid || last["decision"] != "deny" || last["reason"] != "expired" {
		t.Fatalf("after resume: %v, want permission_resolved{deny, expired}", last)
	}
	p.send(`{"id":"a","type":"permission_response","requestId":"` + rid + `","decision":"allow"}`)
	resp := p.until(isResp("a"))
	if r := resp[len(resp)-1]; r["code"] != "approval_resolved" {
		t.Fatalf("answer after expiry: %v", r)
	}
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
	if n := markerLines(t, work); n != 0 {
		t.Fatalf("an expired request ran (%d)", n)
	}
}

// A clean exit (end of input) while a request is parked leaves it open:
// the next process asks again and the answer runs it once.
func TestDurableApprovalCleanExitKeepsRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	first, later := durableScripts(t)
	const id = "9f3a4b5c-6d7e-4f80-8a92-3c4d5e6f7081"
	rid := deferAndKill(t, bin, home, work, first, id, true)
	p, lines := resumeDurable(t, bin, home, work, later, id, rid)
	if last := lines[len(lines)-1]; last["type"] != "permission_request" || last["requestId"] != rid {
		t.Fatalf("after a clean exit: %v, want the open request again", last)
	}
	p.send(`{"id":"a","type":"permission_response","requestId":"` + rid + `","decision":"allow"}`)
	p.until(isTyped("agent_settled"))
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
	if n := markerLines(t, work); n != 1 {
		t.Fatalf("marker written %d times, want once", n)
	}
}

// deferAndKillExpiring is deferAndKill that also returns the session file.
func deferAndKillExpiring(t *testing.T, bin, home, work, script, id string, env ...string) (rid, file string) {
	t.Helper()
	p := startKproc(t, bin, home, work, append([]string{"AMA_FAKE_SCRIPT=" + script}, env...), "--model", "fake/echo", "--session-id", id)
	p.send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
	p.until(isResp("c"))
	p.send(`{"id":"p","type":"prompt","message":"append to the marker"}`)
	lines := p.until(isTyped("permission_request"))
	rid, _ = lines[len(lines)-1]["requestId"].(string)
	p.send(`{"id":"d","type":"permission_response","requestId":"` + rid + `","decision":"defer"}`)
	p.until(isTyped("agent_settled"))
	p.send(`{"id":"s","type":"get_state"}`)
	st := p.until(isResp("s"))
	file, _ = st[len(st)-1]["data"].(map[string]any)["sessionFile"].(string)
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	return rid, file
}

// recordedDeadline reads the deadline of request rid from the session
// file's approval entry.
func recordedDeadline(t *testing.T, file, rid string) int64 {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			CustomType string `json:"customType"`
			Data       struct {
				RequestID string `json:"requestId"`
				Deadline  int64  `json:"deadline"`
				OnExpiry  string `json:"onExpiry"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.CustomType == "ama-rpc.approval" && e.Data.RequestID == rid {
			if e.Data.OnExpiry != "deny" || e.Data.Deadline == 0 {
				t.Fatalf("approval entry %s", line)
			}
			return e.Data.Deadline
		}
	}
	t.Fatalf("no approval entry for %s in %s", rid, file)
	return 0
}

// The same over ACP: the client declares _meta "ama/durableApprovals",
// picks the "defer" option, the process is SIGKILLed, a new process's
// session/load asks again (session/request_permission after the load's
// answer) and allow_once runs the call exactly once.
func TestDurableApprovalACPLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	first, later := durableScripts(t)
	acp := []string{"--mode", "acp", "--model", "fake/echo"}
	init := map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"_meta": map[string]any{"ama/durableApprovals": true}}}
	isAsk := func(v map[string]any) bool { return v["method"] == "session/request_permission" }
	answer := func(p *kproc, ask map[string]any, option string) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ask["id"],
			"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}}})
		p.send(string(b))
	}

	p := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + first}, acp...)
	res := result(t, p.acpCall(1, "initialize", init))
	if meta, _ := res["agentCapabilities"].(map[string]any)["_meta"].(map[string]any); meta["ama/durableApprovals"] != true {
		t.Fatalf("initialize does not echo the capability: %v", res)
	}
	id, _ := result(t, p.acpCall(2, "session/new", map[string]any{"cwd": work, "mcpServers": []any{}}))["sessionId"].(string)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
		"params": map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "append to the marker"}}}})
	p.send(string(b))
	lines := p.until(isAsk)
	ask := lines[len(lines)-1]
	if !strings.Contains(asJSON(t, ask["params"]), `"optionId":"defer"`) {
		t.Fatalf("no defer option offered: %v", ask["params"])
	}
	answer(p, ask, "defer")
	p.until(func(v map[string]any) bool { n, _ := v["id"].(float64); return n == 3 && v["method"] == nil })
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	if n := markerLines(t, work); n != 0 {
		t.Fatalf("ran before the answer (%d)", n)
	}

	q := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + later}, acp...)
	result(t, q.acpCall(1, "initialize", init))
	result(t, q.acpCall(2, "session/load", map[string]any{"sessionId": id, "cwd": work, "mcpServers": []any{}}))
	lines = q.until(isAsk)
	ask = lines[len(lines)-1]
	if in := asJSON(t, ask["params"]); !strings.Contains(in, "marker.txt") {
		t.Fatalf("re-asked request lost its input: %s", in)
	}
	answer(q, ask, "allow_once")
	q.until(func(v map[string]any) bool {
		params, _ := v["params"].(map[string]any)
		u, _ := params["update"].(map[string]any)
		return u["sessionUpdate"] == "tool_call_update" && (u["status"] == "completed" || u["status"] == "failed")
	})
	if n := markerLines(t, work); n != 1 {
		t.Fatalf("marker written %d times, want once", n)
	}
	_ = q.stdin.Close()
	if err := q.cmd.Wait(); err != nil {
		t.Fatalf("process 2: %v\n%s", err, q.stderr)
	}
	if n := markerLines(t, work); n != 1 {
		t.Fatalf("marker written %d times, want once", n)
	}
}

// Real SIGKILLs at seeded random points of a run that defers (before the
// request, between the request and the defer, while parked): a request the
// host saw is sent again after resume, and allowing it writes the marker
// once. AMA_DURABLE_KILLS sets the number (default 5).
func TestDurableApprovalRandomSigkills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	kills := 5
	if v, err := strconv.Atoi(os.Getenv("AMA_DURABLE_KILLS")); err == nil && v > 0 {
		kills = v
	}
	bin := buildBinary(t)
	first, later := durableScripts(t)
	rng := rand.New(rand.NewPCG(35, 3535))
	for i := range kills {
		home, work := t.TempDir(), t.TempDir()
		id := fmt.Sprintf("5a6b7c8d-9e0f-4a1b-8c2d-%012d", i)
		p := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + first}, "--model", "fake/echo", "--session-id", id)
		p.send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
		p.until(isResp("c"))
		p.send(`{"id":"p","type":"prompt","message":"append to the marker"}`)
		stop := 1 + rng.IntN(24) // lines to read before the kill
		seen, n := "", 0
		p.until(func(v map[string]any) bool {
			n++
			if v["type"] == "permission_request" {
				seen, _ = v["requestId"].(string)
				p.send(`{"id":"d","type":"permission_response","requestId":"` + seen + `","decision":"defer"}`)
			}
			return n >= stop || v["type"] == "agent_settled"
		})
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()

		q := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + later}, "--model", "fake/echo", "--resume", id)
		q.send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
		q.send(`{"id":"s","type":"get_state"}`)
		resent := ""
		for _, l := range q.until(isResp("s")) {
			if l["type"] == "permission_request" {
				resent, _ = l["requestId"].(string)
			}
		}
		if seen != "" && resent != seen {
			t.Fatalf("kill %d after %d lines: the host saw request %s, resume sent %q", i, n, seen, resent)
		}
		if resent != "" {
			q.send(`{"id":"a","type":"permission_response","requestId":"` + resent + `","decision":"allow"}`)
			q.until(isTyped("agent_settled"))
			if m := markerLines(t, work); m != 1 {
				t.Fatalf("kill %d: marker written %d times", i, m)
			}
		} else if m := markerLines(t, work); m != 0 {
			t.Fatalf("kill %d: ran without an answer (%d)", i, m)
		}
		_ = q.stdin.Close()
		_ = q.cmd.Wait()
		t.Logf("kill %d after %d lines: seen %v, re-sent %v", i, n, seen != "", resent != "")
	}
}

// A plan approval deferred across a SIGKILL: the plan proposed in plan mode
// is sent again as plan_proposed after --resume (listed in get_state), the
// approval carries it out, and a second plan_response is
// approval_resolved.
func TestDurablePlanKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	dir := t.TempDir()
	first, later := filepath.Join(dir, "first.json"), filepath.Join(dir, "later.json")
	plan := `Here is the plan.\n<proposed_plan>\n# Marker\n1. Append to the marker\n</proposed_plan>`
	if err := os.WriteFile(first, []byte(`{"responses":[{"text":"`+plan+`"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(later, []byte(`{"responses":[{"text":"carrying it out"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	caps := `{"id":"c","type":"set_client_capabilities","capabilities":["approvals","plans","durable_approvals"]}`
	const id = "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e"
	p := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + first}, "--model", "fake/echo", "--session-id", id, "--permission-mode", "plan")
	p.send(caps)
	p.until(isResp("c"))
	p.send(`{"id":"p","type":"prompt","message":"plan it"}`)
	lines := p.until(isTyped("plan_proposed"))
	planID, _ := lines[len(lines)-1]["planId"].(string)
	p.until(isTyped("agent_settled"))
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()

	q := startKproc(t, bin, home, work, []string{"AMA_FAKE_SCRIPT=" + later}, "--model", "fake/echo", "--resume", id)
	q.send(caps)
	q.send(`{"id":"s","type":"get_state"}`)
	var again map[string]any
	var state map[string]any
	for _, l := range q.until(isResp("s")) {
		if l["type"] == "plan_proposed" {
			again = l
		}
		if l["id"] == "s" {
			state, _ = l["data"].(map[string]any)
		}
	}
	if again == nil || again["planId"] != planID || !strings.Contains(asJSON(t, again["markdown"]), "Append to the marker") {
		t.Fatalf("plan_proposed after resume: %v", again)
	}
	if w := asJSON(t, state["waitingApproval"]); !strings.Contains(w, `"kind":"plan"`) || !strings.Contains(w, planID) {
		t.Fatalf("get_state waitingApproval %s", w)
	}
	q.send(`{"id":"a","type":"plan_response","planId":"` + planID + `","decision":"approve"}`)
	resp := q.until(isResp("a"))
	if r := resp[len(resp)-1]; r["success"] != true {
		t.Fatalf("plan_response after resume: %v", r)
	}
	q.until(isTyped("agent_settled"))
	q.send(`{"id":"a2","type":"plan_response","planId":"` + planID + `","decision":"approve"}`)
	resp = q.until(isResp("a2"))
	if r := resp[len(resp)-1]; r["code"] != "approval_resolved" {
		t.Fatalf("second plan_response: %v", r)
	}
	_ = q.stdin.Close()
	_ = q.cmd.Wait()
}

// switch_session back to a session with a parked request sends it again
// right after the switch's response; the answer runs it once.
func TestDurableApprovalSwitchSession(t *testing.T) {
	call := `{"steps":[{"toolCall":{"name":"bash","arguments":{"command":"` + durableCmd + `"},"id":"call_s1"}}]}`
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"},
		Script: []byte(`{"responses":[` + call + `,{"text":"done"}]}`)})
	r.Send(`{"id":"c","type":"set_client_capabilities","capabilities":["approvals","durable_approvals"]}`)
	r.WaitFor("caps", 1, isResponse("c"))
	r.Send(`{"id":"p","type":"prompt","message":"append"}`)
	i := r.WaitFor("request", 1, isType("permission_request"))
	var req struct {
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(r.Lines()[i], &req)
	r.Send(`{"id":"d","type":"permission_response","requestId":"` + req.RequestID + `","decision":"defer"}`)
	r.WaitFor("parked", 1, isType("agent_settled"))
	r.Send(`{"id":"s","type":"get_state"}`)
	i = r.WaitFor("state", 1, isResponse("s"))
	var st struct {
		Data struct{ SessionFile string } `json:"data"`
	}
	_ = json.Unmarshal(r.Lines()[i], &st)
	r.Send(`{"id":"n","type":"new_session"}`)
	r.WaitFor("new", 1, isResponse("n"))
	r.Send(`{"id":"sw","type":"switch_session","sessionPath":"` + st.Data.SessionFile + `"}`)
	sw := r.WaitFor("switch", 1, isResponse("sw"))
	again := r.WaitFor("request again", 2, isType("permission_request"))
	if again != sw+1 {
		t.Fatalf("the re-sent request is line %d, the switch's response %d: %s", again, sw, r.Lines()[sw+1])
	}
	if !strings.Contains(string(r.Lines()[again]), req.RequestID) {
		t.Fatalf("re-sent %s, want %s", r.Lines()[again], req.RequestID)
	}
	r.Send(`{"id":"a","type":"permission_response","requestId":"` + req.RequestID + `","decision":"allow"}`)
	r.WaitFor("continued", 2, isType("agent_settled"))
	r.CloseStdin()
	r.Wait()
	if n := markerLines(t, r.Work); n != 1 {
		t.Fatalf("marker written %d times, want once", n)
	}
}

package golden_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The session lifecycle's order (session.Manager), seen from outside: one
// trace file gets a line from the host adapter for each session event
// and from each SessionStart/SessionEnd hook, which appends to a relative
// path (so a hook that runs outside the project leaves no line) with its
// stdin (the hook input) and its working directory.

// orderAdapter notes session_start, session_shutdown and dispose.
const orderAdapter = `"use strict";
const fs = require("fs"), path = require("path");
const trace = path.join(process.cwd(), "trace.txt");
const note = (s) => fs.appendFileSync(trace, s + "\n");
module.exports = {hostApi: 1, create(api) {
  api.events.on("session_start", (p) => note("host session_start " + JSON.stringify(p)));
  api.events.on("session_shutdown", () => note("host session_shutdown {}"));
  return {id: "order", dispose() { note("host dispose {}"); }};
}};`

// orderHooks logs both hooks' input and working directory.
const orderHooks = `{"version":1,"hooks":{
 "SessionStart":[{"hooks":[{"type":"command","command":"printf 'hook SessionStart %s ' \"$PWD\" >> trace.txt; tr -d '\\n' >> trace.txt; echo >> trace.txt"}]}],
 "SessionEnd":[{"hooks":[{"type":"command","command":"printf 'hook SessionEnd %s ' \"$PWD\" >> trace.txt; tr -d '\\n' >> trace.txt; echo >> trace.txt"}]}]}}`

// step is one line of the trace.
type step struct {
	who, event, dir string
	data            map[string]any
}

func (s step) String() string {
	switch s.event {
	case "session_start":
		return fmt.Sprintf("%s %s %v %v", s.who, s.event, s.data["reason"], s.data["sessionId"])
	case "SessionStart":
		return fmt.Sprintf("%s %s %v %v", s.who, s.event, s.data["source"], s.data["sessionId"])
	case "SessionEnd":
		return fmt.Sprintf("%s %s %v %v", s.who, s.event, s.data["reason"], s.data["sessionId"])
	}
	return s.who + " " + s.event
}

func readSteps(t *testing.T, work string) []step {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(work, "trace.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []step
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) < 3 {
			t.Fatalf("trace line %q", l)
		}
		s := step{who: f[0], event: f[1]}
		rest := f[2]
		if s.who == "hook" {
			s.dir, rest, _ = strings.Cut(rest, " ")
		}
		if err := json.Unmarshal([]byte(rest), &s.data); err != nil {
			t.Fatalf("trace line %q: %v", l, err)
		}
		out = append(out, s)
	}
	return out
}

// wantOrder compares the trace with want ("who event reason id").
func wantOrder(t *testing.T, got []step, want ...string) {
	t.Helper()
	var g []string
	for _, s := range got {
		g = append(g, s.String())
	}
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("order:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

// checkHookInputs: every hook ran in the project with the real session
// facts (not those of a closed session: empty id, cwd and model).
func checkHookInputs(t *testing.T, r *golden.Run, steps []step) {
	t.Helper()
	for _, s := range steps {
		if s.who != "hook" {
			continue
		}
		m, _ := s.data["model"].(map[string]any)
		if s.dir != r.Work || s.data["cwd"] != r.Work || s.data["sessionId"] == "" || m["provider"] != "fake" || m["id"] != "echo" {
			t.Errorf("%s ran in %s with input %v", s.event, s.dir, s.data)
		}
	}
}

func lifecycleRun(t *testing.T, args []string, script string) *golden.Run {
	adapter := writeAdapter(t, "order.cjs", orderAdapter)
	return golden.Start(t, golden.Config{
		Args:   append([]string{"--model", "fake/echo", "--trust", "--host", adapter}, args...),
		Files:  map[string]string{".ama/hooks.json": orderHooks},
		Script: []byte(script),
	})
}

const plainScript = `{"version":1,"responses":[{"text":"ok"}]}`

// rpc: startup (host session_start, then SessionStart), new_session
// (SessionEnd{new} of the old session, its session_start, SessionStart),
// exit (session_shutdown, SessionEnd{exit} of the current session, dispose).
// hook_executed of both hooks reaches the stream, after the session_start
// it belongs to.
func TestLifecycleOrderRPC(t *testing.T) {
	r := lifecycleRun(t, []string{"--mode", "rpc"}, plainScript)
	r.Send(`{"id":"new","type":"new_session"}`)
	r.WaitFor("new_session", 1, func(o *golden.Object) bool { return o.String("id") == "new" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	steps := readSteps(t, r.Work)
	if len(steps) < 2 {
		t.Fatalf("trace: %v", steps)
	}
	a, _ := steps[0].data["sessionId"].(string)
	b := ""
	for _, s := range steps {
		if id, _ := s.data["sessionId"].(string); id != "" && id != a {
			b = id
		}
	}
	wantOrder(t, steps,
		"host session_start startup "+a,
		"hook SessionStart startup "+a,
		"hook SessionEnd new "+a,
		"host session_start new "+b,
		"hook SessionStart new "+b,
		"host session_shutdown",
		"hook SessionEnd exit "+b,
		"host dispose")
	checkHookInputs(t, r, steps)

	var stream []string
	for _, l := range r.Lines() {
		var e struct{ Type, Event, Reason, SessionID string }
		_ = json.Unmarshal(l, &e)
		switch e.Type {
		case "session_start":
			stream = append(stream, "session_start "+e.Reason)
		case "hook_executed":
			stream = append(stream, "hook_executed "+e.Event)
		}
	}
	want := "session_start startup,hook_executed SessionStart,hook_executed SessionEnd,session_start new,hook_executed SessionStart,hook_executed SessionEnd"
	if got := strings.Join(stream, ","); got != want {
		t.Fatalf("stream:\n%s\nwant:\n%s", got, want)
	}
}

// rpc approve_fresh switches like new_session: SessionEnd{new}, the
// fresh session's session_start, SessionStart{new}.
func TestLifecycleOrderApproveFresh(t *testing.T) {
	r := lifecycleRun(t, []string{"--mode", "rpc"}, `{"version":1,"responses":[
		{"text":"Plan.\n<proposed_plan>\n# Greet\n## Steps\n- [ ] S1 Say hi\n</proposed_plan>"},{"text":"on it"}]}`)
	r.Send(`{"id":"cap","type":"set_client_capabilities","capabilities":["plans"]}`)
	r.Send(`{"id":"mode","type":"set_permission_mode","mode":"plan"}`)
	r.Send(`{"id":"p","type":"prompt","message":"plan it"}`)
	n := r.WaitFor("plan_proposed", 1, func(o *golden.Object) bool { return o.String("type") == "plan_proposed" })
	var pp struct{ PlanID string }
	_ = json.Unmarshal(r.Lines()[n], &pp)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"fresh","type":"plan_response","planId":"` + pp.PlanID + `","decision":"approve_fresh"}`)
	r.WaitFor("fresh run settled", 2, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	steps := readSteps(t, r.Work)
	var got []string
	for _, s := range steps {
		got = append(got, s.who+" "+s.event+" "+fmt.Sprintf("%v %v", s.data["reason"], s.data["source"]))
	}
	want := []string{
		"host session_start startup <nil>", "hook SessionStart <nil> startup",
		"hook SessionEnd new <nil>", "host session_start new <nil>", "hook SessionStart <nil> new",
		"host session_shutdown <nil> <nil>", "hook SessionEnd exit <nil>", "host dispose <nil> <nil>"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkHookInputs(t, r, steps)
	if steps[2].data["sessionId"] == steps[4].data["sessionId"] {
		t.Fatalf("SessionEnd and SessionStart name one session: %v", steps)
	}
}

// ACP: every session/new (and resume) gets SessionStart after its
// session_start; session/close runs SessionEnd while the session is open;
// at the end of input session_shutdown, SessionEnd{exit} of each open
// session (in opening order), dispose.
func TestLifecycleOrderACP(t *testing.T) {
	r := lifecycleRun(t, []string{"--mode", "acp"}, plainScript)
	first := acpNewSession(t, r)
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"` + r.Work + `","mcpServers":[]}}`)
	r.WaitFor("session/new", 1, acpResponse("3"))
	r.Send(`{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"` + first + `"}}`)
	r.WaitFor("session/close", 1, acpResponse("4"))
	r.Send(`{"jsonrpc":"2.0","id":5,"method":"session/resume","params":{"sessionId":"` + first + `","cwd":"` + r.Work + `","mcpServers":[]}}`)
	r.WaitFor("session/resume", 1, acpResponse("5"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	steps := readSteps(t, r.Work)
	second := ""
	for _, s := range steps {
		if id, _ := s.data["sessionId"].(string); id != "" && id != first {
			second = id
		}
	}
	wantOrder(t, steps,
		"host session_start startup "+first,
		"hook SessionStart startup "+first,
		"host session_start new "+second,
		"hook SessionStart new "+second,
		"hook SessionEnd exit "+first,
		"host session_start resume "+first,
		"hook SessionStart resume "+first,
		"host session_shutdown",
		"hook SessionEnd exit "+second,
		"hook SessionEnd exit "+first,
		"host dispose")
	checkHookInputs(t, r, steps)
}

// rpc switch_session: SessionEnd{switch} of the current session, then the
// stored one's session_start and SessionStart{resume}; at exit SessionEnd
// names the session switched to, not the startup one.
func TestLifecycleOrderSwitchSession(t *testing.T) {
	r := lifecycleRun(t, []string{"--mode", "rpc"}, plainScript)
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"st","type":"get_state"}`)
	n := r.WaitFor("get_state", 1, func(o *golden.Object) bool { return o.String("id") == "st" })
	var st struct {
		Data struct{ SessionFile, SessionID string }
	}
	_ = json.Unmarshal(r.Lines()[n], &st)
	if st.Data.SessionFile == "" {
		t.Fatalf("no session file: %s", r.Lines()[n])
	}
	r.Send(`{"id":"new","type":"new_session"}`)
	r.WaitFor("new_session", 1, func(o *golden.Object) bool { return o.String("id") == "new" })
	r.Send(`{"id":"sw","type":"switch_session","sessionPath":"` + st.Data.SessionFile + `"}`)
	r.WaitFor("switch_session", 1, func(o *golden.Object) bool { return o.String("id") == "sw" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	steps := readSteps(t, r.Work)
	a, b := st.Data.SessionID, ""
	for _, s := range steps {
		if id, _ := s.data["sessionId"].(string); id != "" && id != a {
			b = id
		}
	}
	wantOrder(t, steps,
		"host session_start startup "+a,
		"hook SessionStart startup "+a,
		"hook SessionEnd new "+a,
		"host session_start new "+b,
		"hook SessionStart new "+b,
		"hook SessionEnd switch "+b,
		"host session_start resume "+a,
		"hook SessionStart resume "+a,
		"host session_shutdown",
		"hook SessionEnd exit "+a,
		"host dispose")
	checkHookInputs(t, r, steps)
}

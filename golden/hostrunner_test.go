package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// A host runner's usage event sets the task's usage, costUsd and context
// numbers; continuing a finished task uses the kept handle's send(text)
// (no second start), and a runner whose handle cannot send is started
// again with resume = its own session id (host-api.md §4.12).
func TestHostRunnerContinueAndUsage(t *testing.T) {
	canvasAdapter(t) // needs node
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	adapter := filepath.Join(dir, "runner.cjs")
	src := `const fs = require("fs");
const note = (s) => fs.appendFileSync(` + "`" + log + "`" + `, s + "\n");
module.exports = { hostApi: 1, create(api) {
  api.runners.provide({ id: "keeper", description: "keeps its handle", async start(req) {
    note("start keeper " + req.prompt + " resume=" + (req.resume || ""));
    let next = "first: " + req.prompt;
    return { id: "k-1", stop() {},
      async send(text) { note("send keeper " + text); next = "continued: " + text; },
      async wait() {
        req.onEvent({ type: "usage", usage: { input: 7, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 9 }, unit: "usd", amount: 0.25, contextTokens: 900, contextWindow: 200000 });
        return { text: next, stopReason: "stop", isError: false };
      } };
  } });
  api.runners.provide({ id: "plain", description: "no send", async start(req) {
    note("start plain " + req.prompt + " resume=" + (req.resume || ""));
    return { id: "p-1", stop() {}, async wait() { return { text: "plain: " + req.prompt, stopReason: "stop", isError: false }; } };
  } });
  return { id: "runner-host" };
} };
`
	if err := os.WriteFile(adapter, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(args string) string { return `{"steps":[{"toolCall":{"name":"task","arguments":` + args + `}}]}` }
	r := golden.Start(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--host", adapter, "--tools", "read,task", "--allow", "task"},
		UserConfig: []byte(`{"subagents":{"background":"never"}}`),
		Script: []byte(`{"version":1,"responses":[` + strings.Join([]string{
			call(`{"prompt":"one","agent":"keeper"}`),
			call(`{"prompt":"two","agent":"plain"}`),
			call(`{"prompt":"more","taskId":"t1"}`),
			call(`{"prompt":"again","taskId":"t2"}`),
			`{"text":"Done."}`}, ",") + `]}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"tk","type":"get_tasks"}`)
	r.WaitFor("tasks", 1, func(o *golden.Object) bool { return o.String("id") == "tk" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	var out string
	for _, l := range r.Lines() {
		out += string(l) + "\n"
	}
	for _, want := range []string{
		`[task t1] first: one`, `[task t2] plain: two`, `[task t1] continued: more`, `[task t2] plain: again`,
		`"costUsd":0.25,"contextTokens":900,"contextWindow":200000`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	calls, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(calls)); got != "start keeper one resume=\nstart plain two resume=\nsend keeper more\nstart plain again resume=p-1" {
		t.Errorf("runner calls:\n%s", got)
	}
}

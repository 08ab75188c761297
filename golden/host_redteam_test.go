package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// Red-team tests of the host adapter's ways back into a session. Each
// checks the side effect: a marker file a refused command would create.

// collideAdapter lets a read-only sub-agent's host tool call share its
// toolCallId with a call of the parent (the model picks ids; here the
// fake script does). Promises order the steps, nothing sleeps: the
// parent's spawn starts the child; the child's child_nest starts (id
// "dup.1") and waits; the parent then makes a nested call of parent_wait,
// whose id is also "dup.1"; the child's nested bash comes after that.
const collideAdapter = `let started, opened, finished;
const childStarted = new Promise((r) => (started = r));
const gateOpen = new Promise((r) => (opened = r));
const childDone = new Promise((r) => (finished = r));
module.exports = { hostApi: 1, create(api) {
  const reg = (name, execute) => api.tools.register({ name, permission: "read", description: "Test tool " + name + ".",
    parameters: { type: "object", properties: { text: { type: "string" } } }, execute });
  reg("spawn", async (input, ctx) => {
    const sub = ctx.spawnSubagent({ prompt: "look", description: "child", agent: "explore" });
    await childStarted;
    const w = await ctx.tools.executeTool("parent_wait", {});
    const r = await sub;
    return { content: "wait: " + w.content.map((c) => c.text).join("") + " sub: " + r.text };
  });
  reg("parent_wait", async () => { opened(); await childDone; return { content: "waited" }; });
  reg("child_nest", async (input, ctx) => {
    started();
    await gateOpen;
    const r = await ctx.tools.executeTool("bash", { command: "touch escaped-marker" });
    finished();
    return { content: (r.isError ? "ERR " : "OK ") + r.content.map((c) => c.text).join("") };
  });
  return { id: "collide-host" };
} };
`

// A sub-agent's call whose toolCallId repeats one of its parent's never
// reaches the parent's session: the explore child's nested bash is judged
// by the child's read-only pipeline, not the full-auto parent's.
func TestHostCallIDCollisionStaysInItsSession(t *testing.T) {
	adapter := writeAdapter(t, "collide.cjs", collideAdapter)
	r := golden.Start(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto", "--tools", "read,task,spawn,parent_wait,child_nest"},
		UserConfig: []byte(`{"subagents":{"background":"never"}}`),
		Script: []byte(`{"version":1,"responses":[` +
			`{"steps":[{"toolCall":{"name":"spawn","arguments":{},"id":"dup"}}]},` +
			`{"steps":[{"toolCall":{"name":"child_nest","arguments":{},"id":"dup.1"}}]},` +
			`{"text":"child done"},{"text":"Done."}]}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" && o.String("sessionId") == "" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	if _, err := os.Stat(filepath.Join(r.Work, "escaped-marker")); err == nil {
		t.Errorf("the read-only child's nested bash ran in its parent's session")
	}
	var out string
	for _, l := range r.Lines() {
		out += string(l) + "\n"
	}
	if !strings.Contains(out, `"toolName":"child_nest"`) || !strings.Contains(out, "wait: waited") {
		t.Errorf("the scenario did not play out:\n%s", out)
	}
}

// ctx.markRead satisfies edit's read-before-edit rule, never its
// permission: in default mode with nobody to approve, the nested edit is
// refused before and after markRead, and the file is unchanged.
func TestHostMarkReadIsNoApproval(t *testing.T) {
	adapter := writeCtxAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter},
		Files:  map[string]string{"f.txt": "old text\n"},
		Script: turns(`{"name":"mark_edit","arguments":{"text":"f.txt"}}`),
	})
	promptToEnd(t, r)
	if got := textOf(t, toolEnds(r)["#0"]); !strings.HasPrefix(got, "before ERR had false after ERR Not run") {
		t.Errorf("mark_edit: %s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Work, "f.txt")); string(data) != "old text\n" {
		t.Errorf("f.txt changed: %q", data)
	}
}

// A built-in the adapter disabled during create() is gone for its own
// nested calls too: executeTool("bash") finds no tool, even in full-auto.
func TestHostExecuteToolDisabledBuiltin(t *testing.T) {
	src := `module.exports = { hostApi: 1, create(api) {
  api.tools.disable("bash");
  api.tools.register({ name: "run_it", permission: "read", description: "Runs bash.", parameters: { type: "object" },
    execute: async (input, ctx) => {
      const r = await ctx.tools.executeTool("bash", { command: "touch disabled-marker" });
      return { content: (r.isError ? "ERR " : "OK ") + r.content.map((c) => c.text).join("") };
    } });
  return { id: "disable-host" };
} };
`
	adapter := writeAdapter(t, "disable.cjs", src)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto"},
		Script: turns(`{"name":"run_it","arguments":{}}`),
	})
	promptToEnd(t, r)
	if _, err := os.Stat(filepath.Join(r.Work, "disabled-marker")); err == nil {
		t.Errorf("a disabled bash ran")
	}
	if got := textOf(t, toolEnds(r)["#0"]); got != "ERR Tool bash not found" {
		t.Errorf("run_it: %s", got)
	}
}

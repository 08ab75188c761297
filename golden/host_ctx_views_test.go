package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/golden"
)

// viewsAdapter exercises ctx.checkpoint, ctx.tasks and ctx.maxResultChars.
const viewsAdapter = `const fs = require("fs"), path = require("path");
module.exports = { hostApi: 1, create(api) {
  const reg = (name, permission, execute) => api.tools.register({ name, permission, description: "Test tool " + name + ".",
    parameters: { type: "object", properties: { text: { type: "string" } } }, execute });
  // Writes "host wrote" over each file named in text (comma-separated),
  // telling the checkpoint first, as ama's write tool does.
  reg("ckpt_write", "write", async (input, ctx) => {
    if (!ctx.checkpoint) return { content: "no checkpoint" };
    for (const name of input.text.split(",")) {
      const f = path.resolve(ctx.cwd, name);
      await ctx.checkpoint.beforeWrite(f);
      fs.writeFileSync(f, "host wrote\n");
      ctx.checkpoint.afterWrite(f, "host wrote\n");
    }
    return { content: "wrote " + input.text };
  });
  // ama's hooks never reject: a bad path resolves too (and is logged).
  reg("ckpt_bad", "read", async (input, ctx) => ({ content: "resolved " + String(await ctx.checkpoint.beforeWrite("relative.txt")) }));
  reg("tasks_view", "read", async (input, ctx) => {
    if (!ctx.tasks) return { content: "no tasks" };
    const before = ctx.tasks.list();
    const r = await ctx.spawnSubagent({ prompt: input.text, description: "bg child", background: true });
    const list = ctx.tasks.list();
    list.push({ taskId: "mutated" });
    const got = ctx.tasks.get(r.taskId);
    return { content: JSON.stringify({ before, spawned: [r.taskId, r.status],
      listed: ctx.tasks.list().map((t) => [t.taskId, t.status, t.background, t.description]),
      get: got && got.status, unknown: ctx.tasks.get("nope") === undefined }) };
  });
  reg("big", "read", async (input, ctx) => ({
    content: "x".repeat(input.text === "over" ? ctx.maxResultChars + 1 : ctx.maxResultChars) }));
  reg("max_info", "read", async (input, ctx) => ({ content: String(ctx.maxResultChars) }));
  return { id: "views-host" };
} };
`

func writeViewsAdapter(t *testing.T) string {
	t.Helper()
	return writeAdapter(t, "views.cjs", viewsAdapter)
}

// ctx.checkpoint.beforeWrite puts the file into the turn's checkpoint
// before the host tool changes it: rewinding the code of that turn puts
// back the old content and deletes the file the tool created.
func TestHostCheckpoint(t *testing.T) {
	adapter := writeViewsAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto"},
		Files:  map[string]string{"f.txt": "original\n"},
		Script: turns(`{"name":"ckpt_write","arguments":{"text":"f.txt,new.txt"}}`, `{"name":"ckpt_bad","arguments":{}}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	if got := textOf(t, toolEnds(r)["#0"]); got != "wrote f.txt,new.txt" {
		t.Fatalf("ckpt_write: %s", got)
	}
	if got := textOf(t, toolEnds(r)["#1"]); got != "resolved undefined" {
		t.Errorf("beforeWrite of a relative path: %s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Work, "f.txt")); string(data) != "host wrote\n" {
		t.Fatalf("the host tool did not write f.txt: %q", data)
	}
	r.Send(`{"id":"pts","type":"get_rewind_points"}`)
	idx := r.WaitFor("points", 1, func(o *golden.Object) bool { return o.String("id") == "pts" })
	var pts struct {
		Data struct {
			Points []struct {
				EntryID       string
				HasCheckpoint bool
			}
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Lines()[idx], &pts); err != nil || len(pts.Data.Points) != 1 || !pts.Data.Points[0].HasCheckpoint {
		t.Fatalf("rewind points: %s", r.Lines()[idx])
	}
	r.Send(`{"id":"rw","type":"rewind","mode":"code","entryId":"` + pts.Data.Points[0].EntryID + `"}`)
	idx = r.WaitFor("rewound", 1, func(o *golden.Object) bool { return o.String("id") == "rw" })
	rw := string(r.Lines()[idx])
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	if !strings.Contains(r.Stderr(), "checkpoint.beforeWrite: not an absolute path: relative.txt") {
		t.Errorf("the bad path was not logged:\n%s", r.Stderr())
	}
	if !strings.Contains(rw, `"restored":["f.txt"],"deleted":["new.txt"],"conflicts":[]`) {
		t.Errorf("rewind: %s", rw)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Work, "f.txt")); string(data) != "original\n" {
		t.Errorf("f.txt after the rewind: %q", data)
	}
	if _, err := os.Stat(filepath.Join(r.Work, "new.txt")); err == nil {
		t.Errorf("new.txt survived the rewind")
	}
}

// With checkpoints off there is no ctx.checkpoint (ama: undefined when
// not enabled).
func TestHostCheckpointOff(t *testing.T) {
	adapter := writeViewsAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--host", adapter, "--permission-mode", "full-auto"},
		UserConfig: []byte(`{"checkpoints":{"enabled":false}}`),
		Script:     turns(`{"name":"ckpt_write","arguments":{"text":"f.txt"}}`),
	})
	promptToEnd(t, r)
	if got := textOf(t, toolEnds(r)["#0"]); got != "no checkpoint" {
		t.Errorf("ckpt_write with checkpoints off: %s", got)
	}
}

// ctx.tasks is the task registry's view: empty before, and listing the
// background task the call launched (still running: its child waits for a
// file) as soon as spawnSubagent resolves; list() returns copies.
func TestHostTasks(t *testing.T) {
	adapter := writeViewsAdapter(t)
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter, "--tools", "read,task,tasks_view"},
		Script: []byte(`{"version":1,"responses":[{"steps":[{"toolCall":{"name":"tasks_view","arguments":{"text":"work"}}}]},` +
			`{"steps":[{"waitFile":"go"},{"text":"child done"}]},{"text":"Done."},{"text":"Noted."},{"text":"Noted."}]}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("host tool end", 1, func(o *golden.Object) bool {
		return o.String("type") == "tool_execution_end" && o.String("toolCallId") == "fake_call_0"
	})
	got := textOf(t, toolEnds(r)["fake_call_0"])
	if err := os.WriteFile(filepath.Join(r.Root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("task end", 1, func(o *golden.Object) bool { return o.String("type") == "subagent_end" })
	r.Send(`{"id":"tk","type":"get_tasks"}`)
	r.WaitFor("tasks", 1, func(o *golden.Object) bool { return o.String("id") == "tk" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	want := `{"before":[],"spawned":["t1","running"],"listed":[["t1","running",true,"bg child"]],"get":"running","unknown":true}`
	if got != want {
		t.Errorf("ctx.tasks:\n got %s\nwant %s", got, want)
	}
}

// Without sub-agents (task not among the tools: no task registry) there
// is no ctx.tasks.
func TestHostTasksAbsent(t *testing.T) {
	adapter := writeViewsAdapter(t)
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--host", adapter, "--tools", "read,tasks_view"},
		Script: turns(`{"name":"tasks_view","arguments":{"text":"x"}}`),
	})
	promptToEnd(t, r)
	if got := textOf(t, toolEnds(r)["#0"]); got != "no tasks" {
		t.Errorf("tasks_view without sub-agents: %s", got)
	}
}

// ctx.maxResultChars is the cut the session applies: a result of exactly
// that many characters reaches the model whole, one more is cut.
func TestHostMaxResultChars(t *testing.T) {
	adapter := writeViewsAdapter(t)
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter},
		Script: turns(`{"name":"max_info","arguments":{}}`, `{"name":"big","arguments":{"text":"fit"}}`,
			`{"name":"big","arguments":{"text":"over"}}`),
	})
	promptToEnd(t, r)
	ends := toolEnds(r)
	if got := textOf(t, ends["#0"]); got != "30000" {
		t.Errorf("ctx.maxResultChars: %s", got)
	}
	if got := textOf(t, ends["#1"]); utf8.RuneCountInString(got) != 30000 || strings.Contains(got, "cut") {
		t.Errorf("a result of maxResultChars characters was changed (%d chars)", utf8.RuneCountInString(got))
	}
	if got := textOf(t, ends["#2"]); !strings.Contains(got, "[output cut: showing the first") {
		t.Errorf("a result over maxResultChars was not cut (%d chars)", utf8.RuneCountInString(got))
	}
}

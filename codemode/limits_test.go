package codemode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func TestOptionsErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{`// @options: {"timeout_ms": -1}`, "Invalid // @options line: timeout_ms must be an integer between 1 and 3600000"},
		{`// @options: {"max_output_tokens": 1.5}`, "max_output_tokens must be an integer between 1 and 1000000"},
		{`// @options: [1]`, "Invalid // @options line: expected a JSON object"},
		{`// @options: {"x": 1}`, `unknown option "x" (use max_output_tokens, timeout_ms)`},
		{`// @options: {nope`, "Invalid // @options line: "},
	}
	var started atomic.Int32
	s := &fakeSession{fn: func(context.Context, string, json.RawMessage) *tools.Result {
		started.Add(1)
		return tools.TextResult("")
	}}
	for _, c := range cases {
		res, _ := execScript(t, newTestTool(ModeOn, "read"), s, c.line+"\nawait tools.read({})")
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s: got %q", c.line, text(res))
		}
	}
	if started.Load() != 0 {
		t.Fatal("a script with bad options ran")
	}
	if o, err := parseOptions("  //@options: {\"timeout_ms\": 5, \"max_output_tokens\": 7}\nx"); err != nil || o.timeoutMs != 5 || o.maxOutputTokens != 7 {
		t.Fatalf("%+v %v", o, err)
	}
}

func TestTimeout(t *testing.T) {
	start := time.Now()
	res, _ := execScript(t, newTestTool(ModeOn), echoSession(), "// @options: {\"timeout_ms\": 1500}\ntext('before'); while (true) {}")
	got := body(t, res)
	if !res.IsError || got != "before\n\nScript error: Script timed out after 1500 ms" || !res.Details.(Details).TimedOut {
		t.Fatalf("%q", got)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("timeout took %v", d)
	}
}

// A script that grows without bound ends with the memory error and the
// server process is unharmed; so does one allocation far above the cap.
func TestMemoryCap(t *testing.T) {
	if raceOn {
		t.Skip("the memory cap is tested without -race (make test runs it on its memory line): the race runtime's shadow memory counts against the child's RLIMIT_DATA")
	}
	tool := New(Config{Mode: ModeOn, MaxHeapMB: 64, List: func() []tools.Tool { return nil }})
	for _, script := range []string{
		`const a = []; while (true) a.push("x".repeat(100000) + a.length);`,
		`const s = "x".repeat(2 ** 30); return s.length`,
	} {
		res, _ := execScript(t, tool, echoSession(), script)
		got := body(t, res)
		// Under the kernel cap (RLIMIT_DATA) the Go runtime usually dies
		// "out of memory", but a refused mapping can also crash it inside
		// the collector (SIGSEGV, seen with the green tea GC): then the
		// script is reported as a crash of the sandbox process. Either way
		// it is stopped with an error and this process goes on.
		if !res.IsError || !strings.Contains(got, "Script exceeded the codemode memory limit (64 MB)") &&
			!strings.Contains(got, "codemode sandbox exited unexpectedly") {
			t.Errorf("%s: %q", script, got)
		}
	}
	res, _ := execScript(t, tool, echoSession(), `return 1 + 1`)
	if got := body(t, res); res.IsError || got != "2" {
		t.Errorf("a script after the memory cap: %q", got)
	}
}

// Abort (the run's ctx) ends a busy script at once, keeping its output.
func TestAbortMidScript(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tool := newTestTool(ModeOn)
	a, _ := json.Marshal(map[string]string{"script": "text('started'); while (true) {}"})
	start := time.Now()
	res, err := tool.Execute(ctx, &tools.Call{ID: "cm1", Args: a, Session: echoSession(), Update: func(p string) {
		if p == "started" {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := body(t, res)
	if !res.IsError || got != "started\n\nScript error: Script aborted" || !res.Details.(Details).Aborted {
		t.Fatalf("%q", got)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("abort took %v", d)
	}
}

// Scripts reach nothing but tools.*: no module loader, process, network,
// timers or code from strings. Judged by the side effect: no marker file,
// the parent's secret never shows.
func TestNoEscape(t *testing.T) {
	t.Setenv("AMA_CODEMODE_SECRET", "s3cr3t-value")
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	m, _ := json.Marshal(marker)
	attempts := []string{
		`require("fs").writeFileSync(` + string(m) + `, "x")`,
		`await import("fs")`,
		`process.env.AMA_CODEMODE_SECRET`,
		`return JSON.stringify(globalThis.process)`,
		`await fetch("http://127.0.0.1:1/")`,
		`setTimeout(() => {}, 1)`,
		`new Function("return process")()`,
		`(function(){}).constructor("return this")()`,
		`(async function(){}).constructor("return 1")()`,
		`eval("1")`,
		`return Object.getOwnPropertyNames(globalThis).filter(n => !/^[A-Z]/.test(n) && typeof globalThis[n] === "object").join(",")`,
		`Deno.writeTextFile(` + string(m) + `, "x")`,
		`Bun.write(` + string(m) + `, "x")`,
		`const w = new WebAssembly.Module(new Uint8Array([0,97,115,109,1,0,0,0]))`,
		`return typeof tools.read.constructor("return globalThis")`,
	}
	var calls atomic.Int32
	s := &fakeSession{fn: func(context.Context, string, json.RawMessage) *tools.Result {
		calls.Add(1)
		return tools.TextResult("")
	}}
	tool := newTestTool(ModeOn, "read")
	for _, a := range attempts {
		res, _ := execScript(t, tool, s, a)
		out := text(res)
		if strings.Contains(out, "s3cr3t-value") {
			t.Errorf("%s: the secret leaked: %q", a, out)
		}
		t.Logf("%s -> %q", a, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a script wrote the marker file")
	}
	// No code from strings, whichever way the constructor is reached.
	for _, a := range []string{`new Function("return 1")()`, `(function(){}).constructor("return 1")()`, `(async function(){}).constructor("return 1")()`,
		`(function*(){}).constructor("yield 1")`, `tools.read.constructor("return 1")()`, `eval("1")`} {
		res, _ := execScript(t, tool, s, a)
		if got := body(t, res); !res.IsError || (!strings.Contains(got, "EvalError: code generation from strings is disabled") && !strings.Contains(got, "eval is not defined")) {
			t.Errorf("%s: %q", a, got)
		}
	}
	if calls.Load() != 0 {
		t.Fatalf("%d tool calls from scripts that made none", calls.Load())
	}
}

// At most 8 calls run at once; the rest queue and all complete.
func TestConcurrencyCap(t *testing.T) {
	var cur, peak atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	s := &fakeSession{fn: func(ctx context.Context, name string, args json.RawMessage) *tools.Result {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == maxInFlight {
			once.Do(func() { close(release) })
		}
		<-release
		cur.Add(-1)
		return tools.TextResult("ok")
	}}
	res, _ := execScript(t, newTestTool(ModeOn, "read"), s, `const r = await Promise.all(Array.from({length: 20}, () => tools.read({}))); return r.length`)
	if got := body(t, res); got != "20" || peak.Load() != maxInFlight {
		t.Fatalf("%q, peak %d", got, peak.Load())
	}
}

// Calls still running when the script ends are aborted and have ended
// before the codemode call returns.
func TestPendingCallsEndFirst(t *testing.T) {
	var started, ended atomic.Int32
	s := &fakeSession{fn: func(ctx context.Context, name string, args json.RawMessage) *tools.Result {
		started.Add(1)
		defer ended.Add(1)
		<-ctx.Done()
		return tools.ErrorResult("aborted by user")
	}}
	res, _ := execScript(t, newTestTool(ModeOn, "read"), s, `tools.read({}); tools.read({}); return "left"`)
	if got := body(t, res); got != "left" {
		t.Fatalf("%q", got)
	}
	if started.Load() != ended.Load() {
		t.Fatalf("%d started, %d ended when codemode returned", started.Load(), ended.Load())
	}
}

func TestValues(t *testing.T) {
	two := 2
	s := &fakeSession{fn: func(_ context.Context, name string, _ json.RawMessage) *tools.Result {
		switch name {
		case "bash":
			return &tools.Result{Content: []llm.Content{llm.Text("out")}, IsError: true, Details: tools.BashDetails{ExitCode: &two}}
		case "host":
			return &tools.Result{Content: []llm.Content{llm.Text("ignored")}, Structured: json.RawMessage(`{"k":1}`)}
		case "denied":
			return tools.ErrorResult("Not run: denied by rule")
		}
		return &tools.Result{IsError: true}
	}}
	tool := newTestTool(ModeOn, "bash", "host", "denied", "empty")
	res, _ := execScript(t, tool, s, `const b = await tools.bash({command: "x"});
const h = await tools.host({});
const d = await tools.denied({}).catch(e => e.message);
const e = await tools.empty({}).catch(e => e.message);
return [b.exitCode, b.output, typeof b.wallTimeMs, h.k, d, e].join("|")`)
	if got := body(t, res); got != "2|out|number|1|Not run: denied by rule|Tool empty failed" {
		t.Fatalf("%q", got)
	}
}

func TestStore(t *testing.T) {
	s := echoSession()
	tool := newTestTool(ModeOn)
	for i, c := range []struct{ script, want string }{
		{`store("n", (load("n") ?? 0) + 1)`, "(no output)"},
		{`store("n", 100); throw new Error("no")`, "(no output)\n\nScript error: Error: no (line 1)"},
		{`return load("n")`, "1"},
		{`try { store("", 1) } catch (e) { text(e.name) } try { store("f", () => 1) } catch (e) { text(e.message) } try { store("big", "x".repeat(300000)) } catch (e) { text(e.name) }`, "TypeError\nstore(\"f\"): value must be JSON-serializable\nRangeError"},
	} {
		res, _ := execScript(t, tool, s, c.script)
		if got := body(t, res); got != c.want {
			t.Fatalf("script %d: %q, want %q", i, got, c.want)
		}
	}
	if len(s.appends) != 1 || string(s.appends[0]) != `{"entries":{"n":1}}` {
		t.Fatalf("appends %s", s.appends)
	}
}

func TestOutputCut(t *testing.T) {
	dir := t.TempDir()
	tool := newTestTool(ModeOn)
	a, _ := json.Marshal(map[string]string{"script": "// @options: {\"max_output_tokens\": 300}\nreturn \"z\".repeat(5000)"})
	res, err := tool.Execute(context.Background(), &tools.Call{ID: "cm1", Args: a, Env: &tools.Env{OutputDir: dir}, Session: echoSession()})
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "cm1.txt")
	got := body(t, res)
	want := strings.Repeat("z", 600) + "\n[... 3800 characters omitted; full output: " + full + " ...]\n" + strings.Repeat("z", 600)
	if got != want {
		t.Fatalf("%q", got)
	}
	b, err := os.ReadFile(full)
	if err != nil || len(b) != 5000 {
		t.Fatalf("full output %d bytes, %v", len(b), err)
	}
}

func TestUpdates(t *testing.T) {
	_, ups := execScript(t, newTestTool(ModeOn), echoSession(), `text("one"); text("two")`)
	if strings.Join(ups, "|") != "one|one\ntwo" {
		t.Fatalf("%q", ups)
	}
}

// Coordinator: scripts reach the active tools only.
func TestRestrict(t *testing.T) {
	list := []tools.Tool{fakeTool{"read"}, fakeTool{"bash"}, fakeTool{"write"}}
	tool := New(Config{Mode: ModeOn, Restrict: true, List: func() []tools.Tool { return list }})
	s := echoSession()
	s.active = []string{"codemode", "read"}
	res, _ := execScript(t, tool, s, `const r = await Promise.allSettled([tools.bash({command: "touch x"}), tools.write({path: "x", content: ""})]); return r.map(x => x.reason.message).join("|")`)
	if got := body(t, res); got != "Unknown tool bash. Callable tools: read|Unknown tool write. Callable tools: read" || len(s.calls) != 0 {
		t.Fatalf("%q %v", got, s.calls)
	}
}

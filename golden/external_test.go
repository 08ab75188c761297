package golden_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// TestExternalACPAgentShape runs the reference external golden with
// ama-rpc itself as the child: task(agent:"acp:ama") spawns `ama` from
// PATH, here a wrapper that runs this binary in --mode acp on its own fake
// script. It exercises our ACP client driver against our ACP server.
//
// Compared by shape with the reference transcript, with the child's own
// wording free: the tool title our ACP server gives a bash call, the
// first-run note, and usage (the reference normalises every usage to
// "<usage>").
func TestExternalACPAgentShape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	want, err := os.ReadFile(filepath.Join(refDir, "external.out.jsonl"))
	if err != nil {
		t.Skipf("reference external.out.jsonl missing: %v", err)
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	childScript := filepath.Join(dir, "child.json")
	if err := os.WriteFile(childScript, []byte(`[{"steps":[{"toolCall":{"name":"bash","arguments":{"command":"echo from-child"}}}]},{"text":"child ran it"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	childHome := filepath.Join(dir, "child-home")
	wrapper := "#!/bin/sh\nHOME='" + childHome + "' AMA_FAKE_SCRIPT='" + childScript + "' exec '" + bin + "' \"$@\" --model fake/echo\n"
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "ama"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	_, _, got := golden.RunCase(t, "../test/fixtures/external/acp-ama")
	compareExternal(t, usageFree(t, want), toolBeforeAsk(t, usageFree(t, got)))
	if _, err := os.Stat(childHome); err != nil {
		t.Errorf("the child ama did not run with its own home: %v", err)
	}
}

// toolBeforeAsk undoes the one known difference of the child: our ACP
// server announces a call that waits for approval as "pending" and reports
// it "in_progress" only once allowed, while ama's child announced it in
// progress before asking. The driver reports a tool at its first
// non-pending status (agents.md §6.2), so our tool lines (the
// tool_execution_update and subagent_update{kind:"tool"} pair) follow the
// child's permission request, response and resolution instead of
// preceding them. Everything else is compared as recorded.
func toolBeforeAsk(t *testing.T, b []byte) []byte {
	t.Helper()
	lines := splitLines(b)
	typ := func(i int) string {
		v, err := golden.Parse(lines[i])
		if err != nil {
			return ""
		}
		o, _ := v.(*golden.Object)
		return o.String("type") + "/" + o.String("toolName")
	}
	for i := 0; i+4 < len(lines); i++ {
		if typ(i) == "permission_request/agent:acp:ama" && typ(i+3) == "tool_execution_update/task" {
			moved := append([][]byte{lines[i+3], lines[i+4]}, lines[i:i+3]...)
			copy(lines[i:i+5], moved)
			break
		}
	}
	return append(bytes.Join(lines, []byte("\n")), '\n')
}

// usageFree replaces every "usage" value by the string "<usage>".
func usageFree(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, l := range splitLines(b) {
		v, err := golden.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(golden.Encode(stripUsage(v)))
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func stripUsage(v golden.Value) golden.Value {
	switch x := v.(type) {
	case *golden.Object:
		for _, k := range x.Keys {
			if k == "usage" {
				x.Values[k] = "<usage>"
				continue
			}
			x.Values[k] = stripUsage(x.Values[k])
		}
	case []golden.Value:
		for i := range x {
			x[i] = stripUsage(x[i])
		}
	}
	return v
}

func compareExternal(t *testing.T, want, got []byte) {
	t.Helper()
	wl, gl := splitLines(want), splitLines(got)
	rules := golden.DefaultShapeRules()
	prose := rules.Prose
	rules.Prose = func(path []string, parent *golden.Object) bool {
		last := path[len(path)-1]
		switch {
		case last == "note", last == "title", last == "partial":
			return true
		case last == "toolName" && parent != nil && parent.String("kind") == "tool":
			return true
		case len(path) == 2 && path[0] == "result" && last == "content":
			return true // the report embeds the child's tool title
		}
		return prose(path, parent)
	}
	if len(wl) != len(gl) {
		t.Errorf("want %d lines, got %d", len(wl), len(gl))
	}
	for i := 0; i < min(len(wl), len(gl)); i++ {
		w, _ := golden.Parse(wl[i])
		g, _ := golden.Parse(gl[i])
		if d := golden.CompareShape(w, g, rules); len(d) > 0 {
			t.Errorf("line %d differs:\n  %s\n  want: %s\n  got:  %s", i+1, strings.Join(d, "\n  "), clip(wl[i]), clip(gl[i]))
		}
	}
	if t.Failed() {
		t.Logf("our transcript:\n%s", got)
	}
}

// TestExternalACPContinue continues a finished acp:ama task: the second
// run is a new child process that resumes the first run's ACP session
// (session/resume), so the child keeps one session file holding both
// prompts. The child's fake echoes the prompt (each process starts its
// script afresh).
func TestExternalACPContinue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	childScript := filepath.Join(dir, "child.json")
	if err := os.WriteFile(childScript, []byte(`{"responses":[],"whenExhausted":"echo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	childHome := filepath.Join(dir, "child-home")
	wrapper := "#!/bin/sh\nHOME='" + childHome + "' AMA_FAKE_SCRIPT='" + childScript + "' exec '" + bin + "' \"$@\" --model fake/echo\n"
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "ama"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	call := func(args string) string { return `{"steps":[{"toolCall":{"name":"task","arguments":` + args + `}}]}` }
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--tools", "read,task", "--trust", "--permission-mode", "full-auto"},
		Env:  map[string]string{"PATH": os.Getenv("PATH")},
		Script: []byte(`{"version":1,"responses":[` + call(`{"prompt":"one","agent":"acp:ama","background":false}`) + `,` +
			call(`{"prompt":"two","taskId":"t1","background":false}`) + `,{"text":"Done."}]}`),
	})
	promptToEnd(t, r)
	var out string
	for _, l := range r.Lines() {
		out += string(l) + "\n"
	}
	for _, want := range []string{`"content":"[task t1] one"`, `"content":"[task t1] two"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(childHome, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("child session files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), `"one"`) || !strings.Contains(string(data), `"two"`) {
		t.Errorf("the resumed session lacks a prompt:\n%s", data)
	}
}

package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// codemodeParallel is reference/ama-goldens/scripts/codemode-parallel.json
// (the same steps, so the test runs without ../shared; TestCodemodeReferenceScript
// replays the shared file itself when it is there).
const codemodeParallel = `{"version":1,"responses":[{"steps":[{"text":"Batching the lookups in one script."},{"toolCall":{"name":"codemode","arguments":{"script":"const [readme, todos, docs] = await Promise.all([\n  tools.read({ path: \"README.md\" }),\n  tools.grep({ pattern: \"TODO\" }),\n  tools.glob({ pattern: \"*.md\" }),\n]);\ntext(\"README lines: \" + readme.trim().split(\"\\n\").length);\ntext(\"TODO hits: \" + todos.trim().split(\"\\n\").length);\nreturn \"markdown files: \" + docs.trim().split(\"\\n\").length;"}}}]},{"text":"Summary written from the codemode output."}],"whenExhausted":"repeat-last"}`

// wireEvent is the part of a tool event the codemode tests read.
type wireEvent struct {
	Type             string `json:"type"`
	ToolCallID       string `json:"toolCallId"`
	ToolName         string `json:"toolName"`
	ParentToolCallID string `json:"parentToolCallId"`
	ViaCodemode      bool   `json:"viaCodemode"`
	IsError          bool   `json:"isError"`
	Partial          string `json:"partial"`
	Result           struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Message struct {
		Role string `json:"role"`
	} `json:"message"`
}

func wireEvents(r *golden.Run) []wireEvent {
	var out []wireEvent
	for _, l := range r.Lines() {
		var e wireEvent
		if json.Unmarshal(l, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// resultText is a tool_execution_end's content as text (a string, or the
// text blocks joined).
func resultText(e wireEvent) string {
	var s string
	if json.Unmarshal(e.Result.Content, &s) == nil {
		return s
	}
	var blocks []struct{ Text string }
	_ = json.Unmarshal(e.Result.Content, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}

func codemodeScript(t *testing.T, script string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": 1, "responses": []any{
		map[string]any{"steps": []any{map[string]any{"toolCall": map[string]any{"name": "codemode", "arguments": map[string]string{"script": script}}}}},
		map[string]any{"text": "done"},
	}, "whenExhausted": "repeat-last"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runCodemode runs one prompt whose reply is script and returns the events
// and the codemode call's end.
func runCodemode(t *testing.T, cfg golden.Config) (*golden.Run, []wireEvent, wireEvent) {
	t.Helper()
	r := golden.Start(t, cfg)
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	r.CloseStdin()
	r.Wait()
	evs := wireEvents(r)
	for _, e := range evs {
		if e.Type == "tool_execution_end" && e.ToolName == "codemode" {
			return r, evs, e
		}
	}
	t.Fatalf("no codemode tool_execution_end:\n%s", r.Stderr())
	return nil, nil, wireEvent{}
}

var parallelResult = regexp.MustCompile(`^Script completed in \d+\.\d\ds\n\nREADME lines: 3\nTODO hits: 2\nmarkdown files: 2$`)

func checkParallel(t *testing.T, script []byte) {
	record := filepath.Join(t.TempDir(), "record.jsonl")
	r, evs, end := runCodemode(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--tools-preset", "codemode"},
		Script:     script,
		Files:      map[string]string{"README.md": "# demo\nline 2\nline 3\n", "notes.md": "TODO one\nTODO two\n"},
		UserConfig: []byte(`{"permission":{"allow":["codemode"]}}`),
		Env:        map[string]string{"AMA_FAKE_RECORD": record},
	})
	if got := resultText(end); !parallelResult.MatchString(got) || end.IsError {
		t.Fatalf("codemode result %q (isError %v)\nstderr:\n%s", got, end.IsError, r.Stderr())
	}
	outer := end.ToolCallID
	var names, ids []string
	start, stop := -1, -1
	toolResults := 0
	for i, e := range evs {
		switch {
		case e.Type == "tool_execution_start" && e.ToolCallID == outer:
			start = i
		case e.Type == "tool_execution_end" && e.ToolCallID == outer:
			stop = i
		case e.Type == "message_end" && e.Message.Role == "toolResult":
			toolResults++
		}
		if e.ParentToolCallID == outer && strings.HasPrefix(e.Type, "tool_execution_") {
			if start < 0 || stop >= 0 {
				t.Errorf("nested %s %s outside the outer call's start and end", e.Type, e.ToolCallID)
			}
			if !e.ViaCodemode {
				t.Errorf("nested %s %s lacks viaCodemode", e.Type, e.ToolCallID)
			}
			if e.Type == "tool_execution_end" {
				names = append(names, e.ToolName)
				ids = append(ids, e.ToolCallID)
			}
		}
	}
	slices.Sort(names)
	slices.Sort(ids)
	if strings.Join(names, ",") != "glob,grep,read" {
		t.Errorf("nested ends %v, want glob, grep, read", names)
	}
	if want := []string{outer + "_n1", outer + "_n2", outer + "_n3"}; !slices.Equal(ids, want) {
		t.Errorf("nested ids %v, want %v", ids, want)
	}
	if toolResults != 1 {
		t.Errorf("%d toolResult message_end, want 1", toolResults)
	}
	// The next model request holds one toolResult: nested calls never
	// enter the context.
	calls := readRecord(t, record)
	if len(calls) != 2 {
		t.Fatalf("%d model requests, want 2", len(calls))
	}
	n := 0
	for _, m := range calls[1].Messages {
		var v struct{ Role string }
		_ = json.Unmarshal(m, &v)
		if v.Role == "toolResult" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("second request holds %d toolResult messages, want 1", n)
	}
	last := evs[len(evs)-1]
	_ = last
	if !strings.Contains(string(joinLines(r)), `Summary written from the codemode output.`) {
		t.Errorf("final text missing")
	}
}

func joinLines(r *golden.Run) []byte {
	var b []byte
	for _, l := range r.Lines() {
		b = append(b, l...)
		b = append(b, '\n')
	}
	return b
}

// The reference script codemode-parallel: one script runs read, grep and
// glob in parallel, the model sees one result.
func TestCodemodeParallel(t *testing.T) { checkParallel(t, []byte(codemodeParallel)) }

// The same from ../shared's copy of the reference goldens.
func TestCodemodeReferenceScript(t *testing.T) {
	b, err := os.ReadFile("../../shared/reference/ama-goldens/scripts/codemode-parallel.json")
	if err != nil {
		t.Skip("../shared reference goldens absent")
	}
	checkParallel(t, b)
}

// A nested call a deny rule refuses rejects inside the script; the other
// call of the batch runs. The command never ran (no marker).
func TestCodemodeNestedDenyRule(t *testing.T) {
	r, evs, end := runCodemode(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--codemode", "on", "--deny", "bash"},
		Script: codemodeScript(t, "const r = await Promise.allSettled([tools.bash({command: \"touch marker\"}), tools.read({path: \"ok.txt\"})]);\nreturn r.map(x => x.status).join(\",\") + \"|\" + (r[0].reason && r[0].reason.message)"),
		Files:  map[string]string{"ok.txt": "fine\n"},
	})
	got := resultText(end)
	if !strings.Contains(got, "\n\nrejected,fulfilled|") || end.IsError {
		t.Fatalf("codemode result %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.Work, "marker")); err == nil {
		t.Fatal("the denied bash ran")
	}
	for _, e := range evs {
		if e.Type == "tool_execution_end" && e.ToolName == "bash" && (!e.IsError || e.ParentToolCallID != end.ToolCallID) {
			t.Fatalf("nested bash end %+v", e)
		}
	}
}

// In plan mode a nested write is refused like a direct one: the file is
// not written and the script sees the refusal.
func TestCodemodeNestedWriteInPlanMode(t *testing.T) {
	r, _, end := runCodemode(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--codemode", "on", "--permission-mode", "plan"},
		Script: codemodeScript(t, "try { await tools.write({path: \"x.txt\", content: \"hi\"}); return \"written\" } catch (e) { return \"refused: \" + e.message }"),
	})
	if got := resultText(end); !strings.Contains(got, "\n\nrefused: ") {
		t.Fatalf("codemode result %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.Work, "x.txt")); err == nil {
		t.Fatal("plan mode let a nested write through")
	}
}

// A nested call that asks is announced with the nested id, viaCodemode
// and the outer call; the client denies it and the script sees the error.
func TestCodemodeNestedApprovalDenied(t *testing.T) {
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--codemode", "on"},
		Script: codemodeScript(t, "try { await tools.bash({command: \"touch marker\"}); return \"ran\" } catch (e) { return \"denied: \" + e.message }"),
	})
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	i := r.WaitFor("permission_request", 1, isType("permission_request"))
	var req struct {
		RequestID string `json:"requestId"`
		Context   struct {
			ToolCallID       string `json:"toolCallId"`
			ParentToolCallID string `json:"parentToolCallId"`
			ViaCodemode      bool   `json:"viaCodemode"`
		} `json:"context"`
	}
	if err := json.Unmarshal(r.Lines()[i], &req); err != nil {
		t.Fatal(err)
	}
	if req.Context.ParentToolCallID == "" || req.Context.ToolCallID != req.Context.ParentToolCallID+"_n1" || !req.Context.ViaCodemode {
		t.Fatalf("permission_request context %+v", req.Context)
	}
	r.Send(`{"id":"no","type":"permission_response","requestId":"` + req.RequestID + `","decision":"deny"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	r.CloseStdin()
	r.Wait()
	var end wireEvent
	for _, e := range wireEvents(r) {
		if e.Type == "tool_execution_end" && e.ToolName == "codemode" {
			end = e
		}
	}
	if got := resultText(end); !strings.Contains(got, "\n\ndenied: ") {
		t.Fatalf("codemode result %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.Work, "marker")); err == nil {
		t.Fatal("the denied bash ran")
	}
}

// PreToolUse and PostToolUse hooks see nested calls under the real tool
// name with viaCodemode and parentToolCallId; the outer call has neither.
func TestCodemodeHooksSeeViaCodemode(t *testing.T) {
	hooksJSON := `{"version":1,"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"cat >> pre.jsonl; echo >> pre.jsonl"}]}],"PostToolUse":[{"matcher":"read","hooks":[{"type":"command","command":"cat >> post.jsonl; echo >> post.jsonl"}]}]}}`
	r, _, end := runCodemode(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--codemode", "on", "--trust"},
		Script: codemodeScript(t, "return await tools.read({path: \"ok.txt\"})"),
		Files:  map[string]string{"ok.txt": "fine\n", ".ama/hooks.json": hooksJSON},
	})
	if end.IsError {
		t.Fatalf("codemode failed: %s", resultText(end))
	}
	type input struct {
		ToolCallID       string `json:"toolCallId"`
		ToolName         string `json:"toolName"`
		ViaCodemode      *bool  `json:"viaCodemode"`
		ParentToolCallID string `json:"parentToolCallId"`
	}
	read := func(name string) []input {
		b, err := os.ReadFile(filepath.Join(r.Work, name))
		if err != nil {
			t.Fatal(err)
		}
		var out []input
		for _, l := range strings.Split(string(b), "\n") {
			var in input
			if strings.TrimSpace(l) != "" && json.Unmarshal([]byte(l), &in) == nil {
				out = append(out, in)
			}
		}
		return out
	}
	pre := read("pre.jsonl")
	if len(pre) != 2 {
		t.Fatalf("PreToolUse inputs %+v", pre)
	}
	outer, nested := pre[0], pre[1]
	if outer.ToolName != "codemode" || outer.ViaCodemode != nil || outer.ParentToolCallID != "" {
		t.Errorf("outer input %+v", outer)
	}
	if nested.ToolName != "read" || nested.ViaCodemode == nil || !*nested.ViaCodemode || nested.ParentToolCallID != outer.ToolCallID || nested.ToolCallID != outer.ToolCallID+"_n1" {
		t.Errorf("nested input %+v", nested)
	}
	post := read("post.jsonl")
	if len(post) != 1 || post[0].ViaCodemode == nil || post[0].ParentToolCallID != outer.ToolCallID {
		t.Errorf("PostToolUse inputs %+v", post)
	}
}

// A model's direct call of a tool that only scripts reach names the way.
func TestCodemodeOnlyDirectCall(t *testing.T) {
	script, _ := json.Marshal(map[string]any{"version": 1, "responses": []any{
		map[string]any{"steps": []any{map[string]any{"toolCall": map[string]any{"name": "read", "arguments": map[string]string{"path": "x"}}},
			map[string]any{"toolCall": map[string]any{"name": "nope", "arguments": map[string]string{}}}}},
		map[string]any{"text": "done"},
	}, "whenExhausted": "repeat-last"})
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo", "--tools-preset", "codemode-only"}, Script: script})
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	r.CloseStdin()
	r.Wait()
	got := map[string]string{}
	for _, e := range wireEvents(r) {
		if e.Type == "tool_execution_end" {
			got[e.ToolName] = resultText(e)
		}
	}
	if got["read"] != "Tool read is only callable inside a codemode script: tools.read({...})" || got["nope"] != "Tool nope not found" {
		t.Fatalf("%q", got)
	}
}

// A nested call's result goes to the script, not into the model's context:
// it keeps up to tools.NestedMaxResultChars (1 MiB), so a script sees every
// line of a 100 KB file and of a command's 100 KB output, where a call of
// the model would get 30,000 characters and a note.
func TestCodemodeNestedResultsKeepAMebibyte(t *testing.T) {
	line := strings.Repeat("x", 60)
	var big strings.Builder
	for i := 1; i < 1500; i++ {
		big.WriteString(line + "\n")
	}
	big.WriteString("END\n")
	script := `const f = await tools.read({path: "big.txt"});
const b = await tools.bash({command: "for i in $(seq 1500); do echo ` + line + `; done"});
const lines = f.trimEnd().split("\n");
return "read " + lines.length + " " + lines[lines.length-1].endsWith("END") + " bash " + b.output.trimEnd().split("\n").length + " " + b.truncated`
	_, evs, end := runCodemode(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--codemode", "on", "--allow", "bash"},
		Script: codemodeScript(t, script),
		Files:  map[string]string{"big.txt": big.String()},
	})
	if got := resultText(end); end.IsError || !strings.HasSuffix(got, "\n\nread 1500 true bash 1500 false") {
		t.Fatalf("codemode result %q", got)
	}
	for _, e := range evs {
		if e.Type == "tool_execution_end" && e.ParentToolCallID == end.ToolCallID {
			if n := len(resultText(e)); n <= 90_000 || strings.Contains(resultText(e), "[output cut") {
				t.Errorf("nested %s result: %d bytes, cut: %v", e.ToolName, n, strings.Contains(resultText(e), "[output cut"))
			}
		}
	}
}

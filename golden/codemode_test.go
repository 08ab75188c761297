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
	b, err := os.ReadFile("../../../shared/reference/ama-goldens/scripts/codemode-parallel.json")
	if err != nil {
		b, err = os.ReadFile("/work/shared/reference/ama-goldens/scripts/codemode-parallel.json")
	}
	if err != nil {
		t.Skip("../shared reference goldens absent")
	}
	checkParallel(t, b)
}

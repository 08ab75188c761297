package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// A fork child starts from the parent's branch up to the entry before the
// assistant message that made the task call: same system prompt, same
// tool table, the brief as its first own message; its file links to the
// parent's and its first entry names the fork point. A tool outside the
// task's allow-list stays in the table but is refused: the marker file it
// would write is absent.
func TestForkCopiesParentContext(t *testing.T) {
	r := newRig(t, "full-auto",
		taskCall(`{"prompt":"finish the job","agent":"general","background":false,"context":"fork","tools":["read"]}`),
		`C:{"steps":[{"toolCall":{"name":"write","arguments":{"path":"marker.txt","content":"x"}}}]}`,
		`C:{"text":"forked child report"}`,
		`{"text":"done"}`)
	r.prompt("remember the word zebra")

	trs := toolResults(t, r.parent)
	var d taskDetails
	_ = json.Unmarshal(trs[0].Details, &d)
	if d.Context != "fork" || !strings.Contains(llm.JoinText(trs[0].Content, ""), "forked child report") {
		t.Fatalf("details %s content %s", trs[0].Details, llm.JoinText(trs[0].Content, ""))
	}
	if info := r.reg.List()[0]; info.Context != "fork" {
		t.Fatalf("TaskInfo.context = %q", info.Context)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "work", "marker.txt")); err == nil {
		t.Fatal("a tool outside the fork child's allow-list ran")
	}
	child := r.reg.Get("t1").child
	ctrs := toolResults(t, child)
	if len(ctrs) != 1 || !ctrs[0].IsError || llm.JoinText(ctrs[0].Content, "") != "Tool write not found" {
		t.Fatalf("child results %+v", ctrs)
	}

	r.reqMu.Lock()
	preq, creq := r.parentReqs[0], r.childReqs[0]
	r.reqMu.Unlock()
	if creq.System != preq.System || strings.Contains(creq.System, rolePreamble) {
		t.Fatal("the fork child's system prompt differs from the parent's")
	}
	if !reflect.DeepEqual(creq.Tools, preq.Tools) {
		t.Fatalf("tool tables differ: %d vs %d", len(creq.Tools), len(preq.Tools))
	}
	// The child's first request: the parent's user message, then the brief.
	if len(creq.Messages) != 2 {
		t.Fatalf("child request has %d messages", len(creq.Messages))
	}
	if u, ok := creq.Messages[0].(*llm.UserMessage); !ok || u.Content.PlainText() != "remember the word zebra" {
		t.Fatalf("first message %#v", creq.Messages[0])
	}
	brief := creq.Messages[1].(*llm.UserMessage).Content.PlainText()
	for _, want := range []string{"<task>\n", "<instructions>\nfinish the job\n</instructions>", "bash, write", "\n</task>"} {
		if !strings.Contains(brief, want) {
			t.Fatalf("brief lacks %q:\n%s", want, brief)
		}
	}

	// The child's file: header parentSession, first entry ama.task with
	// context fork and forkedFrom = the parent's user message entry.
	pfile, _ := r.parent.SessionFile()
	snap, err := store.ReadSnapshot(r.reg.Get("t1").SessionFile())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Header.ParentSession != pfile {
		t.Fatalf("parentSession %q, want %q", snap.Header.ParentSession, pfile)
	}
	first := snap.Entries[0]
	if first.Type != store.TypeCustom || first.CustomType() != taskCustomType {
		t.Fatalf("first entry %s", first.Body())
	}
	head, err := store.CustomData[childTaskData](first)
	if err != nil {
		t.Fatalf("first entry %s", first.Body())
	}
	pentries, _, _ := r.parent.Entries("")
	var userID string // the entry before the assistant message with the call
	for i, e := range pentries {
		if m, err := e.Message(); err == nil && i > 0 {
			if a, ok := m.(*llm.AssistantMessage); ok && len(a.ToolCalls()) > 0 && userID == "" {
				userID = pentries[i-1].ID
			}
		}
	}
	if head.Context != "fork" || head.ForkedFrom != userID || head.TaskID != "t1" || head.ParentToolCallID == "" {
		t.Fatalf("first entry data %+v (user entry %s)", head, userID)
	}
	if snap.Entries[1].ParentID == nil || *snap.Entries[1].ParentID != first.ID {
		t.Fatal("the copied branch does not hang under the ama.task entry")
	}
}

// A parent whose last prompt is over half of (window - reserve) does not
// fork: the child starts fresh and says so.
func TestForkOverBudgetFallsBack(t *testing.T) {
	r := newRig(t, "full-auto",
		`{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"p","agent":"general","background":false,"context":"fork"}}}],"usage":{"input":150000}}`,
		`C:{"text":"fresh child"}`,
		`{"text":"done"}`)
	r.prompt("go")
	var d taskDetails
	_ = json.Unmarshal(toolResults(t, r.parent)[0].Details, &d)
	if d.Context != "fresh" {
		t.Fatalf("context %q", d.Context)
	}
	r.reqMu.Lock()
	defer r.reqMu.Unlock()
	if len(r.childReqs) != 1 || !strings.Contains(r.childReqs[0].System, rolePreamble) {
		t.Fatal("the fallback child is not a fresh child with its role")
	}
}

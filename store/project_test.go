package store_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

func projectFixture(t *testing.T) *store.Tree {
	t.Helper()
	snap, err := store.ReadSnapshot(filepath.Join("testdata", "project.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return snap.Tree()
}

// roleText renders a message as "role:text" for compact comparisons.
func roleText(m llm.Message) string {
	switch m := m.(type) {
	case *llm.UserMessage:
		return "user:" + m.Content.PlainText()
	case *llm.AssistantMessage:
		return "assistant:" + m.Text("|")
	case *llm.ToolResultMessage:
		return "toolResult:" + llm.JoinText(m.Content, "|")
	case *llm.SystemMessage:
		return "system:" + joinSections(m.Sections)
	case *llm.CustomMessage:
		return "custom:" + m.CustomType + ":" + m.Content.PlainText()
	case *llm.CompactionSummary:
		return "compactionSummary:" + m.Summary
	case *llm.BranchSummary:
		return "branchSummary:" + m.Summary + "<" + m.FromID
	}
	return "?"
}

func joinSections(s llm.Sections) string {
	out := ""
	for _, p := range s.List() {
		out += p + ","
	}
	return out
}

func toolNames(tools []llm.ToolDecl) []string {
	out := []string{}
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func project(t *testing.T, branch []*store.Entry) ([]string, store.ProjectionInfo) {
	t.Helper()
	msgs, info, err := store.Project(branch)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Entries) != len(msgs) {
		t.Fatalf("%d source entries for %d messages", len(info.Entries), len(msgs))
	}
	out := []string{}
	for _, m := range msgs {
		out = append(out, roleText(m))
	}
	return out, info
}

func TestProjectCompaction(t *testing.T) {
	tr := projectFixture(t)
	got, info := project(t, tr.Branch())
	want := []string{
		"system:P,T,M,",         // checkpoint: s1 + s2 (rules deleted by null, memory added)
		"compactionSummary:SUM", // the compaction
		"user:second",           // kept from firstKeptEntryId (s2 is before it)
		"assistant:short",       // latest context_edit wins
		// t2 removed by a null context_edit
		"custom:ama.hook_context:hook says",
		"user:third, edited", // block content replaced by string content
		"branchSummary:abandoned<x9",
		"system:/w,", // a patch after the compaction stays a patch
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cp", "cp", "u2", "a2", "cm", "u3", "bs", "s3"}, ids(info.Entries)); diff != "" {
		t.Errorf("source entries:\n%s", diff)
	}
	if info.Compaction == nil || info.Compaction.ID != "cp" {
		t.Errorf("compaction = %v", info.Compaction)
	}
	if info.Model == nil || *info.Model != (store.ModelRef{Provider: "fake", ID: "echo"}) || info.ThinkingLevel != "high" {
		t.Errorf("model %v thinking %q", info.Model, info.ThinkingLevel)
	}
	if info.System == nil {
		t.Fatal("no system state")
	}
	if s := joinSections(info.System.Sections); s != "P,T,M,/w," {
		t.Errorf("effective sections %q", s)
	}
	if info.System.Sections.Rules != nil {
		t.Error("rules section not deleted by null")
	}
	if diff := cmp.Diff([]string{"read", "grep"}, toolNames(info.System.Tools)); diff != "" {
		t.Errorf("effective tools:\n%s", diff)
	}

	msgs, _, _ := store.Project(tr.Branch())
	cp := msgs[0].(*llm.SystemMessage)
	if cp.Timestamp != mustTime("2026-10-01T00:00:14.000Z").UnixMilli() {
		t.Errorf("checkpoint timestamp %d", cp.Timestamp)
	}
	if diff := cmp.Diff([]string{"read", "grep"}, toolNames(cp.ToolsAdded)); diff != "" {
		t.Errorf("checkpoint tools:\n%s", diff)
	}
	cm := msgs[4].(*llm.CustomMessage)
	if cm.Display || string(cm.Details) != `{"hook":"h1"}` || cm.Timestamp != mustTime("2026-10-01T00:00:12.000Z").UnixMilli() {
		t.Errorf("custom message %+v", cm)
	}
	// Edits copy: the cached message of a2 is untouched.
	a2, _ := tr.Get("a2").Message()
	if got := roleText(a2); got != "assistant:long answer" || len(a2.(*llm.AssistantMessage).Content) != 3 {
		t.Errorf("cached a2 modified: %s", got)
	}
	edited := msgs[3].(*llm.AssistantMessage)
	if edited.StopReason != llm.StopToolUse || edited.Model != "echo" || len(edited.Content) != 1 {
		t.Errorf("edited assistant lost its metadata or kept blocks: %+v", edited)
	}
}

func TestProjectWithoutCompaction(t *testing.T) {
	tr := projectFixture(t)
	got, info := project(t, tr.Path("cm"))
	want := []string{
		"system:P,T,R,", "user:first", "assistant:answer one", "system:M,",
		"user:second", "assistant:short", "custom:ama.hook_context:hook says",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if info.Compaction != nil || info.ThinkingLevel != "" {
		t.Errorf("compaction %v thinking %q", info.Compaction, info.ThinkingLevel)
	}
	if s := joinSections(info.System.Sections); s != "P,T,M," {
		t.Errorf("effective sections %q", s)
	}
}

func TestProjectEdits(t *testing.T) {
	u := withIDs(store.MessageEntry(llm.NewUser("hello", 1, "")), "u", nil)
	tool := withIDs(store.MessageEntry(&llm.ToolResultMessage{
		Role: llm.RoleToolResult, ToolCallID: "c", ToolName: "read",
		Content: []llm.Content{llm.Text("big"), llm.Image("AAAA", "image/png")}, Timestamp: 2,
	}), "tr", ptr("u"))
	cm := withIDs(store.CustomMessageEntry(llm.NewCustom("x", "custom text", true, 0)), "cm", ptr("tr"))
	bs := withIDs(store.BranchSummaryEntry("z", "old summary", nil), "bs", ptr("cm"))
	sys := withIDs(store.MessageEntry(&llm.SystemMessage{Role: llm.RoleSystem, Sections: llm.Sections{Preamble: ptr("P")}}), "sys", ptr("bs"))
	edits := []*store.Entry{
		withIDs(store.ContextEditEntry("u", ptr("hi"), "manual"), "e1", ptr("sys")),
		withIDs(store.ContextEditEntry("tr", ptr("[pruned]"), "prune"), "e2", ptr("e1")),
		withIDs(store.ContextEditEntry("cm", ptr("short custom"), "manual"), "e3", ptr("e2")),
		withIDs(store.ContextEditEntry("bs", ptr("new summary"), "manual"), "e4", ptr("e3")),
		withIDs(store.ContextEditEntry("sys", ptr("ignored"), "manual"), "e5", ptr("e4")),
		withIDs(store.ContextEditEntry("missing", nil, "manual"), "e6", ptr("e5")),
	}
	branch := append([]*store.Entry{u, tool, cm, bs, sys}, edits...)
	got, _ := project(t, branch)
	want := []string{"user:hi", "toolResult:[pruned]", "custom:x:short custom", "branchSummary:new summary<z", "system:P,"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	msgs, _, _ := store.Project(branch)
	if tr := msgs[1].(*llm.ToolResultMessage); len(tr.Content) != 1 || tr.ToolCallID != "c" {
		t.Errorf("tool result %+v", tr)
	}
	if um := msgs[0].(*llm.UserMessage); um.Content.IsBlocks {
		t.Error("user edit should give string content")
	}
}

func TestProjectMalformed(t *testing.T) {
	bad := withIDs(store.RawEntry(store.TypeMessage, json.RawMessage(`{"message":{"role":"wizard"}}`)), "w", nil)
	if _, _, err := store.Project([]*store.Entry{bad}); !errors.Is(err, store.ErrMalformedEntry) {
		t.Fatalf("err = %v, want ErrMalformedEntry", err)
	}
	badCustom := withIDs(store.RawEntry(store.TypeCustomMessage, json.RawMessage(`{"customType":"x","content":5}`)), "c", nil)
	if _, _, err := store.Project([]*store.Entry{badCustom}); !errors.Is(err, store.ErrMalformedEntry) {
		t.Fatalf("err = %v, want ErrMalformedEntry", err)
	}
}

func TestProjectEmpty(t *testing.T) {
	msgs, info, err := store.Project(nil)
	if err != nil || len(msgs) != 0 || info.System != nil || info.Model != nil {
		t.Fatalf("%v %v %+v", msgs, err, info)
	}
}

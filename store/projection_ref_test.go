package store

// The projection before issue 19 (project once and keep it), kept verbatim
// as the reference: NewProjection, Project and Projection.Append must give
// exactly its context for every branch.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
)

func refProject(branch []*Entry) ([]llm.Message, ProjectionInfo, error) {
	var info ProjectionInfo
	type edit struct {
		remove bool
		text   string
	}
	edits := map[string]edit{}
	at := -1
	for i, e := range branch {
		switch e.Type {
		case TypeContextEdit:
			target, ok := jsonobj.StringField(e.Body(), "targetId")
			if !ok {
				continue
			}
			repl := jsonobj.Field(e.Body(), "replacement")
			switch {
			case len(repl) > 0 && repl[0] == 'n':
				edits[target] = edit{remove: true}
			case len(repl) > 0 && repl[0] == '"':
				edits[target] = edit{text: jsonobj.Unquote(repl)}
			}
		case TypeModelChange:
			var m struct {
				Provider string `json:"provider"`
				ModelID  string `json:"modelId"`
				Channel  string `json:"channel"`
			}
			if err := json.Unmarshal(e.Body(), &m); err != nil {
				return nil, info, malformed(e, err)
			}
			info.Model = &ModelRef{Provider: m.Provider, ID: m.ModelID, Channel: m.Channel}
		case TypeThinkingLevelChange:
			info.ThinkingLevel, _ = jsonobj.StringField(e.Body(), "thinkingLevel")
		case TypeCompaction:
			at = i
		}
	}

	var msgs []llm.Message
	var sys *SystemState
	ctxEntries := branch
	if at >= 0 {
		comp := branch[at]
		info.Compaction = comp
		for _, e := range branch[:at] {
			if refIsSystemEntry(e) {
				if err := applySystem(&sys, e); err != nil {
					return nil, info, err
				}
			}
		}
		if sys != nil {
			cp := &llm.SystemMessage{
				Role: llm.RoleSystem, Sections: sys.Sections,
				Timestamp: epochMs(comp.Timestamp), ToolsAdded: slices.Clone(sys.Tools),
			}
			msgs = append(msgs, cp)
			info.Entries = append(info.Entries, comp)
		}
		first, _ := jsonobj.StringField(comp.Body(), "firstKeptEntryId")
		ctxEntries = []*Entry{comp}
		if k := slices.IndexFunc(branch, func(e *Entry) bool { return e.ID == first }); k >= 0 && k < at {
			for _, e := range branch[k:at] {
				if !refIsSystemEntry(e) {
					ctxEntries = append(ctxEntries, e)
				}
			}
		}
		ctxEntries = append(ctxEntries, branch[at+1:]...)
	}

	for _, e := range ctxEntries {
		m, ok, err := e.contextMessage()
		if err != nil {
			return nil, info, err
		}
		if !ok {
			continue
		}
		if ed, ok := edits[e.ID]; ok {
			if ed.remove {
				continue
			}
			m = withText(m, ed.text)
		}
		if m.MessageRole() == llm.RoleSystem && e.Type == TypeMessage {
			if err := applySystem(&sys, e); err != nil {
				return nil, info, err
			}
		}
		msgs = append(msgs, m)
		info.Entries = append(info.Entries, e)
	}
	info.System = sys
	return msgs, info, nil
}

// refIsSystemEntry is the role check of the reference: a full scan.
func refIsSystemEntry(e *Entry) bool {
	if e.Type != TypeMessage {
		return false
	}
	role, _ := jsonobj.StringField(jsonobj.Field(e.Body(), "message"), "role")
	return role == llm.RoleSystem
}

// projGen grows a random session tree: appends at the leaf, rewinds and
// branches (the leaf moves to an earlier entry), compactions keeping a
// random tail, context edits, system patches (some in a member order that
// defeats the fast role check), model and thinking changes.
type projGen struct {
	r    *rand.Rand
	tree *Tree
	n    int
}

func (g *projGen) id() string { g.n++; return fmt.Sprintf("e%04d", g.n) }

func (g *projGen) branchID() string {
	b := g.tree.Branch()
	if len(b) == 0 {
		return "none"
	}
	return b[g.r.IntN(len(b))].ID
}

func (g *projGen) next() *Entry {
	r := g.r
	ts := 1_700_000_000_000 + int64(g.n)
	var e *Entry
	switch k := r.IntN(20); {
	case k < 4:
		e = MessageEntry(llm.NewUser(fmt.Sprintf("user %d", g.n), ts, ""))
	case k < 7:
		e = MessageEntry(&llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text(fmt.Sprintf("reply %d", g.n))},
			StopReason: llm.StopStop, Timestamp: ts, Usage: llm.Usage{Input: g.n, TotalTokens: g.n + 5}})
	case k < 9:
		e = MessageEntry(&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: "c", ToolName: "read",
			Content: []llm.Content{llm.Text("file")}, Timestamp: ts})
	case k == 9:
		bodies := []string{
			`{"message":{"role":"system","sections":{"preamble":"p%d","memory":"m"},"toolsAdded":[{"name":"read","description":"r","parameters":{}}],"timestamp":1}}`,
			`{"message":{"role":"system","sections":{"memory":null,"skills":"s%d"},"toolsRemoved":["read"],"timestamp":2}}`,
			`{"message":{"timestamp":3,"role":"system","sections":{"cwd":"/w%d"},"toolsAdded":[{"name":"bash","description":"b","parameters":{}}]}}`,
			`{"message": {"role": "system", "sections": {"rules": "r%d"}, "timestamp": 4}}`,
		}
		e = RawEntry(TypeMessage, json.RawMessage(fmt.Sprintf(bodies[r.IntN(len(bodies))], g.n)))
	case k == 10:
		e = CustomMessageEntry(&llm.CustomMessage{CustomType: "note", Content: llm.StringContent(fmt.Sprintf("note %d", g.n)), Display: true})
	case k == 11:
		e = BranchSummaryEntry(g.branchID(), fmt.Sprintf("branch summary %d", g.n), nil)
	case k == 12:
		first := g.branchID()
		if r.IntN(5) == 0 {
			first = "unknown"
		}
		e = CompactionEntry(fmt.Sprintf("summary %d", g.n), first, 1000, nil)
	case k == 13:
		var repl *string
		if r.IntN(2) == 0 {
			s := fmt.Sprintf("edited %d", g.n)
			repl = &s
		}
		e = ContextEditEntry(g.branchID(), repl, "test")
	case k == 14:
		e = ModelChangeEntry("p", fmt.Sprintf("m%d", r.IntN(3)), "")
	case k == 15:
		e = ThinkingLevelEntry([]string{"off", "low", "high"}[r.IntN(3)])
	case k == 16:
		e = LabelEntry(g.branchID(), "l")
	default:
		e = CustomEntry("ama.trace", map[string]int{"n": g.n})
	}
	e.ID = g.id()
	e.ParentID = g.tree.Leaf()
	e.Timestamp = "2026-10-02T05:23:11.123Z"
	return e
}

// sameProjection fails unless msgs and info equal the reference projection
// of branch.
func sameProjection(t *testing.T, what string, branch []*Entry, msgs []llm.Message, info ProjectionInfo) {
	t.Helper()
	want, winfo, err := refProject(branch)
	if err != nil {
		t.Fatalf("%s: reference: %v", what, err)
	}
	enc := func(ms []llm.Message) []string {
		out := []string{}
		for _, m := range ms {
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return out
	}
	ids := func(es []*Entry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	if d := cmp.Diff(enc(want), enc(msgs)); d != "" {
		t.Fatalf("%s: messages differ (-reference +new):\n%s", what, d)
	}
	if d := cmp.Diff(ids(winfo.Entries), ids(info.Entries)); d != "" {
		t.Fatalf("%s: entries differ:\n%s", what, d)
	}
	if winfo.Compaction != info.Compaction || !cmp.Equal(winfo.Model, info.Model) || winfo.ThinkingLevel != info.ThinkingLevel {
		t.Fatalf("%s: info differs: %+v vs %+v", what, winfo, info)
	}
	if d := cmp.Diff(winfo.System, info.System); d != "" {
		t.Fatalf("%s: system differs:\n%s", what, d)
	}
}

func messagesOf(t *testing.T, p *Projection) []llm.Message {
	t.Helper()
	var out []llm.Message
	for i := range p.Len() {
		m, err := p.Message(i)
		if err != nil {
			t.Fatal(err)
		}
		if sys := m.MessageRole() == llm.RoleSystem; sys != p.IsSystem(i) {
			t.Fatalf("message %d: IsSystem %v, role %s", i, p.IsSystem(i), m.MessageRole())
		}
		out = append(out, m)
	}
	return out
}

// TestProjectionMatchesReference grows random trees and checks, after every
// step, that the full projection (Project), and the projection kept up to
// date with Append (projected afresh only when Append refuses or the leaf
// moved), both equal the reference projection of the active branch.
func TestProjectionMatchesReference(t *testing.T) {
	seeds := uint64(60)
	if testing.Short() || raceOn { // 15 under make test's -race (~10x the time)
		seeds = 15
	}
	for seed := range seeds {
		g := &projGen{r: rand.New(rand.NewPCG(seed, 19)), tree: NewTree(nil, nil)}
		kept, err := NewProjection(nil)
		if err != nil {
			t.Fatal(err)
		}
		rebuilt := 0
		for step := range 150 {
			what := fmt.Sprintf("seed %d step %d", seed, step)
			if g.r.IntN(12) == 0 && g.tree.Len() > 0 { // rewind / branch
				target := g.tree.Entries()[g.r.IntN(g.tree.Len())].ID
				if err := g.tree.SetLeaf(&target); err != nil {
					t.Fatal(err)
				}
			}
			e := g.next()
			leaf := kept.Last()
			g.tree.Append(e)
			branch := g.tree.Branch()
			msgs, info, err := Project(branch)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			sameProjection(t, what+" (Project)", branch, msgs, info)

			if leaf == nil || e.ParentID == nil || *e.ParentID != leaf.ID || !kept.Append(e) {
				if kept, err = NewProjection(branch); err != nil {
					t.Fatal(err)
				}
				rebuilt++
			}
			sameProjection(t, what+" (kept)", branch, messagesOf(t, kept), kept.Info)
			if got, want := kept.Fresh(), refFresh(branch, kept.Info); got != want {
				t.Fatalf("%s: fresh %d, want %d", what, got, want)
			}
			model, level, err := BranchSettings(branch)
			if err != nil || !cmp.Equal(model, info.Model) || level != info.ThinkingLevel {
				t.Fatalf("%s: BranchSettings %+v %q %v, projection %+v %q", what, model, level, err, info.Model, info.ThinkingLevel)
			}
		}
		if rebuilt > 100 {
			t.Errorf("seed %d: projected afresh %d times in 150 steps", seed, rebuilt)
		}
	}
}

// refFresh is the first message whose entry comes after the latest
// compaction on branch (as the session computed it before).
func refFresh(branch []*Entry, info ProjectionInfo) int {
	if info.Compaction == nil {
		return 0
	}
	cut := slices.Index(branch, info.Compaction)
	pos := map[*Entry]int{}
	for i, e := range branch {
		pos[e] = i
	}
	for i, e := range info.Entries {
		if pos[e] > cut {
			return i
		}
	}
	return len(info.Entries)
}

// TestPrefixChecks pins the fast role and customType reads to the full
// scan for the bodies the package writes and for ones that defeat them.
func TestPrefixChecks(t *testing.T) {
	bodies := []string{
		`{"message":{"role":"system","sections":{}}}`,
		`{"message":{"role":"user","content":"system"}}`,
		`{"message":{"role":"sys\u0074em","sections":{}}}`,
		`{"message": {"role":"system"}}`,
		`{"message":{"timestamp":1,"role":"system"}}`,
		`{"customType":"ama.plan","data":{}}`,
		`{"customType":"ama\u002eplan","data":{}}`,
		`{"data":{},"customType":"ama.todo"}`,
		`{"customType":"x`,
	}
	for _, b := range bodies {
		msg := RawEntry(TypeMessage, json.RawMessage(b))
		if got, want := isSystemEntry(msg), refIsSystemEntry(msg); got != want {
			t.Errorf("isSystemEntry(%s) = %v, full scan %v", b, got, want)
		}
		custom := RawEntry(TypeCustom, json.RawMessage(b))
		want, _ := jsonobj.StringField(custom.Body(), "customType")
		if got := custom.CustomType(); got != want {
			t.Errorf("CustomType(%s) = %q, full scan %q", b, got, want)
		}
	}
}

// TestLabelAndNameFastPaths pins the fast label and session-name reads to
// the full scan.
func TestLabelAndNameFastPaths(t *testing.T) {
	for _, b := range []string{
		`{"targetId":"a1","label":"x y"}`,
		`{"targetId":"a1"}`,
		`{"targetId":"a1","label":""}`,
		`{"targetId":"a\u0031","label":"x"}`,
		`{"targetId":"a1","label":"x\n"}`,
		`{"targetId":"a1","label":"x","label":"y"}`,
		`{"targetId":"a1","label":"x","extra":1}`,
		`{"label":"x","targetId":"a1"}`,
		`{"targetId":5,"label":"x"}`,
		`{"name":"n"}`,
		`{"name":"n","name":"m"}`,
		`{"name":"\u006e"}`,
		`{"other":"n"}`,
	} {
		body := []byte(b)
		target, label, ok := labelFields(body)
		wt, wok := jsonobj.StringField(body, "targetId")
		wl, _ := jsonobj.StringField(body, "label")
		if !wok {
			wl = ""
		}
		if target != wt || label != wl || ok != wok {
			t.Errorf("labelFields(%s) = %q %q %v, full scan %q %q %v", b, target, label, ok, wt, wl, wok)
		}
		wn, _ := jsonobj.StringField(body, "name")
		if got := sessionName(body); got != wn {
			t.Errorf("sessionName(%s) = %q, full scan %q", b, got, wn)
		}
	}
}

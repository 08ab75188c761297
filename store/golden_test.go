package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// goldenDir holds the reference fixtures of spec §5.7. They are read in
// place (never copied into the repository); tests skip when it is absent.
const goldenDir = "../../shared/reference/ama-goldens/sessions"

func goldenFile(t testing.TB, name string) string {
	t.Helper()
	if _, err := os.Stat(goldenDir); err != nil {
		t.Skipf("reference session fixtures not available (%v); skipping", err)
	}
	return filepath.Join(goldenDir, name)
}

type goldenCase struct {
	file string
	// Failure: reason prefix and line of the *CorruptError.
	reason string
	line   int
	// Success.
	ids       []string
	leaf      string // "" = nil leaf (empty branch)
	name      string
	repaired  bool // half line dropped
	missingNL bool // complete last line without LF
	parent    string
	// Listing.
	subagent     bool
	messageCount int
	firstPrompt  string
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{file: "header-only.jsonl", ids: []string{}},
		{file: "blank-first.jsonl", ids: []string{"i1"}, leaf: "i1", messageCount: 1, firstPrompt: "after blanks"},
		{file: "crlf.jsonl", ids: []string{"b1", "b2", "b3"}, leaf: "b3", name: "crlf", messageCount: 2, firstPrompt: "crlf prompt"},
		{file: "complete-no-lf.jsonl", ids: []string{"d1", "d2"}, leaf: "d2", missingNL: true, messageCount: 2, firstPrompt: "no trailing newline"},
		{file: "half-line.jsonl", ids: []string{"c1", "c2"}, leaf: "c2", repaired: true, messageCount: 2, firstPrompt: "half prompt"},
		{file: "corrupt-middle.jsonl", reason: store.ReasonInvalidJSON, line: 3},
		{file: "truncated-middle.jsonl", reason: store.ReasonInvalidJSON, line: 3},
		{file: "duplicate-header.jsonl", reason: store.ReasonDuplicateHeader, line: 3},
		{file: "version2.jsonl", reason: "unsupported session format version 2 (this ama reads version 1)"},
		{file: "bad-leaf.jsonl", reason: store.ReasonMalformedLeaf, line: 3},
		{file: "fork.jsonl", ids: []string{"h1"}, leaf: "h1", parent: "/work/parent.jsonl", messageCount: 1, firstPrompt: "forked"},
		{file: "subagent.jsonl", ids: []string{"g1", "g2", "g3"}, leaf: "g3", parent: "/work/parent.jsonl", subagent: true, messageCount: 2, firstPrompt: "sub task"},
		{
			file: "renames-leaf.jsonl", ids: []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"},
			leaf: "", name: "最终名字", messageCount: 4,
			firstPrompt: "第一条提示 " + strings.Repeat("x", 200-6),
		},
		{
			file: "foreign.jsonl", ids: []string{"f1", "f2", "f3", "f4", "f5", "f6"}, leaf: "f6",
			name: "foreign name", messageCount: 3, firstPrompt: "foreign first",
		},
	}
}

func TestGoldenFixturesCovered(t *testing.T) {
	goldenFile(t, "")
	names, err := filepath.Glob(filepath.Join(goldenDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, c := range goldenCases() {
		covered[c.file] = true
	}
	for _, n := range names {
		if !covered[filepath.Base(n)] {
			t.Errorf("fixture %s has no expected outcome in goldenCases", filepath.Base(n))
		}
	}
}

func checkSnapshot(t *testing.T, c goldenCase, snap *store.Snapshot) {
	t.Helper()
	if diff := cmp.Diff(c.ids, ids(snap.Entries)); diff != "" {
		t.Errorf("entry ids (-want +got):\n%s", diff)
	}
	gotLeaf := ""
	if snap.LeafID != nil {
		gotLeaf = *snap.LeafID
		if gotLeaf == "" {
			t.Errorf("leaf is a pointer to an empty id")
		}
	}
	if gotLeaf != c.leaf {
		t.Errorf("leaf = %q, want %q", gotLeaf, c.leaf)
	}
	if snap.Name != c.name {
		t.Errorf("name = %q, want %q", snap.Name, c.name)
	}
	if snap.RepairedTail != c.repaired || snap.MissingNewline != c.missingNL {
		t.Errorf("repaired/missingNL = %v/%v, want %v/%v", snap.RepairedTail, snap.MissingNewline, c.repaired, c.missingNL)
	}
	if snap.Header.ParentSession != c.parent {
		t.Errorf("parentSession = %q, want %q", snap.Header.ParentSession, c.parent)
	}
	if snap.Header.Type != "session" || snap.Header.Version != 1 || snap.Header.Cwd != "/work/proj" || snap.Header.ID == "" {
		t.Errorf("header = %+v", snap.Header)
	}
}

func checkCorrupt(t *testing.T, c goldenCase, path string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	var ce *store.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("err %T is not a *CorruptError", err)
	}
	if !strings.HasPrefix(ce.Reason, c.reason) || ce.Line != c.line || ce.Path != path {
		t.Errorf("corrupt = {%s %d %q}, want {%s %d %q}", ce.Path, ce.Line, ce.Reason, path, c.line, c.reason)
	}
}

func TestGoldenReadSnapshot(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.file, func(t *testing.T) {
			path := goldenFile(t, c.file)
			before := readBytes(t, path)
			snap, err := store.ReadSnapshot(path)
			if c.reason != "" {
				checkCorrupt(t, c, path, err)
			} else {
				if err != nil {
					t.Fatal(err)
				}
				checkSnapshot(t, c, snap)
			}
			if !bytes.Equal(before, readBytes(t, path)) {
				t.Fatal("ReadSnapshot modified the fixture")
			}
		})
	}
}

// TestGoldenOpen opens a temporary copy of each fixture for writing and
// checks the repair effects: a half line is truncated, a missing final LF
// is added, everything else (corrupt files in particular) is left byte for
// byte as it was.
func TestGoldenOpen(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.file, func(t *testing.T) {
			path := copyTo(t, goldenFile(t, c.file), t.TempDir())
			before := readBytes(t, path)
			f, snap, err := store.Open(path, store.OpenOptions{})
			after := readBytes(t, path)
			if c.reason != "" {
				checkCorrupt(t, c, path, err)
				if !bytes.Equal(before, after) {
					t.Fatal("Open rewrote a corrupt file")
				}
				if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
					t.Fatalf("lock left behind after failed Open: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkSnapshot(t, c, snap)
			want := before
			switch {
			case c.repaired:
				cut := bytes.LastIndexByte(before, '\n')
				want = before[:cut+1]
			case c.missingNL:
				want = append(bytes.Clone(before), '\n')
			}
			if !bytes.Equal(after, want) {
				t.Fatalf("file after Open:\n%q\nwant\n%q", after, want)
			}
			// The repaired file reads back clean.
			again, err := store.ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			if again.RepairedTail || again.MissingNewline || len(again.Entries) != len(snap.Entries) {
				t.Fatalf("after repair: repaired=%v missingNL=%v entries=%d", again.RepairedTail, again.MissingNewline, len(again.Entries))
			}
		})
	}
}

func TestGoldenList(t *testing.T) {
	dir := t.TempDir()
	want := map[string]goldenCase{}
	for _, c := range goldenCases() {
		copyTo(t, goldenFile(t, c.file), dir)
		if c.reason == "" {
			want[filepath.Join(dir, c.file)] = c
		}
	}
	infos, err := store.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(want) {
		t.Errorf("listed %d files, want %d (corrupt ones skipped)", len(infos), len(want))
	}
	for i, info := range infos {
		if i > 0 && filepath.Base(infos[i-1].Path) < filepath.Base(info.Path) {
			t.Errorf("not sorted newest (largest name) first: %s before %s", infos[i-1].Path, info.Path)
		}
		c, ok := want[info.Path]
		if !ok {
			t.Errorf("unexpected listing %s", info.Path)
			continue
		}
		if info.MessageCount != c.messageCount || info.FirstPrompt != c.firstPrompt || info.Name != c.name ||
			info.IsSubagent != c.subagent || info.ParentSession != c.parent || info.Cwd != "/work/proj" {
			t.Errorf("%s: got count=%d prompt=%q name=%q subagent=%v parent=%q cwd=%q", c.file,
				info.MessageCount, info.FirstPrompt, info.Name, info.IsSubagent, info.ParentSession, info.Cwd)
		}
		if info.Modified.IsZero() || info.ID == "" {
			t.Errorf("%s: missing id or mtime: %+v", c.file, info)
		}
	}
}

// TestGoldenForeign checks the file written by another tool: keys in
// another order, spaces after colons, leading spaces, a U+3000-only line.
func TestGoldenForeign(t *testing.T) {
	snap, err := store.ReadSnapshot(goldenFile(t, "foreign.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Header.ID != "s-foreign" || snap.Header.Agent != (store.AgentInfo{Name: "ama", Version: "0.7.3"}) {
		t.Errorf("header = %+v", snap.Header)
	}
	f1 := snap.Entries[0]
	if f1.Type != store.TypeMessage || f1.ParentID != nil || f1.Timestamp != "t" {
		t.Errorf("f1 = %s %v %q", f1.Type, f1.ParentID, f1.Timestamp)
	}
	m, err := f1.Message()
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := m.(*llm.UserMessage); !ok || u.Content.PlainText() != "foreign first" {
		t.Errorf("f1 message = %#v", m)
	}
	m4, err := snap.Entries[3].Message()
	if err != nil || m4.MessageRole() != llm.RoleSystem {
		t.Errorf("f4 = %v, %v; want a system message", m4, err)
	}
	// Re-encoding puts the reserved keys in canonical order.
	got := string(snap.Entries[4].AppendJSON(nil))
	if want := `{"type":"session_info","name":"foreign name","id":"f5","parentId":"f4","timestamp":"t"}`; got != want {
		t.Errorf("f5 = %s\nwant %s", got, want)
	}
}

// TestGoldenRoundTrip re-encodes every readable fixture into a new file and
// reads it back: same entries, same JSON.
func TestGoldenRoundTrip(t *testing.T) {
	for _, c := range goldenCases() {
		if c.reason != "" {
			continue
		}
		t.Run(c.file, func(t *testing.T) {
			snap, err := store.ReadSnapshot(goldenFile(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "copy.jsonl")
			f, err := store.Create(path, snap.Header, snap.Entries)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			back, err := store.ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(lines(t, snap.Entries), lines(t, back.Entries)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if back.Header != snap.Header {
				t.Errorf("header %+v, want %+v", back.Header, snap.Header)
			}
		})
	}
}

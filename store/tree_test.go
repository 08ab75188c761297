package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/store"
)

func treeFixture(t *testing.T) (*store.Snapshot, *store.Tree) {
	t.Helper()
	snap, err := store.ReadSnapshot(filepath.Join("testdata", "tree.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return snap, snap.Tree()
}

func TestTreeQueries(t *testing.T) {
	snap, tr := treeFixture(t)
	if *snap.LeafID != "i" || snap.Name != "tree" || tr.Name() != "tree" {
		t.Fatalf("leaf %v name %q/%q", *snap.LeafID, snap.Name, tr.Name())
	}
	cases := []struct {
		name string
		got  []*store.Entry
		want []string
	}{
		{"branch", tr.Branch(), []string{"r", "a", "d", "e", "f", "g", "h", "i"}},
		{"path c", tr.Path("c"), []string{"r", "a", "b", "c"}},
		{"path r", tr.Path("r"), []string{"r"}},
		{"path unknown", tr.Path("zz"), []string{}},
		{"children a", tr.Children("a"), []string{"b", "d"}},
		{"children c", tr.Children("c"), []string{}},
		{"roots", tr.Roots(), []string{"r"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, ids(c.got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	since, found := tr.Since("c")
	if diff := cmp.Diff([]string{"d", "e", "f", "g", "h", "i"}, ids(since)); diff != "" || !found {
		t.Errorf("since c (found %v):\n%s", found, diff)
	}
	since, found = tr.Since("i")
	if len(since) != 0 || !found {
		t.Errorf("since last = %v, %v", ids(since), found)
	}
	since, found = tr.Since("nope")
	if len(since) != tr.Len() || found {
		t.Errorf("since unknown = %d entries, found %v; want all, false", len(since), found)
	}
	if l, ok := tr.Label("b"); !ok || l != "first try" {
		t.Errorf("label b = %q, %v", l, ok)
	}
	for _, id := range []string{"d", "a", "c"} {
		if l, ok := tr.Label(id); ok {
			t.Errorf("label %s = %q, want none (cleared or never set)", id, l)
		}
	}
	if tr.Get("c").Type != store.TypeMessage || tr.Get("zz") != nil {
		t.Error("Get")
	}
}

func TestTreeLeafAndAppend(t *testing.T) {
	_, tr := treeFixture(t)
	if err := tr.SetLeaf(ptr("nope")); !errors.Is(err, store.ErrUnknownEntry) {
		t.Fatalf("SetLeaf unknown = %v", err)
	}
	if err := tr.SetLeaf(ptr("c")); err != nil {
		t.Fatal(err)
	}
	j := msgEntry("j", tr.Leaf(), "on c")
	tr.Append(j)
	if got := *tr.Leaf(); got != "j" {
		t.Fatalf("leaf after append = %s", got)
	}
	if diff := cmp.Diff([]string{"r", "a", "b", "c", "j"}, ids(tr.Branch())); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"j"}, ids(tr.Children("c"))); diff != "" {
		t.Error(diff)
	}
	if err := tr.SetLeaf(nil); err != nil || tr.Leaf() != nil || len(tr.Branch()) != 0 {
		t.Fatalf("empty branch: %v %v %d", err, tr.Leaf(), len(tr.Branch()))
	}
	// Appending after a nil leaf starts a second root.
	k := msgEntry("k", tr.Leaf(), "new root")
	tr.Append(k)
	if diff := cmp.Diff([]string{"r", "k"}, ids(tr.Roots())); diff != "" {
		t.Error(diff)
	}
	// Append keeps labels and name current.
	tr.Append(withIDs(store.LabelEntry("k", "kay"), "l", ptr("k")))
	tr.Append(withIDs(store.SessionInfoEntry("renamed"), "m", ptr("l")))
	if l, _ := tr.Label("k"); l != "kay" || tr.Name() != "renamed" {
		t.Errorf("label %q name %q", l, tr.Name())
	}
}

func TestTreeOrphansAndCycles(t *testing.T) {
	// x names a parent that appears later; y names one that never appears.
	entries := []*store.Entry{
		msgEntry("x", ptr("p"), "x"),
		msgEntry("p", nil, "p"),
		msgEntry("y", ptr("q"), "y"),
		msgEntry("self", ptr("self"), "self"),
	}
	tr := store.NewTree(entries, ptr("x"))
	if diff := cmp.Diff([]string{"p", "x"}, ids(tr.Branch())); diff != "" {
		t.Errorf("forward parent: %s", diff)
	}
	if diff := cmp.Diff([]string{"p", "y", "self"}, ids(tr.Roots())); diff != "" {
		t.Errorf("roots: %s", diff)
	}
	// The missing parent arrives: y moves under it.
	tr.Append(msgEntry("q", nil, "q"))
	if diff := cmp.Diff([]string{"p", "self", "q"}, ids(tr.Roots())); diff != "" {
		t.Errorf("roots after q: %s", diff)
	}
	if diff := cmp.Diff([]string{"y"}, ids(tr.Children("q"))); diff != "" {
		t.Errorf("children q: %s", diff)
	}
	// A cycle (only possible with forward references) terminates.
	cyc := store.NewTree([]*store.Entry{msgEntry("a", ptr("b"), "a"), msgEntry("b", ptr("a"), "b")}, ptr("a"))
	if diff := cmp.Diff([]string{"b", "a"}, ids(cyc.Branch())); diff != "" {
		t.Errorf("cycle: %s", diff)
	}
}

func TestTreeNodesJSON(t *testing.T) {
	_, tr := treeFixture(t)
	nodes := tr.Nodes()
	if len(nodes) != 1 || nodes[0].Entry.ID != "r" {
		t.Fatalf("roots %v", nodes)
	}
	a := nodes[0].Children[0]
	if a.Entry.ID != "a" || len(a.Children) != 2 || a.Children[0].Label != "first try" || a.Children[1].Label != "" {
		t.Fatalf("node a = %+v", a)
	}
	raw, err := json.Marshal(map[string]any{"tree": nodes})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tree []struct {
			Entry    json.RawMessage `json:"entry"`
			Children []json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil || len(got.Tree) != 1 {
		t.Fatalf("decode %s: %v", raw, err)
	}
	// A leaf-level node: entry first, then children, then label.
	b := a.Children[0]
	c := b.Children[0]
	want := `{"entry":` + string(b.Entry.AppendJSON(nil)) + `,"children":[{"entry":` + string(c.Entry.AppendJSON(nil)) + `,"children":[]}],"label":"first try"}`
	if gotB, _ := json.Marshal(b); string(gotB) != want {
		t.Errorf("node b:\n%s\nwant\n%s", gotB, want)
	}
}

func TestTreeDeepChain(t *testing.T) {
	const n = 100_000
	entries := chain(n)
	tr := store.NewTree(entries, ptr(fmt.Sprintf("e%d", n)))
	if got := len(tr.Branch()); got != n {
		t.Fatalf("branch %d", got)
	}
	out := store.AppendNodesJSON(nil, tr.Nodes())
	if !bytes.HasPrefix(out, []byte(`[{"entry":{"type":"message"`)) || !bytes.HasSuffix(out, []byte(`]}]}]`)) || !bytes.Contains(out, []byte(`"children":[]}]}`)) {
		t.Fatalf("unexpected framing: %.60s … %s", out, out[len(out)-20:])
	}
	if got := bytes.Count(out, []byte(`"children":[`)); got != n {
		t.Fatalf("%d children arrays, want %d", got, n)
	}
	if strings.Count(string(out), "[") != strings.Count(string(out), "]") {
		t.Fatal("unbalanced brackets")
	}
}

func TestFork(t *testing.T) {
	src, tr := treeFixture(t)
	dir := t.TempDir()
	t.Run("plain", func(t *testing.T) {
		dst := filepath.Join(dir, "fork.jsonl")
		h := testHeader("forked")
		h.ParentSession = src.Path
		f, entries, err := store.Fork(tr, "c", dst, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if diff := cmp.Diff([]string{"r", "a", "b", "c"}, ids(entries)); diff != "" {
			t.Error(diff)
		}
		snap, err := store.ReadSnapshot(dst)
		if err != nil {
			t.Fatal(err)
		}
		if *snap.LeafID != "c" || snap.Header.ParentSession != src.Path || len(snap.Entries) != 4 {
			t.Errorf("fork: leaf %v parent %q entries %v", *snap.LeafID, snap.Header.ParentSession, ids(snap.Entries))
		}
		if bytes.Contains(readBytes(t, dst), []byte(`"type":"leaf"`)) {
			t.Error("fork copied a leaf line")
		}
		if diff := cmp.Diff(lines(t, tr.Path("c")), lines(t, snap.Entries)); diff != "" {
			t.Errorf("copied entries differ:\n%s", diff)
		}
		info, err := store.ReadInfo(dst)
		if err != nil || info.IsSubagent {
			t.Errorf("fork listed as sub-agent: %+v %v", info, err)
		}
	})
	t.Run("head", func(t *testing.T) {
		dst := filepath.Join(dir, "task.jsonl")
		h := testHeader("task")
		h.ParentSession = src.Path
		head := withIDs(store.CustomEntry(store.TaskCustomType, map[string]string{"taskId": "t1", "agent": "general"}), "t0", nil)
		f, entries, err := store.Fork(tr, "b", dst, h, head)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if diff := cmp.Diff([]string{"t0", "r", "a", "b"}, ids(entries)); diff != "" {
			t.Error(diff)
		}
		if entries[1].ParentID == nil || *entries[1].ParentID != "t0" || tr.Get("r").ParentID != nil {
			t.Error("old root not re-parented under the head (or the source was modified)")
		}
		info, err := store.ReadInfo(dst)
		if err != nil || !info.IsSubagent {
			t.Errorf("task fork not a sub-agent: %+v %v", info, err)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		if _, _, err := store.Fork(tr, "nope", filepath.Join(dir, "x.jsonl"), testHeader("x"), nil); !errors.Is(err, store.ErrUnknownEntry) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestTreeTail checks Tail against the branch it is a suffix of, for every
// entry of the fixture at several leaves, in a tree with a parent cycle
// and after a repeated id.
func TestTreeTail(t *testing.T) {
	_, tr := treeFixture(t)
	cyc := store.NewTree([]*store.Entry{msgEntry("a", ptr("b"), "a"), msgEntry("b", ptr("a"), "b")}, ptr("a"))
	dup := store.NewTree([]*store.Entry{msgEntry("r", nil, "r"), msgEntry("x", ptr("r"), "x"), msgEntry("x", ptr("x"), "x again")}, ptr("x"))
	for _, c := range []struct {
		name   string
		tr     *store.Tree
		leaves []*string
	}{
		{"fixture", tr, []*string{ptr("i"), ptr("c"), ptr("r"), nil}},
		{"cycle", cyc, []*string{ptr("a"), ptr("b")}},
		{"repeated id", dup, []*string{ptr("x"), ptr("r")}},
	} {
		for _, leaf := range c.leaves {
			if err := c.tr.SetLeaf(leaf); err != nil {
				t.Fatal(err)
			}
			branch := c.tr.Branch()
			for _, e := range append(c.tr.Entries(), msgEntry("zz", nil, "unknown")) {
				var want []string
				for k, b := range branch {
					if b.ID == e.ID {
						want = ids(branch[k:])
						break
					}
				}
				got := c.tr.Tail(e.ID)
				if want == nil && got != nil || want != nil && !cmp.Equal(want, ids(got)) {
					t.Errorf("%s, leaf %v: Tail(%s) = %v, want %v", c.name, leaf, e.ID, ids(got), want)
				}
			}
		}
	}
}

// TestNodesJSONSize checks that get_tree's output is written into one
// buffer of the size computed up front: no growth for plain ids, and the
// exact bytes of encoding each node.
func TestNodesJSONSize(t *testing.T) {
	_, tr := treeFixture(t)
	chain := make([]*store.Entry, 0, 3000)
	var parent *string
	for i := range cap(chain) {
		e := msgEntry(fmt.Sprintf("c%d", i), parent, "x")
		chain = append(chain, e)
		parent = &e.ID
	}
	for name, nodes := range map[string][]*store.Node{"fixture": tr.Nodes(), "chain": store.NewTree(chain, parent).Nodes()} {
		out := store.AppendNodesJSON(nil, nodes)
		again := store.AppendNodesJSON(make([]byte, 0, 8), nodes)
		if !bytes.Equal(out, again) || !json.Valid(out) {
			t.Fatalf("%s: outputs differ or are not JSON", name)
		}
		if c := cap(again); c < len(again) || c > len(again)+len(again)/50+256 {
			t.Errorf("%s: %d bytes written into a buffer of %d: sized %s", name, len(again), c, "badly")
		}
		j := store.NewNodesJSON(nodes)
		if n := j.Len(); n < len(out) || n > len(out)+len(out)/20+64 {
			t.Errorf("%s: NodesJSON.Len %d, written %d", name, n, len(out))
		}
		// In vectors (get_tree's way out): the same bytes, made wire-clean,
		// no empty vector, at most 1002 pieces each (writev's limit).
		var joined []byte
		j.WriteVec(nil, nil, func(vec [][]byte) {
			if len(vec) == 0 || len(vec) > 1002 {
				t.Errorf("%s: a vector of %d pieces", name, len(vec))
			}
			for _, p := range vec {
				joined = append(joined, p...)
			}
		})
		if want := stdio.ValidUTF8(out); !bytes.Equal(joined, want) {
			t.Fatalf("%s: the vectors differ from the whole", name)
		}
	}
}

// TestTreeNodesJSONMatchesNodes: get_tree's JSON from the tree's flat
// shape (Tree.NodesJSON) is byte for byte the JSON of Nodes' forest, and
// its length the same, for trees with branches, labels (moved and
// removed, naming an id that comes later or never, noted when the tree
// is built or appended), repeated ids, orphans adopted later, a cycle, and entries
// appended after it was taken (which it must not see).
func TestTreeNodesJSONMatchesNodes(t *testing.T) {
	_, fixture := treeFixture(t)
	r := rand.New(rand.NewPCG(37, 1))
	trees := map[string]*store.Tree{"fixture": fixture}
	for k := range 40 {
		var es []*store.Entry
		n := 1 + r.IntN(60)
		ids, parents := store.RandomShape(r, n, 10, 15)
		for i, id := range ids {
			parent := parents[i]
			e := msgEntry(id, parent, fmt.Sprintf("m%d", i))
			if r.IntN(6) == 0 && i > 0 {
				e = store.RandomLabel(r, es, i, n)
				e.ID, e.ParentID = id, parent
			}
			es = append(es, e)
		}
		trees[fmt.Sprint("random", k)] = store.NewTree(es, nil)
		grown := store.NewTree(es[:len(es)/2], nil) // the rest appended: labels noted by Append
		for _, e := range es[len(es)/2:] {
			grown.Append(e)
		}
		trees[fmt.Sprint("appended", k)] = grown
	}
	a, b := "x", "y" // a cycle: each the other's parent, neither a root
	trees["cycle"] = store.NewTree([]*store.Entry{msgEntry("r", nil, "r"), msgEntry(a, &b, "a"), msgEntry(b, &a, "b")}, nil)
	for name, tr := range trees {
		want := store.AppendNodesJSON(nil, tr.Nodes())
		j := tr.NodesJSON()
		leaf := "late"
		tr.Append(msgEntry(leaf, nil, "appended after")) // not in j
		var got []byte
		j.WriteVec(nil, nil, func(vec [][]byte) {
			for _, p := range vec {
				got = append(got, p...)
			}
		})
		if want := stdio.ValidUTF8(want); !bytes.Equal(got, want) {
			t.Fatalf("%s: Tree.NodesJSON wrote\n%s\nNodes give\n%s", name, got, want)
		}
		if n := store.NewNodesJSON(tr.Nodes()[:len(tr.Nodes())-1]).Len(); j.Len() != n {
			t.Errorf("%s: Tree.NodesJSON.Len %d, of the nodes %d", name, j.Len(), n)
		}
	}
}

package store

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNewPathTree checks that NewPathTree builds NewTree's tree (every
// field but the index's seed; the index by a lookup of every id) for
// every path of random trees (labels, session names, orphans, repeated
// ids, cycles), and for slices that are no path (shuffled, cut), which
// NewTree takes over.
func TestNewPathTree(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 2))
	fast := 0
	for k := range 60 {
		var es []*Entry
		n := 1 + r.IntN(40)
		shape, parents := RandomShape(r, n, 12, 20)
		for i, id := range shape {
			es = append(es, RandomEntry(r, es, i, n, 8, id, parents[i]))
		}
		tr := NewTree(es, nil)
		if k%2 == 1 { // the rest appended, as a session grows
			tr = NewTree(es[:len(es)/2], nil)
			for _, e := range es[len(es)/2:] {
				tr.Append(e)
			}
		}
		var slices [][]*Entry
		for _, e := range es {
			slices = append(slices, tr.Path(e.ID))
		}
		shuffled := append([]*Entry(nil), es...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		slices = append(slices, shuffled, es, es[1:], nil)
		for _, p := range slices {
			want := NewTree(p, nil)
			if len(p) > 0 {
				want = NewTree(p, &p[len(p)-1].ID)
			}
			got, chain := NewPathTree(p)
			what := fmt.Sprintf("tree %d, path to %v", k, ids(p))
			sameTree(t, what, got, want)
			if chain {
				fast++
				if b := want.Branch(); len(b) != len(p) || !sameEntries(b, p) {
					t.Fatalf("%s: a chain whose branch is %v", what, ids(b))
				}
			}
		}
	}
	if fast < 200 {
		t.Errorf("only %d paths were chains", fast)
	}
}

// sameTree compares two trees field by field, the id index by lookups.
func sameTree(t *testing.T, what string, got, want *Tree) {
	t.Helper()
	opt := cmp.AllowUnexported(Tree{}, kidList{})
	ign := func(p cmp.Path) bool { return p.String() == "pos" || p.String() == "entries" }
	if diff := cmp.Diff(want, got, opt, cmp.FilterPath(ign, cmp.Ignore())); diff != "" {
		t.Fatalf("%s: NewPathTree differs from NewTree (-want +got):\n%s", what, diff)
	}
	if len(got.entries) != len(want.entries) || cap(got.entries) != len(got.entries) {
		t.Fatalf("%s: entries %d (cap %d), want %d", what, len(got.entries), cap(got.entries), len(want.entries))
	}
	for i := range want.entries {
		if got.entries[i] != want.entries[i] {
			t.Fatalf("%s: entry %d differs", what, i)
		}
	}
	if got.pos.n != want.pos.n {
		t.Fatalf("%s: %d ids indexed, want %d", what, got.pos.n, want.pos.n)
	}
	for _, e := range want.entries {
		gi, gok := got.pos.get(got.entries, e.ID)
		wi, wok := want.pos.get(want.entries, e.ID)
		if gi != wi || gok != wok {
			t.Fatalf("%s: id %s at %d %v, want %d %v", what, e.ID, gi, gok, wi, wok)
		}
	}
}

func sameEntries(a, b []*Entry) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func ids(es []*Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// TestForkPath checks that Tree.ForkPath returns Path's path and, where
// it copies the tree, NewTree's tree of the path (as TestNewPathTree
// compares); that it copies exactly when the path is the whole tree (a
// chain forked at its last entry), here for random chains with labels
// and names, as read and as grown by Append; and that the copy and its
// source grow apart: entries appended to either leave the other as it
// was.
func TestForkPath(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 3))
	copies := 0
	for k := range 80 {
		var es []*Entry
		n := 1 + r.IntN(40)
		shape, parents := RandomShape(r, n, 12, 20)
		if k%2 == 0 { // a chain: every entry the child of the one before
			for i := range shape {
				parents[i] = nil
				if i > 0 {
					parents[i] = &shape[i-1]
				}
			}
		}
		for i, id := range shape {
			es = append(es, RandomEntry(r, es, i, n, 6, id, parents[i]))
		}
		tr := NewTree(es, nil)
		if k%4 >= 2 { // the rest appended, as a session grows
			tr = NewTree(es[:len(es)/2], nil)
			for _, e := range es[len(es)/2:] {
				tr.Append(e)
			}
		}
		for i, e := range es {
			what := fmt.Sprintf("tree %d, fork at %s", k, e.ID)
			path, got := tr.ForkPath(e.ID)
			want := tr.Path(e.ID)
			if len(path) != len(want) || !sameEntries(path, want) {
				t.Fatalf("%s: path %v, want %v", what, ids(path), ids(want))
			}
			_, chain := NewPathTree(path)
			whole := chain && len(path) == len(es) && sameEntries(path, es)
			if (got != nil) != whole {
				t.Fatalf("%s: copied %v, want %v (a chain of the whole tree)", what, got != nil, whole)
			}
			if got == nil {
				continue
			}
			copies++
			sameTree(t, what, got, NewTree(path, &path[len(path)-1].ID))
			if s := shared(got, tr); s != "" {
				t.Fatalf("%s: the copy shares its %s with the source", what, s)
			}
			// Grown apart: one more entry on each, each still its own.
			mine := CustomEntry("x", nil)
			mine.ID, mine.ParentID, mine.Timestamp = fmt.Sprintf("mine%d", i), &e.ID, "2026-01-01T00:00:00.000Z"
			theirs := RandomLabel(r, es, len(es), len(es))
			theirs.ID, theirs.ParentID, theirs.Timestamp = fmt.Sprintf("theirs%d", i), &es[len(es)-1].ID, "2026-01-01T00:00:00.000Z"
			got.Append(mine)
			tr.Append(theirs)
			sameTree(t, what+", the copy grown", grown(got), NewTree(append(path[:len(path):len(path)], mine), &mine.ID))
			sameTree(t, what+", the source grown", grown(tr), NewTree(append(es[:len(es):len(es)], theirs), &theirs.ID))
			es = append(es[:len(es):len(es)], theirs)
		}
	}
	if copies < 20 {
		t.Errorf("only %d forks copied their tree", copies)
	}
}

// grown is t with its entries capped at their length (as sameTree wants
// them), for a tree that has grown by Append.
func grown(t *Tree) *Tree {
	g := *t
	g.entries = g.entries[:len(g.entries):len(g.entries)]
	return &g
}

// shared names what a and b hold in the same memory other than their
// entries ("" for nothing): a fork's tree grows apart from its source's,
// and two trees sharing a table see each other's entries only now and
// then (when one grows it, or two ids' tags collide).
func shared(a, b *Tree) string {
	same := func(x, y any) bool {
		vx, vy := reflect.ValueOf(x), reflect.ValueOf(y)
		return vx.Len() > 0 && vy.Len() > 0 && vx.UnsafePointer() == vy.UnsafePointer()
	}
	switch {
	case same(a.pos.slots, b.pos.slots):
		return "id index"
	case same(a.parent, b.parent):
		return "parents"
	case same(a.kids.one, b.kids.one):
		return "children"
	case same(a.roots, b.roots):
		return "roots"
	case same(a.labels, b.labels):
		return "labels"
	case same(a.labelAt, b.labelAt):
		return "labels by index"
	case same(a.orphans, b.orphans) || a.leaf == b.leaf:
		return "orphans or leaf"
	}
	return ""
}

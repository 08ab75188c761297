package store

import (
	"fmt"
	"math/rand/v2"
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
			parent := parents[i]
			var e *Entry
			switch x := r.IntN(8); {
			case x == 0 && i > 0:
				e = RandomLabel(r, es, i, n)
			case x == 1:
				e = SessionInfoEntry(fmt.Sprintf("name %d", i))
			default:
				e = CustomEntry("x", map[string]int{"i": i})
			}
			e.ID, e.ParentID, e.Timestamp = id, parent, "2026-01-01T00:00:00.000Z"
			es = append(es, e)
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

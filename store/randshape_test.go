package store

import (
	"fmt"
	"math/rand/v2"
)

// RandomShape draws the ids and parents of n entries for the random-tree
// tests (TestNewPathTree here, TestTreeNodesJSONMatchesNodes in store_test):
// one in rootOdds a root, one in rootOdds a parent that comes later or
// never, otherwise an earlier entry (the previous one two times in
// three); one id in repeat repeats an earlier one.
func RandomShape(r *rand.Rand, n, rootOdds, repeat int) (ids []string, parents []*string) {
	for i := range n {
		var parent *string
		switch x := r.IntN(rootOdds); {
		case x == 0: // a root
		case x == 1: // an id that comes later, or never
			p := fmt.Sprintf("e%d", r.IntN(n+5))
			parent = &p
		case i > 0:
			p := ids[r.IntN(i)]
			if r.IntN(3) > 0 {
				p = ids[i-1]
			}
			parent = &p
		}
		id := fmt.Sprintf("e%d", i)
		if r.IntN(repeat) == 0 && i > 0 {
			id = ids[r.IntN(i)] // a repeated id
		}
		ids, parents = append(ids, id), append(parents, parent)
	}
	return ids, parents
}

// RandomLabel is a label entry for the random-tree tests: a label of three
// (one in four cleared) on one of the first i entries of es, or one in
// five on an id that comes later or never (n entries in all).
func RandomLabel(r *rand.Rand, es []*Entry, i, n int) *Entry {
	label := fmt.Sprintf("l%d", r.IntN(3))
	if r.IntN(4) == 0 {
		label = ""
	}
	target := es[r.IntN(i)].ID
	if r.IntN(5) == 0 { // an id that comes later, or never
		target = fmt.Sprintf("e%d", r.IntN(n+5))
	}
	return LabelEntry(target, label)
}

// RandomEntry is entry i of n for the random-tree tests, with id and
// parent: one in odds a label (RandomLabel, never the first), one in odds
// a session name, else a custom entry.
func RandomEntry(r *rand.Rand, es []*Entry, i, n, odds int, id string, parent *string) *Entry {
	var e *Entry
	switch x := r.IntN(odds); {
	case x == 0 && i > 0:
		e = RandomLabel(r, es, i, n)
	case x == 1:
		e = SessionInfoEntry(fmt.Sprintf("name %d", i))
	default:
		e = CustomEntry("x", map[string]int{"i": i})
	}
	e.ID, e.ParentID, e.Timestamp = id, parent, "2026-01-01T00:00:00.000Z"
	return e
}

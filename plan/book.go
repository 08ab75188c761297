package plan

import (
	"errors"
	"fmt"
)

// ErrNotPending is returned by Book.Awaiting when the named plan is not the
// one waiting for approval (the plan_not_found error of plan_response).
var ErrNotPending = errors.New("plan is not awaiting approval")

// Book answers questions about the plan snapshots (ama.plan entries) of one
// branch, in branch order. Later snapshots win over earlier ones. A Book is
// an immutable value: Add returns a new Book and results are copies.
type Book struct {
	snaps []Plan
}

// NewBook returns a Book of the given snapshots, oldest first.
func NewBook(snapshots ...Plan) Book {
	return Book{}.Add(snapshots...)
}

// Add returns a Book with the snapshots appended after b's; b is unchanged.
func (b Book) Add(snapshots ...Plan) Book {
	snaps := make([]Plan, 0, len(b.snaps)+len(snapshots))
	snaps = append(snaps, b.snaps...)
	for _, p := range snapshots {
		snaps = append(snaps, p.Clone())
	}
	return Book{snaps: snaps}
}

// Len returns the number of snapshots.
func (b Book) Len() int { return len(b.snaps) }

// Latest returns the last snapshot of any plan and status (get_plan without
// a planId).
func (b Book) Latest() (Plan, bool) {
	if len(b.snaps) == 0 {
		return Plan{}, false
	}
	return b.snaps[len(b.snaps)-1].Clone(), true
}

// ByID returns the last snapshot of the plan with the given id, whatever
// its version.
func (b Book) ByID(id string) (Plan, bool) {
	for i := len(b.snaps) - 1; i >= 0; i-- {
		if b.snaps[i].ID == id {
			return b.snaps[i].Clone(), true
		}
	}
	return Plan{}, false
}

// Pending returns the plan waiting for approval: the latest snapshot, if
// its status is proposed.
func (b Book) Pending() (Plan, bool) {
	p, ok := b.Latest()
	if !ok || p.Status != StatusProposed {
		return Plan{}, false
	}
	return p, true
}

// Awaiting returns the pending plan if its id is id, else an error wrapping
// ErrNotPending.
func (b Book) Awaiting(id string) (Plan, error) {
	p, ok := b.Pending()
	if !ok || p.ID != id {
		return Plan{}, fmt.Errorf("plan %q: %w", id, ErrNotPending)
	}
	return p, nil
}

// NextVersion returns the version for the next proposal: one more than the
// highest version of any snapshot, so versions never repeat on a branch.
func (b Book) NextVersion() int {
	high := 0
	for _, p := range b.snaps {
		high = max(high, p.Version)
	}
	return high + 1
}

// Plans returns one plan per (id, version) with its latest snapshot, in
// the order the versions first appeared.
func (b Book) Plans() []Plan {
	type key struct {
		id      string
		version int
	}
	at := make(map[key]int)
	out := []Plan{}
	for _, p := range b.snaps {
		k := key{p.ID, p.Version}
		if i, ok := at[k]; ok {
			out[i] = p.Clone()
			continue
		}
		at[k] = len(out)
		out = append(out, p.Clone())
	}
	return out
}

// Propose returns the snapshots to append, in order, when p is proposed:
// the pending plan re-recorded as superseded (if there is one), then p with
// status proposed and, when p.Version is 0, version NextVersion(). b is not
// changed; Add the result once the entries are written.
func (b Book) Propose(p Plan) []Plan {
	var out []Plan
	if old, ok := b.Pending(); ok {
		out = append(out, old.With(StatusSuperseded))
	}
	p = p.With(StatusProposed)
	if p.Version == 0 {
		p.Version = b.NextVersion()
	}
	return append(out, p)
}

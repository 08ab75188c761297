package plan_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/plan"
)

func snap(id string, version int, status plan.Status) plan.Plan {
	return plan.Plan{ID: id, Version: version, Status: status, Markdown: "m", Steps: []plan.Step{st("S1", "a")}, SourceEntryID: "e"}
}

func TestBook(t *testing.T) {
	tests := []struct {
		name      string
		snaps     []plan.Plan
		latest    *plan.Plan
		pending   *plan.Plan
		next      int
		plans     []plan.Plan
		byID      map[string]*plan.Plan
		awaitable string
	}{
		{name: "empty", next: 1, plans: []plan.Plan{}, byID: map[string]*plan.Plan{"p": nil}},
		{
			name:      "one proposed",
			snaps:     []plan.Plan{snap("p", 1, plan.StatusProposed)},
			latest:    ptr(snap("p", 1, plan.StatusProposed)),
			pending:   ptr(snap("p", 1, plan.StatusProposed)),
			next:      2,
			plans:     []plan.Plan{snap("p", 1, plan.StatusProposed)},
			byID:      map[string]*plan.Plan{"p": ptr(snap("p", 1, plan.StatusProposed)), "q": nil},
			awaitable: "p",
		},
		{
			name:      "revised",
			snaps:     []plan.Plan{snap("p", 1, plan.StatusProposed), snap("p", 1, plan.StatusSuperseded), snap("p", 2, plan.StatusProposed)},
			latest:    ptr(snap("p", 2, plan.StatusProposed)),
			pending:   ptr(snap("p", 2, plan.StatusProposed)),
			next:      3,
			plans:     []plan.Plan{snap("p", 1, plan.StatusSuperseded), snap("p", 2, plan.StatusProposed)},
			byID:      map[string]*plan.Plan{"p": ptr(snap("p", 2, plan.StatusProposed))},
			awaitable: "p",
		},
		{
			name:   "approved",
			snaps:  []plan.Plan{snap("p", 1, plan.StatusProposed), snap("p", 1, plan.StatusApproved)},
			latest: ptr(snap("p", 1, plan.StatusApproved)),
			next:   2,
			plans:  []plan.Plan{snap("p", 1, plan.StatusApproved)},
			byID:   map[string]*plan.Plan{"p": ptr(snap("p", 1, plan.StatusApproved))},
		},
		{
			name:   "rejected then new plan id, versions stay monotonic",
			snaps:  []plan.Plan{snap("p", 3, plan.StatusProposed), snap("p", 3, plan.StatusRejected), snap("q", 4, plan.StatusProposed), snap("q", 4, plan.StatusApproved)},
			latest: ptr(snap("q", 4, plan.StatusApproved)),
			next:   5,
			plans:  []plan.Plan{snap("p", 3, plan.StatusRejected), snap("q", 4, plan.StatusApproved)},
			byID:   map[string]*plan.Plan{"p": ptr(snap("p", 3, plan.StatusRejected)), "q": ptr(snap("q", 4, plan.StatusApproved))},
		},
		{
			name:    "only the latest snapshot can be pending",
			snaps:   []plan.Plan{snap("p", 2, plan.StatusProposed), snap("p", 1, plan.StatusRejected)},
			latest:  ptr(snap("p", 1, plan.StatusRejected)),
			next:    3,
			plans:   []plan.Plan{snap("p", 2, plan.StatusProposed), snap("p", 1, plan.StatusRejected)},
			byID:    map[string]*plan.Plan{"p": ptr(snap("p", 1, plan.StatusRejected))},
			pending: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := plan.NewBook(tt.snaps...)
			if b.Len() != len(tt.snaps) {
				t.Errorf("Len = %d", b.Len())
			}
			check(t, "Latest", tt.latest)(b.Latest())
			check(t, "Pending", tt.pending)(b.Pending())
			for id, want := range tt.byID {
				check(t, "ByID("+id+")", want)(b.ByID(id))
			}
			if got := b.NextVersion(); got != tt.next {
				t.Errorf("NextVersion = %d, want %d", got, tt.next)
			}
			if diff := cmp.Diff(tt.plans, b.Plans()); diff != "" {
				t.Errorf("Plans (-want +got):\n%s", diff)
			}
			for _, id := range []string{"p", "q"} {
				_, err := b.Awaiting(id)
				if wantOK := id == tt.awaitable; (err == nil) != wantOK || (err != nil && !errors.Is(err, plan.ErrNotPending)) {
					t.Errorf("Awaiting(%q) error = %v, want ok %v", id, err, wantOK)
				}
			}
		})
	}
}

func ptr(p plan.Plan) *plan.Plan { return &p }

func check(t *testing.T, what string, want *plan.Plan) func(plan.Plan, bool) {
	return func(got plan.Plan, ok bool) {
		t.Helper()
		if ok != (want != nil) {
			t.Errorf("%s ok = %v, want %v", what, ok, want != nil)
			return
		}
		if want != nil {
			if diff := cmp.Diff(*want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", what, diff)
			}
		}
	}
}

func TestBookPropose(t *testing.T) {
	draft := plan.Plan{ID: "p", Markdown: "new", SourceEntryID: "e2"}
	tests := []struct {
		name  string
		snaps []plan.Plan
		draft plan.Plan
		want  []plan.Plan
	}{
		{"first", nil, draft, []plan.Plan{{ID: "p", Version: 1, Status: plan.StatusProposed, Markdown: "new", SourceEntryID: "e2"}}},
		{"supersedes pending", []plan.Plan{snap("p", 1, plan.StatusProposed)}, draft, []plan.Plan{
			snap("p", 1, plan.StatusSuperseded),
			{ID: "p", Version: 2, Status: plan.StatusProposed, Markdown: "new", SourceEntryID: "e2"},
		}},
		{"after rejection", []plan.Plan{snap("p", 1, plan.StatusProposed), snap("p", 1, plan.StatusRejected)}, draft, []plan.Plan{
			{ID: "p", Version: 2, Status: plan.StatusProposed, Markdown: "new", SourceEntryID: "e2"},
		}},
		{"explicit version and status overridden", nil, plan.Plan{ID: "p", Version: 7, Status: plan.StatusApproved, FilePath: "/f-v7.md"}, []plan.Plan{
			{ID: "p", Version: 7, Status: plan.StatusProposed, FilePath: "/f-v7.md"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := plan.NewBook(tt.snaps...)
			got := b.Propose(tt.draft)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Propose (-want +got):\n%s", diff)
			}
			if b.Len() != len(tt.snaps) {
				t.Error("Propose changed the book")
			}
			if p, _ := b.Add(got...).Pending(); p.Markdown != got[len(got)-1].Markdown {
				t.Error("the proposal is not pending after Add")
			}
		})
	}
}

func TestBookIsAValue(t *testing.T) {
	in := []plan.Plan{snap("p", 1, plan.StatusProposed)}
	b := plan.NewBook(in...)
	in[0].Steps[0].Text = "changed by caller"
	got, _ := b.Latest()
	got.Steps[0].DependsOn = append(got.Steps[0].DependsOn, "X")
	got.Steps[0].Text = "changed by reader"
	b2 := b.Add(snap("p", 1, plan.StatusApproved))
	if again, _ := b.Latest(); again.Steps[0].Text != "a" || again.Steps[0].DependsOn != nil || again.Status != plan.StatusProposed {
		t.Errorf("book changed through shared memory: %+v", again)
	}
	if p, _ := b2.Latest(); p.Status != plan.StatusApproved {
		t.Errorf("Add result: %+v", p)
	}
}

func TestStatusTransitions(t *testing.T) {
	all := []plan.Status{plan.StatusProposed, plan.StatusSuperseded, plan.StatusApproved, plan.StatusRejected, "bogus"}
	for _, from := range all {
		for _, to := range all {
			want := from == plan.StatusProposed && to != plan.StatusProposed && to != "bogus"
			if got := from.CanBecome(to); got != want {
				t.Errorf("%s.CanBecome(%s) = %v, want %v", from, to, got, want)
			}
		}
	}
	p := snap("p", 1, plan.StatusProposed)
	q := p.With(plan.StatusApproved)
	q.Steps[0].Text = "x"
	if p.Status != plan.StatusProposed || p.Steps[0].Text != "a" || q.Status != plan.StatusApproved {
		t.Error("With must return an independent copy")
	}
}

func TestExecutionMode(t *testing.T) {
	tests := []struct{ requested, pre, want string }{
		{"", "", "default"},
		{"", "auto-edit", "auto-edit"},
		{"auto", "auto-edit", "auto"},
		{"plan", "auto", "default"},
		{"", "plan", "default"},
	}
	for _, tt := range tests {
		if got := plan.ExecutionMode(tt.requested, tt.pre); got != tt.want {
			t.Errorf("ExecutionMode(%q, %q) = %q, want %q", tt.requested, tt.pre, got, tt.want)
		}
	}
}

func TestDecisionValid(t *testing.T) {
	for _, d := range []plan.Decision{plan.DecisionApprove, plan.DecisionApproveFresh, plan.DecisionRevise, plan.DecisionReject} {
		if !d.Valid() {
			t.Errorf("%s not valid", d)
		}
	}
	if plan.Decision("maybe").Valid() {
		t.Error("unknown decision valid")
	}
}

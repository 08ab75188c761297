package session

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// A child's calls are judged with the stricter of its own mode and its
// parent's current one; no bound leaves the own mode.
func TestStricterMode(t *testing.T) {
	bound := func(m approvals.Mode) func() approvals.Mode { return func() approvals.Mode { return m } }
	for _, c := range []struct {
		own   approvals.Mode
		bound func() approvals.Mode
		want  approvals.Mode
	}{
		{approvals.ModeFullAuto, nil, approvals.ModeFullAuto},
		{approvals.ModeFullAuto, bound(approvals.ModePlan), approvals.ModePlan},
		{approvals.ModeAutoEdit, bound(approvals.ModeDefault), approvals.ModeDefault},
		{approvals.ModeDefault, bound(approvals.ModeFullAuto), approvals.ModeDefault},
		{approvals.ModePlan, bound(approvals.ModeFullAuto), approvals.ModePlan},
		{approvals.ModeDefault, bound(approvals.ModeAllowlist), approvals.ModeAllowlist},
		{approvals.ModeAllowlist, bound(approvals.ModePlan), approvals.ModePlan},
		{approvals.ModePlan, bound(approvals.ModeAllowlist), approvals.ModePlan},
		{approvals.ModeAuto, bound(approvals.ModeAuto), approvals.ModeAuto},
	} {
		if got := stricter(c.own, c.bound); got != c.want {
			t.Errorf("stricter(%s, bound) = %s, want %s", c.own, got, c.want)
		}
	}
}

// PermissionMode mirrors the actor's mode without a mailbox round trip,
// and a closed session still answers (its last mode).
func TestPermissionModeMirror(t *testing.T) {
	s, err := New(&Deps{}, Options{Cwd: t.TempDir(), PermissionMode: "auto-edit"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.PermissionMode(); got != approvals.ModeAutoEdit {
		t.Fatalf("PermissionMode = %s, want auto-edit", got)
	}
	if _, err := s.SetPermissionMode("plan"); err != nil {
		t.Fatal(err)
	}
	if got := s.PermissionMode(); got != approvals.ModePlan {
		t.Fatalf("after set_permission_mode plan: %s", got)
	}
	s.Close()
	if got := s.PermissionMode(); got != approvals.ModePlan {
		t.Fatalf("closed: %s", got)
	}
}

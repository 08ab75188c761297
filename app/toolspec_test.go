package app

import (
	"slices"
	"testing"
)

func TestApplyToolSpec(t *testing.T) {
	base := []string{"bash", "edit", "read", "canvas_send"} // built-ins plus a host tool
	for _, tc := range []struct {
		name string
		spec []string
		want []string
		err  bool
	}{
		{"empty keeps the list", nil, base, false},
		{"+task adds, host tools kept", []string{"+task"}, []string{"bash", "edit", "read", "canvas_send", "task"}, false},
		{"-bash removes", []string{"-bash"}, []string{"edit", "read", "canvas_send"}, false},
		{"-host tool removes it", []string{"-canvas_send", "+ls"}, []string{"bash", "edit", "read", "ls"}, false},
		{"+ of a present tool is a no-op", []string{"+read"}, base, false},
		{"- of an absent tool is a no-op", []string{"-grep"}, base, false},
		{"plain names replace the list", []string{"read", "task"}, []string{"read", "task"}, false},
		{"plain names then adjustments", []string{"+bash", "read", "-read", "grep"}, []string{"grep", "bash"}, false},
		{"duplicates once", []string{"read", "read", "+read"}, []string{"read"}, false},
		{"bare + is an error", []string{"+"}, nil, true},
		{"bare - is an error", []string{"-"}, nil, true},
	} {
		got, err := applyToolSpec(base, tc.spec)
		if (err != nil) != tc.err {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if !tc.err && !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !slices.Equal(base, []string{"bash", "edit", "read", "canvas_send"}) {
		t.Errorf("the input list was changed: %v", base)
	}
}

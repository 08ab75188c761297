package stdio_test

import (
	"slices"
	"testing"

	"github.com/armadra/ama-rpc/internal/stdio"
)

func TestOwedNamesRepliesAndWaits(t *testing.T) {
	var o stdio.Owed
	a, b := o.Owe("prompt 1"), o.Owe("compact 2")
	o.Add(1)
	if got := o.Pending(); !slices.Equal(got, []string{"compact 2", "prompt 1"}) {
		t.Fatalf("pending %v", got)
	}
	wrote := 0
	a.Send(func() { wrote++ })
	b.Send(func() { wrote++ })
	o.Done()
	o.Wait() // returns: nothing is owed
	if wrote != 2 || len(o.Pending()) != 0 {
		t.Fatalf("wrote %d, pending %v", wrote, o.Pending())
	}
}

func TestSecondReplyPanicsInTests(t *testing.T) {
	var o stdio.Owed
	r := o.Owe("get_state x")
	wrote := 0
	r.Send(func() { wrote++ })
	defer func() {
		if recover() == nil {
			t.Fatal("a second reply did not panic")
		}
		if wrote != 1 {
			t.Fatalf("wrote %d times", wrote)
		}
	}()
	r.Send(func() { wrote++ })
}

package rpc

import (
	"maps"
	"slices"
	"testing"
)

// Every command of the handlers table has its wire types, and no other.
func TestCommandWiresComplete(t *testing.T) {
	wires := CommandWires()
	if got, want := slices.Sorted(maps.Keys(wires)), Commands(); !slices.Equal(got, want) {
		t.Errorf("CommandWires %v, handlers %v", got, want)
	}
	for name, w := range wires {
		if len(w.Data) == 0 {
			t.Errorf("%s: no data type", name)
		}
	}
}

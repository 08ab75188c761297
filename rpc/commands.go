package rpc

import (
	"maps"
	"slices"
)

// Commands returns the names of the native commands (the keys of the
// handlers table, the one list), sorted: the command enum of package
// rpc/schema.
func Commands() []string { return slices.Sorted(maps.Keys(handlers)) }

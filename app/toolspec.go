package app

import (
	"fmt"
	"slices"
)

// applyToolSpec applies one tool list in ama's form to the active tools
// (config tools.default, then --tools): plain names replace the list
// (host tools included, so they stay only when named), then each "+name"
// adds a tool and each "-name" removes one, in order. A spec of only
// +/- entries adjusts the list it is given. A bare "+" or "-" is an
// error; whether a name exists is checked where the session is built.
func applyToolSpec(active, spec []string) ([]string, error) {
	out := slices.Clone(active)
	var plain []string
	for _, n := range spec {
		if n != "" && n[0] != '+' && n[0] != '-' && !slices.Contains(plain, n) {
			plain = append(plain, n)
		}
	}
	if plain != nil {
		out = plain
	}
	for _, n := range spec {
		if n == "" || (n[0] != '+' && n[0] != '-') {
			continue
		}
		name := n[1:]
		if name == "" {
			return nil, fmt.Errorf("tool entry %q names no tool", n)
		}
		if n[0] == '+' {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
			continue
		}
		out = slices.DeleteFunc(out, func(s string) bool { return s == name })
	}
	return out, nil
}

package transcript

import (
	"fmt"
	"strings"
)

// ShapeRules say which parts of two transcripts may differ when they are
// compared by shape: the same event sequence, the same keys in the same
// order, the same JSON types and the same protocol values, with prose
// (descriptions, error texts, system prompt sections, reminder texts)
// free to differ.
type ShapeRules struct {
	// Prose reports whether the string at path (keys from the line's root;
	// "[]" for array elements) under parent may differ.
	Prose func(path []string, parent *Object) bool
	// FreeArray reports whether the array at path may differ in content.
	FreeArray func(path []string) bool
}

// DefaultShapeRules treat as prose: descriptions, error texts, the system
// prompt sections, the content of custom (extension) messages and
// notification messages. No array is free.
func DefaultShapeRules() ShapeRules {
	return ShapeRules{
		Prose: func(path []string, parent *Object) bool {
			last := path[len(path)-1]
			switch {
			case last == "description", last == "error":
				return true
			case len(path) >= 2 && path[len(path)-2] == "sections":
				return true
			case last == "content" && parent != nil && parent.String("role") == "custom":
				return true
			case last == "message" && parent != nil && parent.String("type") == "notification":
				return true
			}
			return false
		},
		FreeArray: func([]string) bool { return false },
	}
}

// CompareShape returns the differences between want and got (empty when
// they have the same shape).
func CompareShape(want, got Value, r ShapeRules) []string {
	var diffs []string
	compare(want, got, nil, nil, r, &diffs)
	return diffs
}

func compare(want, got Value, path []string, parent *Object, r ShapeRules, diffs *[]string) {
	where := "$." + strings.Join(path, ".")
	if kind(want) != kind(got) {
		*diffs = append(*diffs, fmt.Sprintf("%s: want %s %s, got %s %s", where, kind(want), short(want), kind(got), short(got)))
		return
	}
	switch w := want.(type) {
	case *Object:
		g := got.(*Object)
		if strings.Join(w.Keys, ",") != strings.Join(g.Keys, ",") {
			*diffs = append(*diffs, fmt.Sprintf("%s: want keys [%s], got [%s]", where, strings.Join(w.Keys, ","), strings.Join(g.Keys, ",")))
		}
		for _, k := range w.Keys {
			if gv, ok := g.Values[k]; ok {
				compare(w.Values[k], gv, append(path, k), w, r, diffs)
			}
		}
	case []Value:
		g := got.([]Value)
		if r.FreeArray != nil && len(path) > 0 && r.FreeArray(path) {
			return
		}
		if len(w) != len(g) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %d elements, got %d", where, len(w), len(g)))
			return
		}
		for i := range w {
			compare(w[i], g[i], append(path, "[]"), parent, r, diffs)
		}
	case string:
		if len(path) > 0 && r.Prose != nil && r.Prose(path, parent) {
			return
		}
		if w != got.(string) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %q, got %q", where, trim(w), trim(got.(string))))
		}
	default:
		if string(Encode(want)) != string(Encode(got)) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %s, got %s", where, Encode(want), Encode(got)))
		}
	}
}

func short(v Value) string { return trim(string(Encode(v))) }

func trim(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

package jsonlit

import (
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonobj"
)

// Lifted is a valid JSON value with its huge string literals at a few
// named places cut out: Small is the value with each of them replaced by
// "" (still a string, so it decodes, type errors included, as the value
// did), and Lit gives a decoded Lit back its literal.
//
// Why: encoding/json's Unmarshal validates its whole input before it
// decodes (checkValid, about 200 MB/s), and the decode then runs over it
// again; a prompt line the reader has already validated (jsonobj.Scanner,
// about 2 GB/s) paid that once more per decode of the bytes that hold the
// prompt (ACP: params, then each content block). No library decodes into
// structs with encoding/json's rules (case-insensitive keys, the last
// duplicate winning, invalid UTF-8 kept for the caller, its error texts)
// without that pass, so the bytes are kept out of it instead: Small is
// what encoding/json decodes, a few hundred bytes, and the literals are
// found with jsonobj's in-place walk of valid JSON (memchr per string).
//
// A literal is lifted only where the place's last key is written exactly
// as named (no escapes): a key that only encoding/json's case folding
// matches is left in Small, decoded the slow way, with the same result.
// Because Lit maps a decoded literal back by its offset in Small, the
// member encoding/json picks among duplicates is the one resolved.
type Lifted struct {
	Small []byte
	at    []int    // offset in Small of each replacement "", ascending
	lits  [][]byte // the literal each stands for, quotes included
}

// LiftMin is the literal size from which Lift cuts a literal out.
const LiftMin = 64 << 10

// Lift cuts the string literals of LiftMin bytes or more at paths out of
// v, which must be valid JSON (nil when there are none: decode v). A path
// names members of objects by key and the elements of an array by "[]",
// joined by dots: "message", "images[].data", "prompt[].resource.blob".
func Lift(v []byte, paths ...string) *Lifted { return lift(v, LiftMin, paths) }

// lift is Lift of the literals of min bytes or more.
func lift(v []byte, min int, paths []string) *Lifted {
	var spans [][2]int // offsets in v of the literals to lift
	for _, p := range paths {
		spans = liftAt(v, v, min, strings.Split(strings.ReplaceAll(p, "[]", ".[]"), "."), spans)
	}
	if len(spans) == 0 {
		return nil
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	spans = slices.Compact(spans) // two paths may name the same place
	l := &Lifted{}
	n := len(v)
	for _, s := range spans {
		n -= s[1] - s[0] - 2
	}
	l.Small = make([]byte, 0, n)
	last := 0
	for _, s := range spans {
		l.Small = append(l.Small, v[last:s[0]]...)
		l.at = append(l.at, len(l.Small))
		l.lits = append(l.lits, v[s[0]:s[1]])
		l.Small = append(l.Small, `""`...)
		last = s[1]
	}
	l.Small = append(l.Small, v[last:]...)
	return l
}

// liftAt appends the spans (in root) of the huge string literals at path
// in v, a sub-slice of root.
func liftAt(root, v []byte, min int, path []string, spans [][2]int) [][2]int {
	if len(path) == 0 {
		if len(v) >= min && v[0] == '"' {
			at := cap(root) - cap(v) // v is root[at:at+len(v)]
			spans = append(spans, [2]int{at, at + len(v)})
		}
		return spans
	}
	if path[0] == "[]" {
		jsonobj.Elements(v, func(e []byte) { spans = liftAt(root, e, min, path[1:], spans) })
		return spans
	}
	key := path[0]
	jsonobj.RawMembers(v, func(k, val []byte) {
		if len(k) == len(key)+2 && string(k[1:len(k)-1]) == key {
			spans = liftAt(root, val, min, path[1:], spans)
		}
	})
	return spans
}

// Lit returns the literal x stands for when it is one of Small's
// replacements, else x (a nil Lifted lifted nothing).
func (l *Lifted) Lit(x Lit) Lit {
	if l == nil || len(x) != 2 {
		return x
	}
	off, ok := alias.Offset(alias.String(x), l.Small)
	if !ok {
		return x
	}
	if i, found := slices.BinarySearch(l.at, off); found {
		return l.lits[i]
	}
	return x
}

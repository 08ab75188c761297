package llm

import (
	"bytes"
	"strconv"

	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// SpliceBytes is the size from which a string of a message is a big string
// (move.go): one that is spliced into an encoding (SpliceStrings) instead
// of encoded through encoding/json, which copies a Marshaler's output into
// its own growing buffer and then into the caller's (about four times a
// 50 MiB prompt per line, for each of the lines that carry it), counted
// without encoding (EncodedLen), and moved out of the heap with its entry.
const SpliceBytes = 64 << 10

// Placeholder stands for the only big string of a skeleton encoding (a
// before_agent_start's prompt): SpliceStrings' placeholder 0. It cannot occur in any other field of an
// encoding: encoding/json writes the NUL bytes as \u0000, and a marker is
// checked to occur exactly once.
var Placeholder = placeholder(0)

// placeholder is the marker of the i-th big string in a skeleton.
func placeholder(i int) string { return "\x00ama-splice-" + strconv.Itoa(i) + "\x00" }

// BigStrings returns m's big strings in encoding order and a copy of m
// holding a numbered placeholder in place of each (encode the copy with
// HTML escaping off, then SpliceStrings); ok is false when it has none.
func BigStrings(m Message) (strs []string, skel Message, ok bool) {
	skel = rewriteStrings(m, func(s string) string {
		strs = append(strs, s)
		return placeholder(len(strs) - 1)
	})
	return strs, skel, len(strs) > 0
}

// SpliceStrings returns skel (an encoding of BigStrings' copy, made with
// HTML escaping off) with placeholder i replaced by strs[i], encoded as
// encoding/json would (jsonstr.Wire), in one buffer of the exact size;
// spans[i] is where strs[i]'s JSON string (quotes included) lies in out.
// It reports false unless each placeholder occurs exactly once, in order.
func SpliceStrings(skel []byte, strs []string) (out []byte, spans [][2]int, ok bool) {
	at := make([]int, len(strs))
	marks := make([][]byte, len(strs))
	size, from := len(skel), 0
	for i, s := range strs {
		marks[i] = jsonstr.Append(nil, placeholder(i), jsonstr.Wire)
		k := bytes.Index(skel[from:], marks[i])
		if k < 0 || bytes.Index(skel[from+k+1:], marks[i]) >= 0 {
			return nil, nil, false
		}
		at[i] = from + k
		from = at[i] + len(marks[i])
		size += jsonstr.Len(s, jsonstr.Wire, false) - len(marks[i])
	}
	out = make([]byte, 0, size)
	spans = make([][2]int, len(strs))
	prev := 0
	for i, s := range strs {
		out = append(out, skel[prev:at[i]]...)
		start := len(out)
		out = jsonstr.Append(out, s, jsonstr.Wire)
		spans[i] = [2]int{start, len(out)}
		prev = at[i] + len(marks[i])
	}
	return append(out, skel[prev:]...), spans, true
}

// WithStrings returns m with its big strings (in BigStrings' order)
// replaced by strs, same characters held elsewhere; a copy when any
// changed. len(strs) must be the number of big strings.
func WithStrings(m Message, strs []string) Message {
	i := 0
	return rewriteStrings(m, func(s string) string {
		i++
		return strs[i-1]
	})
}

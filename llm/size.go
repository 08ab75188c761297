package llm

import (
	"encoding/json"
	"sync"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// EncodedLen is len(json.Marshal(v)) without keeping the encoding: the
// bytes go to a counter. The big strings of a message (move.go: the string
// content of user and custom messages, block texts, thinking and image
// data, where a 50 MiB prompt or a 5 MiB image lives) are counted without
// being encoded at all, so estimating the size of a context allocates
// nothing in proportion to them, and a moved string is not read.
func EncodedLen(v any) int {
	if m, ok := v.(Message); ok {
		n := 0
		skel := rewriteStrings(m, func(s string) string {
			n += textLen(s)
			return ""
		})
		if n > 0 {
			return encodedLen(skel) + n
		}
	}
	return encodedLen(v)
}

// textLen is what s adds to a message's encoding in place of "": its
// json.Marshal form (HTML escaped) less the two quotes already counted.
func textLen(s string) int {
	if len(s) >= SpliceBytes {
		if n, ok := movedLens.Load(alias.IDOf(s)); ok {
			return n.(int)
		}
	}
	return jsonstr.Len(s, jsonstr.Wire, true) - 2
}

// movedLens holds textLen of the big texts that were moved out of the Go
// heap into a read-only file mapping (the store's spill.go): counting
// such a text's escapes again would read every page of it back into
// memory, on each model request, only to size the context. A key is the
// text's address and length; moved texts are never unmapped, so an
// address never comes to mean other bytes. The map grows by one entry per
// text of at least 1 MiB moved in the life of the process.
var movedLens sync.Map // alias.ID → int

// NoteMovedText records that moved holds the same characters as orig, a
// copy about to be dropped: its encoded length is measured now, on orig,
// and later sizes of moved (EncodedLen) do not read it. moved must never
// be freed or modified.
func NoteMovedText(moved, orig string) {
	if len(moved) != len(orig) || len(moved) < SpliceBytes {
		return
	}
	movedLens.Store(alias.IDOf(moved), textLen(orig))
}

func encodedLen(v any) int {
	var c counter
	if json.NewEncoder(&c).Encode(v) != nil {
		return 0
	}
	return int(c) - 1 // Encode adds a newline
}

type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

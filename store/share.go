package store

import (
	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
)

// A big string of a message (a pasted file of tens of MiB, an image)
// would be held twice while its entry is on the heap (until the entry is
// written and moves out, spill.go; for good without a session file): as
// JSON inside the entry's body and as the decoded message's string. When
// the JSON string in the body needs no escapes (base64 never does), its
// bytes between the quotes are the string itself, so the cached message's
// string is made over those bytes instead of a copy. This is sound because
// a body is never modified once its entry exists (the Entry contract:
// entries are shared, immutable) and the string keeps the body's backing
// array alive; a string that needs escapes (quotes, backslashes, control
// characters, U+2028/U+2029, invalid UTF-8) keeps its own copy.

// shareStrings returns m with each big string strs[i] (llm.BigStrings)
// pointing into body[spans[i]], its JSON string token, when the token's
// contents are exactly the string; a copy when any did.
func shareStrings(m llm.Message, strs []string, body []byte, spans [][2]int) llm.Message {
	shared := make([]string, len(strs))
	any := false
	for i, s := range strs {
		shared[i] = s
		if t, ok := inToken(s, body[spans[i][0]:spans[i][1]]); ok {
			shared[i], any = t, true
		}
	}
	if !any {
		return m
	}
	return llm.WithStrings(m, shared)
}

// inToken returns s as a string over raw's bytes when raw is the JSON
// string token of s without escapes.
func inToken(s string, raw []byte) (string, bool) {
	if len(raw) != len(s)+2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if string(inner) != s { // compared in place, no copy
		return "", false
	}
	return alias.String(inner), true
}

// shareDecoded is shareStrings for a message decoded from obj, a JSON
// object whose member "content" holds the text (a message, or a
// custom_message entry's body): only a big string content is looked up.
func shareDecoded(m llm.Message, obj []byte) llm.Message {
	var text string
	switch v := m.(type) {
	case *llm.UserMessage:
		if !v.Content.IsBlocks {
			text = v.Content.Text
		}
	case *llm.CustomMessage:
		if !v.Content.IsBlocks {
			text = v.Content.Text
		}
	}
	if len(text) < llm.SpliceBytes {
		return m
	}
	if t, ok := inToken(text, jsonobj.Field(obj, "content")); ok {
		return llm.WithStrings(m, []string{t})
	}
	return m
}

package store

import (
	"unsafe"

	"github.com/armadra/ama-rpc/llm"
)

// A huge user or custom text (a pasted file of tens of MiB) would be held
// twice for the life of a session: as JSON inside the entry's Body and as
// the decoded message's string. When the JSON string in the body needs no
// escapes, its bytes between the quotes are the text itself, so the
// cached message's text is made a string over those bytes instead of a
// copy. This is sound because a body is never modified once its entry
// exists (the Entry contract: entries are shared, immutable) and the
// string keeps the body's backing array alive; a text that needs escapes
// (quotes, backslashes, control characters, U+2028/U+2029, invalid UTF-8)
// keeps its own copy.

// shareText returns m with its big string content (llm.BigText) pointing
// into raw, the JSON string token of that content in an entry body, when
// the token's contents are exactly the text; otherwise m unchanged.
func shareText(m llm.Message, raw []byte) llm.Message {
	text, _, ok := llm.BigText(m)
	if !ok || len(raw) != len(text)+2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return m
	}
	inner := raw[1 : len(raw)-1]
	if string(inner) != text { // compared in place, no copy
		return m
	}
	return llm.WithText(m, unsafe.String(unsafe.SliceData(inner), len(inner)))
}

// shareDecoded is shareText for a message decoded from obj, a JSON object
// whose member "content" holds the text (a message, or a custom_message
// entry's body). Only big texts are looked up.
func shareDecoded(m llm.Message, obj []byte) llm.Message {
	if _, _, ok := llm.BigText(m); !ok {
		return m
	}
	return shareText(m, objectField(obj, "content"))
}

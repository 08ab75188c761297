package llm

import (
	"bytes"

	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// SpliceBytes is the size from which the string content of a message is
// spliced into an encoding (SpliceText) instead of encoded through
// encoding/json, which copies a Marshaler's output into its own growing
// buffer and then into the caller's: about four times a 50 MiB prompt per
// line, for each of the lines that carry it.
const SpliceBytes = 64 << 10

// Placeholder stands for the big text in the skeleton encoding. It cannot
// occur in any other field of an encoding: encoding/json writes the NUL
// bytes as \u0000, and the marker is checked to occur exactly once.
const Placeholder = "\x00ama-splice\x00"

var placeholderJSON = jsonstr.Append(nil, Placeholder, jsonstr.Wire)

// BigText returns, for a user or custom message whose string content is
// at least SpliceBytes long, that text and a copy of the message holding a
// placeholder in its place (encode the copy, then SpliceText).
func BigText(m Message) (string, Message, bool) {
	switch v := m.(type) {
	case *UserMessage:
		if !v.Content.IsBlocks && len(v.Content.Text) >= SpliceBytes {
			c := *v
			c.Content.Text = Placeholder
			return v.Content.Text, &c, true
		}
	case *CustomMessage:
		if !v.Content.IsBlocks && len(v.Content.Text) >= SpliceBytes {
			c := *v
			c.Content.Text = Placeholder
			return v.Content.Text, &c, true
		}
	}
	return "", nil, false
}

// SpliceText returns skel (an encoding of BigText's copy, made with HTML
// escaping off) with the placeholder replaced by text encoded as
// encoding/json would (jsonstr.Wire), in one buffer of the exact size. It
// reports false when the placeholder does not occur exactly once.
func SpliceText(skel []byte, text string) ([]byte, bool) {
	out, _, _, ok := SpliceTextAt(skel, text)
	return out, ok
}

// SpliceTextAt is SpliceText that also returns where the encoded text
// lies in the result: out[at:at+n] is the JSON string, quotes included.
func SpliceTextAt(skel []byte, text string) (out []byte, at, n int, ok bool) {
	i := bytes.Index(skel, placeholderJSON)
	if i < 0 || bytes.Index(skel[i+1:], placeholderJSON) >= 0 {
		return nil, 0, 0, false
	}
	rest := skel[i+len(placeholderJSON):]
	n = jsonstr.Len(text, jsonstr.Wire, false)
	out = make([]byte, 0, i+n+len(rest))
	out = append(out, skel[:i]...)
	out = jsonstr.Append(out, text, jsonstr.Wire)
	return append(out, rest...), i, n, true
}

// WithText returns a copy of m (a user or custom message with string
// content) whose text is text; any other message is returned as is.
func WithText(m Message, text string) Message {
	switch v := m.(type) {
	case *UserMessage:
		if !v.Content.IsBlocks {
			c := *v
			c.Content.Text = text
			return &c
		}
	case *CustomMessage:
		if !v.Content.IsBlocks {
			c := *v
			c.Content.Text = text
			return &c
		}
	}
	return m
}

package jsonlit

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// HugeBytes is the literal size from which Text shares the data's bytes:
// a smaller string is copied, so that it does not keep a huge line alive.
const HugeBytes = 1 << 20

// Lit is a JSON string member as it is written, quotes and escapes
// included: a sub-slice of the data being decoded (encoding/json hands
// UnmarshalJSON one), nil when the member is absent. It decodes as a
// string member does: null leaves it as it is (a *Lit becomes nil), and
// any other non-string value is the error a string member gets.
type Lit []byte

// UnmarshalJSON keeps b, a string literal, without copying it.
func (l *Lit) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		return nil
	case '"':
		*l = b
		return nil
	}
	return json.Unmarshal(b, new(string)) // a string member's type error
}

// Text is the literal's text as encoding/json decodes it ("" for nil):
// escapes resolved, invalid UTF-8 replaced by U+FFFD. A huge literal that
// needs neither is the data's own bytes, not a copy; the string keeps the
// data alive until the store shares its entry's bytes instead
// (store/share.go).
func (l Lit) Text() string {
	if len(l) < 2 {
		return ""
	}
	inner := l[1 : len(l)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		if len(l) >= HugeBytes {
			return alias.String(inner)
		}
		return string(inner)
	}
	// One allocation, the text's: encoding/json would decode into a
	// buffer of its own and copy that into the string.
	b, _, _ := jsonstr.AppendUnquoted(make([]byte, 0, len(l)), l)
	return alias.String(b) // b is built here and never written again
}

// Raw is json.RawMessage without its copy: any JSON value as it is
// written, a sub-slice of the data being decoded.
type Raw []byte

// UnmarshalJSON keeps b without copying it.
func (r *Raw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

package store

import (
	"bytes"

	"github.com/armadra/ama-rpc/llm"
)

// learnOrigin reads the origin of a user message whose body starts with
// {"message":{"role":"user", (Entry.learn has checked the prefix) and
// returns factOrigin with factJoins or factHost as the origin says, or 0
// when the body is not one it can read exactly; the caller then decodes.
//
// The body has been validated as JSON, so the walk only finds the members
// of the message object, skipping their values (a string is skipped with
// IndexByte, so a long prompt costs a memchr, not a decode). It answers
// as llm.DecodeMessage would: the last member whose key matches "origin"
// case-insensitively (encoding/json's rule) wins. It gives up on an
// escaped key, a second role, an origin that is not a plain string, or
// a body with members after "message".
func learnOrigin(body []byte) facts {
	const open = len(`{"message":`)
	if len(body) < open+2 || body[open] != '{' {
		return 0
	}
	var origin []byte
	roles := 0
	i := open + 1
	for {
		i = skipSpace(body, i)
		if i >= len(body) {
			return 0
		}
		if body[i] == '}' { // an empty object, or after a trailing member
			break
		}
		if body[i] != '"' {
			return 0
		}
		end := stringEnd(body, i+1)
		if end < 0 {
			return 0
		}
		key := body[i+1 : end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return 0
		}
		i = skipSpace(body, end+1)
		if i >= len(body) || body[i] != ':' {
			return 0
		}
		i = skipSpace(body, i+1)
		if i >= len(body) {
			return 0
		}
		switch {
		case bytes.EqualFold(key, []byte("origin")):
			if body[i] != '"' {
				return 0 // null keeps an earlier origin; anything else fails to decode
			}
			end := stringEnd(body, i+1)
			if end < 0 || bytes.IndexByte(body[i+1:end], '\\') >= 0 {
				return 0
			}
			origin = body[i+1 : end]
			i = end + 1
		case bytes.EqualFold(key, []byte("role")):
			if roles++; roles > 1 {
				return 0
			}
			fallthrough
		default:
			if i = skipValue(body, i); i < 0 {
				return 0
			}
		}
		i = skipSpace(body, i)
		if i >= len(body) {
			return 0
		}
		if body[i] == ',' {
			i++
			continue
		}
		if body[i] != '}' {
			return 0
		}
		break
	}
	// The message object ends here; the body must end right after it.
	if rest := bytes.TrimSpace(body[i+1:]); len(rest) != 1 || rest[0] != '}' {
		return 0
	}
	f := factOrigin
	switch o := llm.Origin(origin); {
	case o.JoinsRun():
		f |= factJoins
	case o == llm.OriginHost:
		f |= factHost
	}
	return f
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the string whose
// first byte is at i (-1 if none).
func stringEnd(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// skipValue returns the index just after the (valid) JSON value at i, or
// -1.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			end := stringEnd(b, i+1)
			if end < 0 {
				return -1
			}
			i = end + 1
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object: a literal ended
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		default:
			if depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				return i
			}
		}
		i++
	}
	return -1
}

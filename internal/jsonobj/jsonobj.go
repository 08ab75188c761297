package jsonobj

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Members calls fn with each top-level key of the JSON object b and the
// raw bytes of its value, a sub-slice of b (nothing is copied: a 50 MiB
// prompt is not duplicated just to find its "type" and "id"). b must be
// valid JSON (checked by the caller); it returns false when b is not an
// object. Keys are decoded like encoding/json does; a repeated key is
// reported each time (the last one wins for callers that overwrite).
//
// Written by hand: encoding/json has no way to visit an object's members
// without decoding (and copying) their values.
func Members(b []byte, fn func(key string, val []byte)) bool {
	return RawMembers(b, func(key, val []byte) { fn(decodeKey(key), val) })
}

// RawMembers is Members with the key as it is written: its raw JSON
// string, quotes and escapes included, a sub-slice of b like the value.
// For callers that compare many keys against a few names and would
// rather not make a string of each.
func RawMembers(b []byte, fn func(key, val []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end := skipValue(b, i)
		if end < 0 {
			return false
		}
		key := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return false
		}
		fn(key, b[i:vend])
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// Elements calls fn with the raw bytes of each element of the JSON array
// b, sub-slices of b (nothing is copied). b must be valid JSON; it returns
// false when b is not an array.
func Elements(b []byte, fn func(val []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for i < len(b) {
		end := skipValue(b, i)
		if end < 0 {
			return false
		}
		fn(b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}

func decodeKey(raw []byte) string {
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf { // escapes, or bytes that may be invalid UTF-8
			var s string
			_ = json.Unmarshal(raw, &s)
			return s
		}
	}
	return string(raw[1 : len(raw)-1])
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i], or -1.
// Nesting is counted, not recursed into, so any depth works.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		// The closing quote is the first one not escaped: found with
		// IndexByte (a long string costs a memchr), then the backslashes
		// before it are counted.
		for j := i + 1; ; {
			q := bytes.IndexByte(b[j:], '"')
			if q < 0 {
				return -1
			}
			q += j
			n := 0
			for k := q - 1; k > i && b[k] == '\\'; k-- {
				n++
			}
			if n%2 == 0 {
				return q + 1
			}
			j = q + 1
		}
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipValue(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

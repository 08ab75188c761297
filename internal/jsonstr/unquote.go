package jsonstr

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnquoted appends to dst the text of the JSON string literal that
// starts at lit[0] as encoding/json decodes it: escapes resolved, an
// invalid UTF-8 byte and an unpaired surrogate escape replaced by U+FFFD.
// n is the literal's length, quotes included; ok is false when lit does
// not start with a valid literal (a control character, a bad escape, no
// closing quote), and what was appended to dst is then undefined. Runs of
// bytes that need no decoding are appended in one copy.
func AppendUnquoted(dst, lit []byte) (out []byte, n int, ok bool) {
	if len(lit) == 0 || lit[0] != '"' {
		return dst, 0, false
	}
	start := 1 // of the run not yet appended
	for j := 1; j < len(lit); {
		c := lit[j]
		switch {
		case c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\':
			j++
			continue
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(lit[j:])
			if r != utf8.RuneError || size != 1 {
				j += size
				continue
			}
		}
		dst = append(dst, lit[start:j]...)
		switch c {
		case '"':
			return dst, j + 1, true
		case '\\':
			var adv int
			if dst, adv = appendEscape(dst, lit[j:]); adv == 0 {
				return dst, 0, false
			}
			j += adv
		default:
			if c < 0x20 {
				return dst, 0, false
			}
			dst = utf8.AppendRune(dst, unicode.ReplacementChar) // an invalid UTF-8 byte
			j++
		}
		start = j
	}
	return dst, 0, false
}

// appendEscape appends the text of the escape at e[0] == '\\' (a
// surrogate pair's two escapes at once) and returns its length, 0 if it
// is not valid JSON.
func appendEscape(dst, e []byte) ([]byte, int) {
	if len(e) < 2 {
		return dst, 0
	}
	switch c := e[1]; c {
	case '"', '\\', '/':
		return append(dst, c), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r, ok := hex4(e[2:])
		if !ok {
			return dst, 0
		}
		if utf16.IsSurrogate(r) {
			// The pair's second half: a valid escape whether it pairs or not.
			if len(e) >= 12 && e[6] == '\\' && e[7] == 'u' {
				r2, ok := hex4(e[8:])
				if !ok {
					return dst, 0
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					return utf8.AppendRune(dst, dec), 12
				}
			}
			r = unicode.ReplacementChar
		}
		return utf8.AppendRune(dst, r), 6
	}
	return dst, 0
}

// hex4 decodes the four hex digits at the start of h.
func hex4(h []byte) (rune, bool) {
	if len(h) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range h[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

package jsonstr

import (
	"bytes"
	"unicode/utf8"
)

// Style selects how characters JSON allows raw are written.
type Style int

const (
	// Wire matches encoding/json with HTML escaping off: U+2028 and
	// U+2029 become \u2028 and \u2029, invalid UTF-8 becomes \ufffd.
	Wire Style = iota
	// Stringify matches JavaScript's JSON.stringify: U+2028/U+2029 stay
	// raw and invalid UTF-8 becomes a raw U+FFFD (session files).
	Stringify
)

const hexDigits = "0123456789abcdef"

// Append appends s as a JSON string. In both styles '"', '\\' and control
// characters are escaped (\b \f \n \r \t short forms, else \u00xx) and
// '<', '>', '&' stay raw.
func Append[T string | []byte](dst []byte, s T, style Style) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		j := plainRun(s[i:], false)
		i += j
		for stop := min(len(s), i+retryAfter(j)); i < stop; {
			if b := s[i]; b < utf8.RuneSelf {
				if b >= 0x20 && b != '"' && b != '\\' {
					i++
					continue
				}
				dst = append(dst, s[start:i]...)
				switch b {
				case '\\', '"':
					dst = append(dst, '\\', b)
				case '\b':
					dst = append(dst, '\\', 'b')
				case '\f':
					dst = append(dst, '\\', 'f')
				case '\n':
					dst = append(dst, '\\', 'n')
				case '\r':
					dst = append(dst, '\\', 'r')
				case '\t':
					dst = append(dst, '\\', 't')
				default:
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
				}
				i++
				start = i
				continue
			}
			r, size := decodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				if style == Wire {
					dst = append(dst, `\ufffd`...)
				} else {
					dst = append(dst, "\ufffd"...)
				}
				i += size
				start = i
			case (r == '\u2028' || r == '\u2029') && style == Wire:
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
				i += size
				start = i
			default:
				i += size
			}
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func decodeRune[T string | []byte](s T) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	default:
		return utf8.DecodeRune(v.([]byte))
	}
}

// Len is len(Append(nil, s, style)), computed without writing: callers
// size a buffer exactly, or count a huge string's encoding without
// allocating it. htmlEscaped counts '<', '>' and '&' as the six bytes of
// their \u00xx escapes, as encoding/json's default (HTML-escaping) output
// does.
func Len[T string | []byte](s T, style Style, htmlEscaped bool) int {
	n := 2
	for i := 0; i < len(s); {
		j := plainRun(s[i:], htmlEscaped)
		n, i = n+j, i+j
		for stop := min(len(s), i+retryAfter(j)); i < stop; {
			if b := s[i]; b < utf8.RuneSelf {
				switch {
				case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
					n += 2
				case b < 0x20:
					n += 6
				case htmlEscaped && (b == '<' || b == '>' || b == '&'):
					n += 6
				default:
					n++
				}
				i++
				continue
			}
			r, size := decodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				if style == Wire {
					n += 6
				} else {
					n += len("\ufffd")
				}
			case (r == '\u2028' || r == '\u2029') && (style == Wire || htmlEscaped):
				n += 6
			default:
				n += size
			}
			i += size
		}
	}
	return n
}

// plainRun is the length of the run of bytes at the start of s that are
// written as they are in every style (printable ASCII but '"' and '\\',
// and but '<', '>' and '&' when html), in whole words of eight: a huge
// prompt's text is mostly such bytes, and the byte loops of Len and
// Append over them were a fifth of the CPU of taking one in (issue 28).
// The loops try it again eight bytes after a run ends (past the byte
// that ended it), 64 after it found none, so a text full of escapes
// costs one word test per 64 bytes more.
func plainRun[T string | []byte](s T, html bool) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// w itself: bytes from 0x80 (UTF-8).
		bad := w&highs | stops(w)
		if html {
			bad |= (zeroBytes(w^'<'*ones) | zeroBytes(w^'>'*ones) | zeroBytes(w^'&'*ones)) & highs
		}
		if bad != 0 {
			break
		}
	}
	return i
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// zeroBytes has the high bit of each zero byte of w set (and maybe of
// bytes above one; none when w has no zero byte: the usual SWAR test).
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w }

// stops has a high bit set in w's bytes from the first that is '"', '\\'
// or below 0x20, and none if there is no such byte.
func stops(w uint64) uint64 {
	return (zeroBytes(w^'"'*ones) | zeroBytes(w^'\\'*ones) | (w-0x20*ones)&^w) & highs
}

// HasStop reports whether any of the eight bytes of w is one a JSON
// string cannot hold raw ('"', '\\', below 0x20); exact. The one word
// test of string bytes: plainRun here, internal/jsonobj's scanner over
// the bytes of a string it validates.
func HasStop(w uint64) bool { return stops(w) != 0 }

// retryAfter is how far the byte loops go before they try plainRun again
// after a run of n bytes.
func retryAfter(n int) int {
	if n == 0 {
		return 64
	}
	return 8
}

// WireClean reports whether b goes on the wire unchanged: valid UTF-8
// without U+2028 or U+2029 (AppendWireSafe would copy it byte for byte).
// The wire rule's one predicate: internal/stdio's last pass before
// stdout asks it, and the session store records it per entry.
func WireClean(b []byte) bool { return utf8.Valid(b) && !hasSeparator(b) }

// hasSeparator reports whether b holds U+2028 or U+2029 (E2 80 A8/A9).
func hasSeparator(b []byte) bool {
	for {
		i := bytes.Index(b, []byte{0xe2, 0x80})
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if c := b[i+2]; c == 0xa8 || c == 0xa9 {
			return true
		}
		b = b[i+2:]
	}
}

// AppendWireSafe appends b with every byte that is not part of valid
// UTF-8 written as the escape \ufffd and U+2028/U+2029 as \u2028/\u2029,
// as the Wire style writes them in a string. In a JSON text such bytes
// can only be inside strings, where the escapes are valid, so valid JSON
// stays valid and means what JSON.parse would read.
func AppendWireSafe(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			j := i + 1
			for j < len(b) && b[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, b[i:j]...)
			i = j
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028':
			dst = append(dst, `\u2028`...)
		case r == '\u2029':
			dst = append(dst, `\u2029`...)
		default:
			dst = append(dst, b[i:i+n]...)
		}
		i += n
	}
	return dst
}

package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Marshal encodes v as one protocol line (with the trailing '\n'): no HTML
// escaping of <, > and &, and U+2028/U+2029 escaped (encoding/json always
// escapes those two).
func Marshal(v any) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// encodeEvent writes {"type":<t>, <fields of e>} as one line.
func encodeEvent(e events.Event) ([]byte, error) {
	body, err := Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", e.Type(), err)
	}
	out := make([]byte, 0, len(body)+len(e.Type())+12)
	out = append(out, `{"type":`...)
	out = strconv.AppendQuote(out, e.Type()) // event type names are plain ASCII
	if !bytes.HasPrefix(body, []byte("{}")) {
		out = append(out, ',')
		out = append(out, body[1:]...)
	} else {
		out = append(out, "}\n"...)
	}
	return out, nil
}

// appendDeltaLine writes a message_update line for a delta event. It is the
// hot path of streaming and avoids reflection.
func appendDeltaLine(dst []byte, typ string, idx int, delta []byte, u *llm.Usage) []byte {
	dst = append(dst, `{"type":"message_update","assistantMessageEvent":{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","contentIndex":`...)
	dst = strconv.AppendInt(dst, int64(idx), 10)
	dst = append(dst, `,"delta":`...)
	dst = appendJSONString(dst, delta)
	dst = append(dst, '}')
	if u != nil {
		dst = append(dst, `,"usage":`...)
		dst = appendUsage(dst, u)
	}
	return append(dst, "}\n"...)
}

func appendUsage(dst []byte, u *llm.Usage) []byte {
	if u.Cost != nil {
		b, _ := json.Marshal(u)
		return append(dst, b...)
	}
	dst = append(dst, `{"input":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	dst = append(dst, `,"output":`...)
	dst = strconv.AppendInt(dst, int64(u.Output), 10)
	dst = append(dst, `,"cacheRead":`...)
	dst = strconv.AppendInt(dst, int64(u.CacheRead), 10)
	dst = append(dst, `,"cacheWrite":`...)
	dst = strconv.AppendInt(dst, int64(u.CacheWrite), 10)
	dst = append(dst, `,"totalTokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json does
// with HTML escaping off: quotes, backslashes and control characters are
// escaped (\b \f \n \r \t short forms), U+2028/U+2029 become \u2028/\u2029,
// invalid UTF-8 becomes \ufffd.
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
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
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

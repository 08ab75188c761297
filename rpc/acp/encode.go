package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// envelopeOrder is the key order of written messages (the order ACP peers
// and the reference transcripts use).
var envelopeOrder = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// encodeEnvelope rewrites one marshalled JSON-RPC message as a protocol
// line: envelope keys in envelopeOrder (unknown keys after them, sorted),
// "jsonrpc":"2.0" always present, HTML escapes (\u003c, \u003e, \u0026)
// that encoding/json adds undone, and a trailing newline.
func encodeEnvelope(raw []byte) ([]byte, error) { return encodeEnvelopeID(raw, nil) }

// encodeEnvelopeID is encodeEnvelope that passes a response's id through
// responseID (nil: unchanged): the stream gives back the ids it replaced
// on the way in (ids.go).
func encodeEnvelopeID(raw []byte, responseID func(json.RawMessage) json.RawMessage) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	if _, isRequest := m["method"]; !isRequest && responseID != nil {
		if id, ok := m["id"]; ok {
			m["id"] = responseID(id)
		}
	}
	m["jsonrpc"] = json.RawMessage(`"2.0"`)
	out := make([]byte, 0, len(raw)+16)
	out = append(out, '{')
	first := true
	put := func(k string) {
		v, ok := m[k]
		if !ok {
			return
		}
		delete(m, k)
		if !first {
			out = append(out, ',')
		}
		first = false
		kb, _ := json.Marshal(k)
		out = append(out, kb...)
		out = append(out, ':')
		out = appendUnescapedHTML(out, v)
	}
	for _, k := range envelopeOrder {
		put(k)
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		put(k)
	}
	out = append(out, '}', '\n')
	return out, nil
}

// appendUnescapedHTML appends the JSON text v with the escapes \u003c,
// \u003e and \u0026 inside strings replaced by the characters themselves.
// Every other escape is kept as it is. v must be valid JSON.
func appendUnescapedHTML(dst, v []byte) []byte {
	if !bytes.Contains(v, []byte(`\u00`)) {
		return append(dst, v...)
	}
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case '"':
			inString = false
			dst = append(dst, c)
		case '\\':
			if i+1 >= len(v) {
				return append(dst, c)
			}
			if v[i+1] == 'u' && i+5 < len(v) && v[i+2] == '0' && v[i+3] == '0' {
				switch string(v[i+4 : i+6]) {
				case "3c", "3C":
					dst = append(dst, '<')
					i += 5
					continue
				case "3e", "3E":
					dst = append(dst, '>')
					i += 5
					continue
				case "26":
					dst = append(dst, '&')
					i += 5
					continue
				}
			}
			// Keep the escape pair; the escaped character is never a
			// string delimiter.
			dst = append(dst, c, v[i+1])
			i++
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

package store

import (
	"github.com/armadra/ama-rpc/internal/jsonstr"

	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// This file holds a small validating JSON scanner. It accepts exactly what
// JSON.parse accepts (RFC 8259 grammar, JSON whitespace only between tokens;
// bytes inside strings are not checked for UTF-8 validity, like Go's
// decoder) and records the byte spans of the top-level object's members, so
// a session line is validated and split into fields in one pass without
// decoding any value. Decoding happens later, only for the values that are
// needed (type, id, parentId, timestamp), and message bodies stay raw.

// maxDepth bounds nesting; deeper input is rejected as invalid (JSON.parse
// fails with a stack overflow somewhere around this depth too).
const maxDepth = 10000

// field is one member of the top-level object: key and value are byte
// offsets into the scanned line; the key span includes its quotes.
type field struct {
	ks, ke int  // key span
	kesc   bool // key contains escapes
	vs, ve int  // value span
	vesc   bool // value is a string containing escapes
}

// scanner validates JSON text. The zero value is ready; fields is reused
// between calls to avoid allocations.
type scanner struct {
	b      []byte
	fields []field
	ws     bool // whitespace was skipped inside the value (it is not compact)
	// inner holds the members of the object value of a top-level member
	// keyed exactly "message" (a message entry's message), and blocks the
	// members of the objects in that object's array member keyed exactly
	// "content", each block's members after a separator (ks == -1; -2 for
	// an element that is not an object). They
	// are recorded in the same pass, so a message's facts are read from
	// spans (msgfacts.go) without a second walk of its body. Only when
	// message is set (the readers of entry lines).
	// usage holds the members of the message's object member keyed
	// exactly "usage", and cost those of that object's object member
	// keyed exactly "cost" (the last of each); usageAt and costAt are the
	// offsets of the values they were recorded from (-1: none), so that
	// the facts read a usage without scanning it again.
	message         bool
	inner, blocks   []field
	usage, cost     []field
	usageAt, costAt int
}

// rec says which members object records.
type rec uint8

const (
	recNone  rec = iota
	recTop       // the top-level object's members: fields
	recInner     // the message object's members: inner
	recBlock     // a content block's members: blocks
	recUsage     // the message's usage members: usage
	recCost      // the usage's cost members: cost
)

// Value kinds returned by scan.
const (
	kindInvalid = 0
	kindObject  = '{'
	kindArray   = '['
	kindString  = '"'
	kindOther   = 'x' // number, true, false, null
)

// scan reports whether b is one JSON value surrounded by optional JSON
// whitespace, and its kind. For an object, s.fields holds its members in
// order (duplicates included).
func (s *scanner) scan(b []byte) byte {
	s.b = b
	s.fields = s.fields[:0]
	s.inner, s.blocks = s.inner[:0], s.blocks[:0]
	s.usage, s.cost = s.usage[:0], s.cost[:0]
	s.usageAt, s.costAt = -1, -1
	s.ws = false
	i := skipWS(b, 0)
	if i >= len(b) {
		return kindInvalid
	}
	kind := byte(kindOther)
	var end int
	switch b[i] {
	case '{':
		kind = kindObject
		end = s.object(i, 1, recTop)
	case '[':
		kind = kindArray
		end = s.value(i, 0)
	case '"':
		kind = kindString
		end, _ = scanString(b, i)
	default:
		end = s.value(i, 0)
	}
	if end < 0 || skipWS(b, end) != len(b) {
		s.fields = s.fields[:0]
		return kindInvalid
	}
	return kind
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skip skips JSON whitespace inside a value, noting whether there was any.
func (s *scanner) skip(i int) int {
	j := skipWS(s.b, i)
	if j != i {
		s.ws = true
	}
	return j
}

// value scans the value starting at b[i] and returns the index after it, or
// -1 when it is invalid.
func (s *scanner) value(i, depth int) int {
	b := s.b
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '{':
		return s.object(i, depth+1, recNone)
	case '[':
		return s.array(i, depth+1)
	case '"':
		e, _ := scanString(b, i)
		return e
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		return scanNumber(b, i)
	}
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

func (s *scanner) object(i, depth int, r rec) int {
	if depth > maxDepth {
		return -1
	}
	b := s.b
	i = s.skip(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		ks := i
		ke, kesc := scanString(b, i)
		if ke < 0 {
			return -1
		}
		i = s.skip(ke)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		vs := s.skip(i + 1)
		var ve int
		vesc := false
		switch {
		case vs >= len(b):
			return -1
		case b[vs] == '"':
			ve, vesc = scanString(b, vs)
		case r == recTop && s.message && b[vs] == '{' && string(b[ks:ke]) == `"message"`:
			ve = s.object(vs, depth+1, recInner)
		case r == recInner && b[vs] == '[' && string(b[ks:ke]) == `"content"`:
			ve = s.blockArray(vs, depth+1)
		case r == recInner && b[vs] == '{' && string(b[ks:ke]) == `"usage"`:
			s.usage, s.cost, s.costAt = s.usage[:0], s.cost[:0], -1 // the last one counts
			s.usageAt = vs
			ve = s.object(vs, depth+1, recUsage)
		case r == recUsage && b[vs] == '{' && string(b[ks:ke]) == `"cost"`:
			s.cost = s.cost[:0]
			s.costAt = vs
			ve = s.object(vs, depth+1, recCost)
		default:
			ve = s.value(vs, depth)
		}
		if ve < 0 {
			return -1
		}
		switch f := (field{ks: ks, ke: ke, kesc: kesc, vs: vs, ve: ve, vesc: vesc}); r {
		case recTop:
			s.fields = append(s.fields, f)
		case recInner:
			s.inner = append(s.inner, f)
		case recBlock:
			s.blocks = append(s.blocks, f)
		case recUsage:
			s.usage = append(s.usage, f)
		case recCost:
			s.cost = append(s.cost, f)
		}
		i = s.skip(ve)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = s.skip(i + 1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// blockArray is array for the message's content: the members of each
// element that is an object are recorded in blocks, after a separator.
func (s *scanner) blockArray(i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	b := s.b
	i = s.skip(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i < len(b) && b[i] == '{' {
			s.blocks = append(s.blocks, field{ks: -1})
			i = s.object(i, depth+1, recBlock)
		} else {
			s.blocks = append(s.blocks, field{ks: -2})
			i = s.value(i, depth)
		}
		if i < 0 {
			return -1
		}
		i = s.skip(i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = s.skip(i + 1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

func (s *scanner) array(i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	b := s.b
	i = s.skip(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		i = s.value(i, depth)
		if i < 0 {
			return -1
		}
		i = s.skip(i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = s.skip(i + 1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// strStop marks the bytes that end the fast path inside a string.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

var hexDigit = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// scanString scans the string whose opening quote is b[i]. It returns the
// index after the closing quote (-1 if invalid) and whether it has escapes.
func scanString(b []byte, i int) (int, bool) {
	esc := false
	i++
	for {
		for i+8 <= len(b) && !hasStop(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1, esc
		}
		switch b[i] {
		case '"':
			return i + 1, esc
		case '\\':
			esc = true
			i++
			if i >= len(b) {
				return -1, esc
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 || !hexDigit[b[i+1]] || !hexDigit[b[i+2]] || !hexDigit[b[i+3]] || !hexDigit[b[i+4]] {
					return -1, esc
				}
				i += 5
			default:
				return -1, esc
			}
		default: // control character
			return -1, esc
		}
	}
}

// hasStop reports whether any byte of the 8 in x is '"', '\\' or below
// 0x20 (exact, using the usual SWAR zero-byte tests).
func hasStop(x uint64) bool {
	const (
		lo   = 0x0101010101010101
		hi   = 0x8080808080808080
		quot = lo * '"'
		bsl  = lo * '\\'
		ctl  = lo * 0x20
	)
	q := x ^ quot
	s := x ^ bsl
	return ((q-lo)&^q|(s-lo)&^s|(x-ctl)&^x)&hi != 0
}

func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// keyIs reports whether the key of f (in line) equals name.
func (f *field) keyIs(line []byte, name string) bool {
	if raw := line[f.ks+1 : f.ke-1]; !f.kesc && utf8.Valid(raw) {
		return string(raw) == name
	}
	return unquote(line[f.ks:f.ke]) == name
}

// strIs reports whether the value of f is the string s, without
// allocating when it has no escapes.
func (f *field) strIs(line []byte, s string) bool {
	if line[f.vs] != '"' {
		return false
	}
	if !f.vesc {
		return string(line[f.vs+1:f.ve-1]) == s
	}
	return unquote(line[f.vs:f.ve]) == s
}

// isString reports whether the value of f is a JSON string.
func (f *field) isString(line []byte) bool { return line[f.vs] == '"' }

// isNull reports whether the value of f is null.
func (f *field) isNull(line []byte) bool { return line[f.vs] == 'n' }

// str decodes the string value of f; it must be a string. Invalid UTF-8
// becomes U+FFFD, as when JavaScript decodes the line.
func (f *field) str(line []byte) string {
	if raw := line[f.vs+1 : f.ve-1]; !f.vesc && utf8.Valid(raw) {
		return string(raw)
	}
	return unquote(line[f.vs:f.ve])
}

// unquote decodes a valid JSON string literal (quotes included).
func unquote(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}

// lastField returns the last member of fields named name.
func lastField(line []byte, fields []field, name string) (*field, bool) {
	for i := len(fields) - 1; i >= 0; i-- {
		if fields[i].keyIs(line, name) {
			return &fields[i], true
		}
	}
	return nil, false
}

// objectField returns the raw value of the last top-level member named key
// of the JSON object obj (nil when obj is not a valid object or lacks key).
func objectField(obj []byte, key string) []byte {
	var s scanner
	if s.scan(obj) != kindObject {
		return nil
	}
	if f, ok := lastField(obj, s.fields, key); ok {
		return obj[f.vs:f.ve]
	}
	return nil
}

// objectString returns the last top-level member named key of obj when it
// is a string.
func objectString(obj []byte, key string) (string, bool) {
	raw := objectField(obj, key)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return unquote(raw), true
}

// appendJSONString appends s the way JSON.stringify writes it (session
// files keep U+2028/U+2029 raw, like the reference).
func appendJSONString(dst []byte, s string) []byte {
	return jsonstr.Append(dst, s, jsonstr.Stringify)
}

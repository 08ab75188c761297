package jsonobj

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// Written by hand: encoding/json cannot validate a line and hand back the
// spans of its members in the same pass, nor visit an object's members
// without decoding (and copying) their values.

// Kind is the kind of the value Scan read.
type Kind byte

// The kinds Scan returns.
const (
	Invalid Kind = 0
	Object  Kind = '{'
	Array   Kind = '['
	String  Kind = '"'
	Scalar  Kind = 'x' // a number, true, false or null
)

// MaxDepth bounds nesting; deeper input is invalid (encoding/json stops at
// the same depth, and JSON.parse overflows its stack about there too).
const MaxDepth = 10000

// Member is one recorded member of an object: byte offsets into the
// scanned input, the key's span with its quotes. In a recorded array each
// element is a separator Member (KeyStart -1 for an object, whose members
// follow it, -2 for any other value) whose value span is the element.
type Member struct {
	KeyStart, KeyEnd int
	ValStart, ValEnd int
	KeyEsc, ValEsc   bool // the key, or the value (a string), has escapes
}

// Nest asks Scan to record, in the same pass, the members of an object or
// the elements of an array nested in a recorded value: the value of a
// member keyed exactly Key (the raw key, quotes included) of an object
// recorded in list Parent, when the value is an array (Array) or an
// object (!Array). Nests[k] records in list k+1; Parent < k+1.
type Nest struct {
	Parent int
	Key    string
	Array  bool
}

// Scanner is a validating JSON scanner. It accepts exactly what JSON.parse
// accepts (RFC 8259, JSON whitespace only between tokens; bytes inside
// strings are not checked for UTF-8 validity, like Go's decoder) and
// records the members of the top-level value (list 0) and of the values
// Nests name, without decoding any of them. The zero value is ready; a
// Scanner is reused to keep its lists, and is not safe for concurrent use.
type Scanner struct {
	Nests  []Nest
	Spaced bool // whitespace was skipped inside the last value (it is not compact)
	// NonASCII: a string of the last value holds a byte of 0x80 or more.
	// A valid value without one is all ASCII, so also valid UTF-8.
	NonASCII bool
	b        []byte
	lists    [][]Member
	at       []int
	// trusted: b is known to be valid JSON (the visiting functions below),
	// so a string's end is found with memchr, not checked byte by byte:
	// a 50 MiB prompt costs a millisecond, not ten.
	trusted bool
	// visit, when set, is handed the top-level members or elements
	// (separators only) instead of list 0, as they are found: the
	// visiting functions keep no list, whatever the size of the value.
	visit func(Member)
	// high ORs the bytes of the strings scanned (NonASCII): the words the
	// fast path skips and the bytes it steps over one at a time.
	high uint64
}

// visiting is the list of object and array that goes to Scanner.visit.
const visiting = -2

// Scan reports whether b is one JSON value surrounded by optional JSON
// whitespace, and its kind; it records the members of an object or the
// elements of an array (list 0) and those Nests ask for.
func (s *Scanner) Scan(b []byte) Kind {
	k := s.scan(b)
	s.b = nil // a Scanner kept for the next line does not keep this one alive
	return k
}

func (s *Scanner) scan(b []byte) Kind {
	s.b, s.Spaced, s.high = b, false, 0
	for k, n := range s.Nests {
		if n.Parent < 0 || n.Parent > k {
			panic("jsonobj: a Nest's parent list must come before its own")
		}
	}
	if s.visit == nil && len(s.lists) != len(s.Nests)+1 {
		s.lists, s.at = make([][]Member, len(s.Nests)+1), make([]int, len(s.Nests)+1)
	}
	for k := range s.lists {
		s.lists[k], s.at[k] = s.lists[k][:0], -1
	}
	i := skipWS(b, 0)
	if i >= len(b) {
		return Invalid
	}
	kind, end, top := Scalar, -1, 0
	if s.visit != nil {
		top = visiting
	}
	switch b[i] {
	case '{':
		kind, end = Object, s.object(i, 1, top)
	case '[':
		kind, end = Array, s.array(i, 1, top)
	case '"':
		kind, end = String, s.value(i, 0)
	default:
		end = s.value(i, 0)
	}
	if end < 0 || skipWS(b, end) != len(b) {
		for k := range s.lists {
			s.lists[k] = s.lists[k][:0]
		}
		return Invalid
	}
	s.NonASCII = s.high&0x8080808080808080 != 0 || s.trusted // trusted strings are skipped unread
	return kind
}

// Members returns the members recorded in list k (0: the top-level value;
// k: Nests[k-1]'s last occurrence), offsets into the scanned input.
func (s *Scanner) Members(k int) []Member { return s.lists[k] }

// At returns the offset of the value list k was recorded from (-1: none).
func (s *Scanner) At(k int) int { return s.at[k] }

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skip skips JSON whitespace inside a value, noting whether there was any.
func (s *Scanner) skip(i int) int {
	j := skipWS(s.b, i)
	if j != i {
		s.Spaced = true
	}
	return j
}

// value scans the value starting at b[i] and returns the index after it,
// or -1 when it is invalid. Its members are not recorded.
func (s *Scanner) value(i, depth int) int {
	b := s.b
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '{':
		return s.object(i, depth+1, -1)
	case '[':
		return s.array(i, depth+1, -1)
	case '"':
		e, _ := scanString(b, i, s.trusted, &s.high)
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

// nested scans the value at vs of member key of an object recorded in
// list r when a Nest asks for it (ok), recording it in the Nest's list:
// that list and those nested in it start again (the last one counts).
func (s *Scanner) nested(r int, key []byte, vs, depth int) (end int, ok bool) {
	for k := range s.Nests {
		n := &s.Nests[k]
		if n.Parent != r || n.Array != (s.b[vs] == '[') || string(key) != n.Key {
			continue
		}
		s.reset(k + 1)
		s.at[k+1] = vs
		if n.Array {
			return s.array(vs, depth+1, k+1), true
		}
		return s.object(vs, depth+1, k+1), true
	}
	return 0, false
}

// reset empties list l and the lists nested in it.
func (s *Scanner) reset(l int) {
	s.lists[l], s.at[l] = s.lists[l][:0], -1
	for j := l + 1; j < len(s.lists); j++ {
		p := s.Nests[j-1].Parent
		for p > l {
			p = s.Nests[p-1].Parent
		}
		if p == l {
			s.lists[j], s.at[j] = s.lists[j][:0], -1
		}
	}
}

// open steps into the object or array at s.b[i], closed by close: the
// index of its first member or element (more), else the index after it
// (empty), or -1 when it is nested too deep.
func (s *Scanner) open(i, depth int, close byte) (int, bool) {
	if depth > MaxDepth {
		return -1, false
	}
	i = s.skip(i + 1)
	if i < len(s.b) && s.b[i] == close {
		return i + 1, false
	}
	return i, true
}

// next steps past a member or element that ends at i (-1: invalid): the
// index of the next one (more), else the index after the closing close,
// or -1 when neither follows.
func (s *Scanner) next(i int, close byte) (int, bool) {
	if i < 0 {
		return -1, false
	}
	if i = s.skip(i); i < len(s.b) {
		switch s.b[i] {
		case ',':
			return s.skip(i + 1), true
		case close:
			return i + 1, false
		}
	}
	return -1, false
}

// object scans the object at b[i], recording its members in list r (-1:
// none; visiting: s.visit).
func (s *Scanner) object(i, depth, r int) int {
	b := s.b
	i, more := s.open(i, depth, '}')
	for more {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		ks := i
		ke, kesc := scanString(b, i, s.trusted, &s.high)
		if ke < 0 {
			return -1
		}
		i = s.skip(ke)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		vs := s.skip(i + 1)
		ve, vesc, ok := 0, false, false
		switch {
		case vs >= len(b):
			return -1
		case b[vs] == '"':
			ve, vesc = scanString(b, vs, s.trusted, &s.high)
		case r >= 0 && len(s.Nests) > 0 && (b[vs] == '{' || b[vs] == '['):
			if ve, ok = s.nested(r, b[ks:ke], vs, depth); !ok {
				ve = s.value(vs, depth)
			}
		default:
			ve = s.value(vs, depth)
		}
		switch m := (Member{KeyStart: ks, KeyEnd: ke, KeyEsc: kesc, ValStart: vs, ValEnd: ve, ValEsc: vesc}); {
		case ve < 0:
		case r >= 0:
			l := &s.lists[r]
			*l = append(*l, m)
		case r == visiting:
			s.visit(m)
		}
		if uint(ve) < uint(len(b)-1) && b[ve] == ',' && b[ve+1] == '"' { // compact: next inline
			i = ve + 1
			continue
		}
		i, more = s.next(ve, '}')
	}
	return i
}

// array scans the array at b[i], recording in list r (-1: none;
// visiting: s.visit, separators only) a separator for each element,
// followed by its members when it is an object.
func (s *Scanner) array(i, depth, r int) int {
	b := s.b
	i, more := s.open(i, depth, ']')
	for more {
		start := i
		if r >= 0 && i < len(b) && b[i] == '{' {
			s.lists[r] = append(s.lists[r], Member{KeyStart: -1, KeyEnd: -1, ValStart: i})
			at := len(s.lists[r]) - 1
			if i = s.object(i, depth+1, r); i >= 0 {
				s.lists[r][at].ValEnd = i
			}
		} else if i = s.value(i, depth); i >= 0 && r != -1 {
			sep := -2
			if b[start] == '{' {
				sep = -1
			}
			if m := (Member{KeyStart: sep, KeyEnd: sep, ValStart: start, ValEnd: i}); r == visiting {
				s.visit(m)
			} else {
				s.lists[r] = append(s.lists[r], m)
			}
		}
		i, more = s.next(i, ']')
	}
	return i
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

// skipString is scanString for a valid string: its closing quote is the
// first one not escaped, found with IndexByte, then the backslashes
// before it are counted. Escapes are not looked for: it says there may be
// some (only walk's callers scan trusted input, and they look at the raw
// bytes).
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1, false
		}
		q += j
		n := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// scanString scans the string whose opening quote is b[i]. It returns the
// index after the closing quote (-1 if invalid) and whether it has escapes.
// A trusted string is known to be valid (skipString). The bytes of an
// untrusted one are ORed into *high.
func scanString(b []byte, i int, trusted bool, high *uint64) (int, bool) {
	if trusted {
		return skipString(b, i)
	}
	esc := false
	i++
	acc := uint64(0)
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if jsonstr.HasStop(w) {
				break
			}
			acc |= w
			i += 8
		}
		for i < len(b) && !strStop[b[i]] {
			acc |= uint64(b[i])
			i++
		}
		if i >= len(b) {
			return -1, esc
		}
		switch b[i] {
		case '"':
			*high |= acc
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
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !IsDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !IsDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && IsDigit(b[i]) {
		i++
	}
	return i
}

// IsDigit reports an ASCII digit.
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// Key returns the raw key of m in b, quotes included.
func (m *Member) Key(b []byte) []byte { return b[m.KeyStart:m.KeyEnd] }

// Val returns the raw value of m in b.
func (m *Member) Val(b []byte) []byte { return b[m.ValStart:m.ValEnd] }

// KeyIs reports whether the key of m (in b) decodes to name.
func (m *Member) KeyIs(b []byte, name string) bool {
	if raw := b[m.KeyStart+1 : m.KeyEnd-1]; !m.KeyEsc && utf8.Valid(raw) {
		return string(raw) == name
	}
	return Unquote(m.Key(b)) == name
}

// KeyString returns the key of m (in b) decoded as Members decodes it.
func (m *Member) KeyString(b []byte) string {
	if key := m.Key(b); bytesPlain(key) {
		return string(key[1 : len(key)-1])
	}
	return Unquote(m.Key(b))
}

// StrIs reports whether the value of m is the string str, without
// allocating when it has no escapes.
func (m *Member) StrIs(b []byte, str string) bool {
	if b[m.ValStart] != '"' {
		return false
	}
	if !m.ValEsc {
		return string(b[m.ValStart+1:m.ValEnd-1]) == str
	}
	return Unquote(m.Val(b)) == str
}

// IsString reports whether the value of m is a JSON string.
func (m *Member) IsString(b []byte) bool { return b[m.ValStart] == '"' }

// IsNull reports whether the value of m is null.
func (m *Member) IsNull(b []byte) bool { return b[m.ValStart] == 'n' }

// Str decodes the string value of m; it must be a string. Invalid UTF-8
// becomes U+FFFD, as when JavaScript decodes the line.
func (m *Member) Str(b []byte) string {
	if raw := b[m.ValStart+1 : m.ValEnd-1]; !m.ValEsc && utf8.Valid(raw) {
		return string(raw)
	}
	return Unquote(m.Val(b))
}

// Unquote decodes a valid JSON string literal (quotes included); "" when
// raw is not one. A literal alone is its bytes when nothing in it needs
// decoding (one copy, as encoding/json makes), else decoded by
// jsonstr.AppendUnquoted (encoding/json's text, fuzzed against it);
// anything else, a literal with space around it or none, is
// encoding/json's to judge.
func Unquote(raw []byte) string {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plainInner(raw[1:n-1]) {
		return string(raw[1 : n-1])
	}
	if out, n, ok := jsonstr.AppendUnquoted(nil, raw); ok && n == len(raw) {
		return string(out)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}

// plainInner reports a string literal's inside that decodes to itself:
// no quote, backslash or control character, valid UTF-8.
func plainInner(in []byte) bool {
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(in)
}

// Last returns the last of members (of b) whose key is name.
func Last(b []byte, members []Member, name string) (*Member, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].KeyIs(b, name) {
			return &members[i], true
		}
	}
	return nil, false
}

// walk scans b, when it is of kind want, with a Scanner (trusted: b is
// known to be valid) that hands fn the top-level members or elements.
func walk(b []byte, want Kind, trusted bool, fn func(m Member)) bool {
	if i := skipWS(b, 0); i >= len(b) || Kind(b[i]) != want {
		return false
	}
	s := Scanner{trusted: trusted, visit: fn}
	return s.Scan(b) == want
}

// Field returns the raw value of the last top-level member named key of
// the JSON object obj (nil when obj is not a valid object or lacks key).
func Field(obj []byte, key string) (v []byte) {
	if !walk(obj, Object, false, func(m Member) {
		if m.KeyIs(obj, key) {
			v = m.Val(obj)
		}
	}) {
		return nil
	}
	return v
}

// StringField returns the last top-level member named key of obj when it
// is a string.
func StringField(obj []byte, key string) (string, bool) {
	raw := Field(obj, key)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return Unquote(raw), true
}

// Members calls fn with each top-level key of the JSON object b, decoded
// like encoding/json does, and the raw bytes of its value, a sub-slice of
// b (nothing is copied: a 50 MiB prompt is not duplicated just to find its
// "type" and "id"). b must be valid JSON (checked by the caller); it
// returns false, without calling fn, when b is not an object. A repeated
// key is reported each time (the last one wins for callers that
// overwrite). Nothing is kept per member, whatever their number.
func Members(b []byte, fn func(key string, val []byte)) bool {
	return walk(b, Object, true, func(m Member) { fn(m.KeyString(b), m.Val(b)) })
}

// bytesPlain reports a raw string that decodes to its inner bytes: no
// escapes, and only ASCII (other bytes may be invalid UTF-8).
func bytesPlain(raw []byte) bool {
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// RawMembers is Members with the key as it is written: its raw JSON
// string, quotes and escapes included, a sub-slice of b like the value.
// For callers that compare many keys against a few names and would
// rather not make a string of each.
func RawMembers(b []byte, fn func(key, val []byte)) bool {
	return walk(b, Object, true, func(m Member) { fn(m.Key(b), m.Val(b)) })
}

// Elements calls fn with the raw bytes of each element of the JSON array
// b, sub-slices of b (nothing is copied). b must be valid JSON; it returns
// false, without calling fn, when b is not an array.
func Elements(b []byte, fn func(val []byte)) bool {
	return walk(b, Array, true, func(m Member) { fn(m.Val(b)) })
}

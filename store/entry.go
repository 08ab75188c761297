package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/llm"
)

// Entry types.
const (
	TypeMessage             = "message"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeContextEdit         = "context_edit"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	TypeUsage               = "usage"
)

// Entry is one line of a session file after the header. Its JSON form is
// {"type":…, <type-specific fields in order>, "id":…, "parentId":…,
// "timestamp":…}; Body holds the type-specific fields as a JSON object.
//
// Entries read from a file keep the body members in their original order
// and text (top-level whitespace removed). An Entry must not be modified
// once it has been appended or read; its decoded message is cached, and
// entries are shared between snapshots, trees and forks.
type Entry struct {
	Type      string
	ID        string
	ParentID  *string // nil for a root
	Timestamp string  // ISO 8601

	// body holds the type-specific fields as a JSON object (Body), bodyLen
	// bytes long; nil means no body. The pointer is atomic because a huge
	// body moves out of the Go heap once it is on disk (spill.go) while
	// other goroutines may be reading the entry: they see one copy or the
	// other, byte for byte the same. Nothing else about an entry changes
	// after it is shared.
	body    atomic.Pointer[byte]
	bodyLen int
	spilled atomic.Bool // the body has moved, or is moving, out of the heap (spill.go)

	// facts and span are read from the body once, when the entry is made
	// (parse, constructor), while the body is hot in the cache; later
	// questions (is it a system message, its customType, a label's
	// target and text, the session name) then do not touch the body. The
	// zero value means "not known": the body is read.
	facts facts
	span  uint16 // length of the customType (custom) or targetId (label)
	// dec caches the decoded message (Message, contextMessage); atomic
	// for the same reason as body, whose big text it may share.
	dec atomic.Pointer[decoded]
	// msg holds a message's facts (msgfacts.go), nil when not known.
	msg *MessageFacts
}

// decoded is the outcome of decoding an entry's message.
type decoded struct {
	msg llm.Message
	err error
}

// Body returns the type-specific fields as a JSON object (nil for none).
// The bytes must not be modified.
func (e *Entry) Body() json.RawMessage {
	p := e.body.Load()
	if p == nil {
		return nil
	}
	return alias.Slice(p, e.bodyLen)
}

// setBody sets the body of an entry that is not shared yet.
func (e *Entry) setBody(b []byte) {
	e.bodyLen = len(b)
	e.body.Store(alias.Ptr(b))
}

// cached returns the decoded message, decoding it with decode on first
// use. Two first uses at once may both decode; one result is kept.
func (e *Entry) cached(decode func() (llm.Message, error)) (llm.Message, error) {
	if d := e.dec.Load(); d != nil {
		return d.msg, d.err
	}
	d := &decoded{}
	d.msg, d.err = decode()
	if !e.dec.CompareAndSwap(nil, d) {
		d = e.dec.Load()
	}
	return d.msg, d.err
}

// setMessage caches m as the decoded message of an entry not shared yet.
func (e *Entry) setMessage(m llm.Message) { e.dec.Store(&decoded{msg: m}) }

// facts records what was learnt about an entry's body when it was made.
type facts uint16

const (
	factRole      facts = 1 << iota // a message whose role was read: factSystem tells
	factSystem                      // with factRole: the role is "system"
	factCustom                      // customType is body[len(customTypePrefix):][:span]
	factLabel                       // body is {"targetId":"…"} (targetId span long, no escapes)
	factLabelText                   // with factLabel: …,"label":"…"} follows (no escapes)
	factName                        // body is {"name":"…"} (no escapes)
	factUser                        // with factRole: the role is "user"
	factOrigin                      // with factUser: the origin was read (origin.go); factJoins and factHost tell
	factJoins                       // with factOrigin: a steering or follow-up message (llm.Origin.JoinsRun)
	factHost                        // with factOrigin: a host message (llm.OriginHost)
	factChecked                     // the body was built from a scanned line (builder.fill): an object without reserved keys
	factTrim                        // the body is {…} with no whitespace inside its braces' edges: bodyInner is body[1:len-1]
	factClean                       // the body is wire-clean (jsonstr.WireClean): valid UTF-8 without U+2028/U+2029
	factPlainHead                   // the type, id, parent and timestamp are plainString (read from an ASCII line without escapes)
)

// learnBody sets factTrim and factClean from the body (the entries not
// read from a file; builder.fill knows both from the scanner). It must
// run before e is shared.
func (e *Entry) learnBody() {
	e.facts &^= factTrim | factClean
	body := e.Body()
	if n := len(body); n >= 2 && body[0] == '{' && body[n-1] == '}' && (n == 2 || !edgeSpace(body[1]) && !edgeSpace(body[n-2])) {
		e.facts |= factTrim
	}
	if jsonstr.WireClean(body) {
		e.facts |= factClean
	}
}

// edgeSpace reports a byte bytes.TrimSpace might trim at the edge of a
// body's members: ASCII space, or any byte of a multi-byte rune (some are
// Unicode spaces; a valid body's members never start or end with one).
func edgeSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c >= utf8.RuneSelf
}

// learn sets e.facts from e.Type and e.Body with the same fast reads that
// isSystemEntry and CustomType would do later; it must run before e is
// shared (entries are immutable afterwards).
func (e *Entry) learn() {
	body := e.Body()
	switch e.Type {
	case TypeMessage:
		if role, ok := prefixString(body, rolePrefix); ok {
			e.facts = factRole
			switch string(role) {
			case llm.RoleSystem:
				e.facts |= factSystem
			case llm.RoleUser:
				e.facts |= factUser | learnOrigin(body)
			}
		}
	case TypeCustom, TypeCustomMessage:
		if raw, ok := prefixString(body, customTypePrefix); ok && len(raw) <= 0xffff {
			e.facts, e.span = factCustom, uint16(len(raw))
		}
	case TypeLabel: // the shapes labelFields reads without a scan
		if raw, ok := prefixString(body, labelPrefix); ok && len(raw) <= 0xffff {
			rest := body[len(labelPrefix)+len(raw)+1:]
			if string(rest) == "}" {
				e.facts, e.span = factLabel, uint16(len(raw))
			} else if l, ok := prefixString(rest, labelSecond); ok && len(rest) == len(labelSecond)+len(l)+2 {
				e.facts, e.span = factLabel|factLabelText, uint16(len(raw))
			}
		}
	case TypeSessionInfo:
		if raw, ok := prefixString(body, namePrefix); ok && len(body) == len(namePrefix)+len(raw)+2 {
			e.facts = factName
		}
	}
}

// bodyString returns body[from:to] as a string sharing the body's bytes:
// sound because a body is never modified once its entry exists (see
// share.go); the string keeps the body alive.
func (e *Entry) bodyString(from, to int) string {
	if from == to {
		return ""
	}
	return alias.String(e.Body()[from:to])
}

// label returns the targetId and label of a label entry (ok false without
// a string targetId).
func (e *Entry) label() (target, label string, ok bool) {
	if e.facts&factLabel == 0 {
		return labelFields(e.Body())
	}
	end := len(labelPrefix) + int(e.span)
	target = e.bodyString(len(labelPrefix), end)
	if e.facts&factLabelText != 0 {
		label = e.bodyString(end+1+len(labelSecond), len(e.Body())-2)
	}
	return target, label, true
}

// sessionName returns the name of a session_info entry ("" if none).
func (e *Entry) sessionName() string {
	if e.facts&factName != 0 {
		return e.bodyString(len(namePrefix), len(e.Body())-2)
	}
	return sessionName(e.Body())
}

// ErrMalformedEntry is returned for a line or value that is not a valid entry.
var ErrMalformedEntry = errors.New("malformed entry")

// Reserved entry keys; they never appear in Body.
const (
	keyType      = "type"
	keyID        = "id"
	keyParentID  = "parentId"
	keyTimestamp = "timestamp"
)

// MarshalJSON writes the entry with type first and ids last.
func (e *Entry) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, len(e.Body())+96)), nil
}

// AppendJSON appends the JSON line of the entry (no newline) to dst:
// {"type":…,<body members>,"id":…,"parentId":…,"timestamp":…}. Strings are
// escaped like JSON.stringify (no HTML escaping).
func (e *Entry) AppendJSON(dst []byte) []byte {
	if e.plain() { // nothing to escape or trim: the stored bytes as they are
		dst = e.appendPlainHead(dst)
		dst = append(dst, e.plainInner()...)
		return e.appendPlainTail(dst)
	}
	inner := bodyInner(e.Body())
	dst = e.appendHead(dst, len(inner) > 0)
	dst = append(dst, inner...)
	return e.appendTail(dst)
}

// plain reports whether AppendJSON writes the entry without re-encoding
// anything: the body's members as stored (factTrim), and a type, id,
// parent and timestamp JSON writes as they are (plainString).
func (e *Entry) plain() bool {
	if e.facts&factTrim == 0 {
		return false
	}
	return e.facts&factPlainHead != 0 || plainString(e.Type) && plainString(e.ID) &&
		(e.ParentID == nil || plainString(*e.ParentID)) && plainString(e.Timestamp)
}

// wireReady reports whether AppendJSON's line goes on the wire as it is:
// plain, and its body wire-clean (the head and tail are ASCII).
func (e *Entry) wireReady() bool { return e.facts&factClean != 0 && e.plain() }

// plainString reports a string that appendJSONString writes as it is,
// between quotes, and that is wire-clean: printable ASCII but '"' and '\\'.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainInner is the body's members of a plain entry (AppendJSON's middle).
func (e *Entry) plainInner() []byte {
	body := e.Body()
	return body[1 : len(body)-1]
}

// appendPlainHead is appendHead for a plain entry.
func (e *Entry) appendPlainHead(dst []byte) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, e.Type...)
	if e.bodyLen > 2 {
		return append(dst, `",`...)
	}
	return append(dst, '"')
}

// appendPlainTail is appendTail for a plain entry.
func (e *Entry) appendPlainTail(dst []byte) []byte {
	dst = append(dst, `,"id":"`...)
	dst = append(dst, e.ID...)
	if e.ParentID == nil {
		dst = append(dst, `","parentId":null,"timestamp":"`...)
	} else {
		dst = append(dst, `","parentId":"`...)
		dst = append(dst, *e.ParentID...)
		dst = append(dst, `","timestamp":"`...)
	}
	dst = append(dst, e.Timestamp...)
	return append(dst, `"}`...)
}

// jsonLen returns the length of AppendJSON's output, exact unless the
// type, id, parent or timestamp needs escaping (then it is short).
func (e *Entry) jsonLen() int {
	n := len(`{"type":"",,"id":"","parentId":,"timestamp":""}`) + len(e.Type) + len(e.ID) + len(e.Timestamp) + e.bodyLen
	if e.ParentID == nil {
		return n + len("null")
	}
	return n + len(*e.ParentID) + 2
}

// appendHead appends the part of the line before the body members:
// {"type":…, and the comma when there are members.
func (e *Entry) appendHead(dst []byte, members bool) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, e.Type)
	if members {
		dst = append(dst, ',')
	}
	return dst
}

// appendTail appends the part of the line after the body members:
// ,"id":…,"parentId":…,"timestamp":…}.
func (e *Entry) appendTail(dst []byte) []byte {
	dst = append(dst, `,"id":`...)
	dst = appendJSONString(dst, e.ID)
	dst = append(dst, `,"parentId":`...)
	if e.ParentID == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONString(dst, *e.ParentID)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = appendJSONString(dst, e.Timestamp)
	return append(dst, '}')
}

// bodyInner returns the members of a body object without the braces and
// surrounding whitespace ("" for nil or {}).
func bodyInner(body []byte) []byte {
	body = bytes.TrimSpace(body)
	if len(body) < 2 {
		return nil
	}
	return bytes.TrimSpace(body[1 : len(body)-1])
}

// UnmarshalJSON reads an entry line. Members other than type, id, parentId
// and timestamp are kept in Body in their original order. A missing or
// non-string type or id is an error wrapping ErrMalformedEntry; a parentId
// that is not a string counts as null; a timestamp that is not a string is
// kept as its JSON text.
func (e *Entry) UnmarshalJSON(data []byte) (err error) {
	defer func() {
		if recover() != nil { // the fast path failed: encoding/json reads it (fallback.go)
			*e = Entry{}
			err = e.unmarshalStd(data)
		}
	}()
	s := jsonobj.Scanner{Nests: messageNests}
	switch s.Scan(data) {
	case jsonobj.Invalid:
		return fmt.Errorf("%w: invalid JSON", ErrMalformedEntry)
	case jsonobj.Object:
	default:
		return fmt.Errorf("%w: not an object", ErrMalformedEntry)
	}
	p := classify(data, s.Members(0))
	if p.typ == nil || p.id == nil || !p.typ.IsString(data) || !p.id.IsString(data) {
		return fmt.Errorf("%w: missing id or type", ErrMalformedEntry)
	}
	var b builder
	b.fill(e, data, &s, &p)
	return nil
}

// unmarshalStd is UnmarshalJSON with encoding/json alone.
func (e *Entry) unmarshalStd(data []byte) error {
	std, leaf, _, err := stdLine(data)
	if err != nil {
		return err
	}
	if leaf {
		return fmt.Errorf("%w: a leaf line is not an entry", ErrMalformedEntry)
	}
	e.Type, e.ID, e.ParentID, e.Timestamp = std.Type, std.ID, std.ParentID, std.Timestamp
	e.setBody(std.Body())
	e.learn()
	e.learnBody()
	return nil
}

// entryParts locates the reserved members of a scanned entry line.
type entryParts struct {
	typ, id, parent, ts *jsonobj.Member // last occurrence of each, nil if absent
	first, last, count  int             // body members: first and last index, number
}

func classify(text []byte, fields []jsonobj.Member) entryParts {
	p := entryParts{first: -1}
	for i := range fields {
		f := &fields[i]
		switch reservedKey(text, f) {
		case keyType:
			p.typ = f
		case keyID:
			p.id = f
		case keyParentID:
			p.parent = f
		case keyTimestamp:
			p.ts = f
		default:
			if p.first < 0 {
				p.first = i
			}
			p.last = i
			p.count++
		}
	}
	return p
}

// reservedKey returns the reserved key name of f, or "".
func reservedKey(text []byte, f *jsonobj.Member) string {
	raw := text[f.KeyStart+1 : f.KeyEnd-1]
	// Without escapes the raw bytes are the key, except that invalid
	// UTF-8 would decode to U+FFFD: never one of these ASCII keys, and
	// never equal to them raw either, so no validation is needed.
	if f.KeyEsc {
		for _, k := range [...]string{keyType, keyID, keyParentID, keyTimestamp} {
			if f.KeyIs(text, k) {
				return k
			}
		}
		return ""
	}
	switch string(raw) {
	case keyType:
		return keyType
	case keyID:
		return keyID
	case keyParentID:
		return keyParentID
	case keyTimestamp:
		return keyTimestamp
	}
	return ""
}

// builder turns scanned lines into entries. For bulk reads it carves
// entries, parent-id strings and bodies out of slabs, which keeps the
// number of heap objects per entry at about two; the zero value allocates
// each piece separately.
type builder struct {
	bulk    bool
	arena   []byte
	sarena  []byte // strings (str)
	slab    []Entry
	strs    []string
	facts   []MessageFacts
	scratch []byte
	sub     jsonobj.Scanner // a message's usage and cost (msgfacts.go)
}

const (
	arenaChunk = 1 << 20
	slabSize   = 512
)

func (b *builder) bytes(n int) []byte {
	if !b.bulk || n > arenaChunk/8 {
		return make([]byte, n)
	}
	if cap(b.arena)-len(b.arena) < n {
		// Chunks start small (small files stay cheap) and double up to
		// arenaChunk; a chunk is never smaller than the body it is made
		// for (issue 36: a 40 KiB entry overflowed the second, 32 KiB,
		// chunk; n is at most arenaChunk/8 here).
		b.arena = make([]byte, 0, max(min(max(2*cap(b.arena), 16<<10), arenaChunk), n))
	}
	l := len(b.arena)
	b.arena = b.arena[:l+n]
	return b.arena[l : l+n : l+n]
}

// str returns sc as a string. In bulk reads the strings are carved from
// an arena of their own (one heap object fewer per entry, and the ids stay
// packed together, as the tree's index reads them all); the arena's bytes
// are never written again once handed out.
func (b *builder) str(sc []byte) string {
	if !b.bulk || len(sc) == 0 || len(sc) > strChunk/8 {
		return string(sc)
	}
	if cap(b.sarena)-len(b.sarena) < len(sc) {
		b.sarena = make([]byte, 0, min(max(2*cap(b.sarena), 4<<10), strChunk))
	}
	l := len(b.sarena)
	b.sarena = append(b.sarena, sc...)
	return alias.String(b.sarena[l:])
}

const strChunk = 256 << 10

func (b *builder) entry() *Entry {
	if !b.bulk {
		return new(Entry)
	}
	if len(b.slab) == 0 {
		b.slab = make([]Entry, slabSize)
	}
	e := &b.slab[0]
	b.slab = b.slab[1:]
	return e
}

func (b *builder) strPtr(s string) *string {
	if !b.bulk {
		p := new(string)
		*p = s
		return p
	}
	if len(b.strs) == 0 {
		b.strs = make([]string, slabSize)
	}
	p := &b.strs[0]
	b.strs = b.strs[1:]
	*p = s
	return p
}

// fill sets e from a line sc has scanned whose type and id are strings.
// When the line had whitespace between tokens the body is rebuilt from
// its members and compacted.
func (b *builder) fill(e *Entry, text []byte, sc *jsonobj.Scanner, p *entryParts) {
	fields, compactBody := sc.Members(0), sc.Spaced
	e.Type = internType(text, p.typ)

	// id, parentId and timestamp share one string allocation when unescaped.
	plain := func(f *jsonobj.Member) bool {
		return f == nil || !f.IsString(text) || (!f.ValEsc && utf8.Valid(text[f.ValStart+1:f.ValEnd-1]))
	}
	if plain(p.id) && plain(p.parent) && plain(p.ts) {
		sc := b.scratch[:0]
		sc = append(sc, text[p.id.ValStart+1:p.id.ValEnd-1]...)
		nID := len(sc)
		hasParent := p.parent != nil && p.parent.IsString(text)
		if hasParent {
			sc = append(sc, text[p.parent.ValStart+1:p.parent.ValEnd-1]...)
		}
		nParent := len(sc)
		if p.ts != nil {
			if p.ts.IsString(text) {
				sc = append(sc, text[p.ts.ValStart+1:p.ts.ValEnd-1]...)
			} else {
				sc = append(sc, p.ts.Val(text)...)
			}
		}
		all := b.str(sc)
		b.scratch = sc
		e.ID = all[:nID]
		if hasParent {
			e.ParentID = b.strPtr(all[nID:nParent])
		}
		e.Timestamp = all[nParent:]
	} else {
		e.ID = p.id.Str(text)
		if p.parent != nil && p.parent.IsString(text) {
			e.ParentID = b.strPtr(p.parent.Str(text))
		}
		if p.ts != nil {
			if p.ts.IsString(text) {
				e.Timestamp = p.ts.Str(text)
			} else {
				e.Timestamp = string(p.ts.Val(text))
			}
		}
	}

	switch {
	case p.count == 0:
		e.setBody(emptyBody)
	case p.last-p.first+1 == p.count && !compactBody: // contiguous and compact: copy as is
		span := text[fields[p.first].KeyStart:fields[p.last].ValEnd]
		body := b.bytes(len(span) + 2)
		body[0] = '{'
		copy(body[1:], span)
		body[len(body)-1] = '}'
		e.setBody(body)
	default:
		n := 1
		for i := p.first; i <= p.last; i++ {
			if f := &fields[i]; reservedKey(text, f) == "" {
				n += f.KeyEnd - f.KeyStart + 1 + f.ValEnd - f.ValStart + 1
			}
		}
		body := b.bytes(n)[:0]
		body = append(body, '{')
		for i := p.first; i <= p.last; i++ {
			f := &fields[i]
			if reservedKey(text, f) != "" {
				continue
			}
			if len(body) > 1 {
				body = append(body, ',')
			}
			body = append(body, f.Key(text)...)
			body = append(body, ':')
			body = append(body, f.Val(text)...)
		}
		body = append(body, '}')
		if compactBody {
			var buf bytes.Buffer
			if json.Compact(&buf, body) == nil {
				body = buf.Bytes()
			}
		}
		e.setBody(body)
	}
	e.learn()
	e.facts |= factChecked | factTrim // fill writes no whitespace at the members' edges
	if !sc.NonASCII || jsonstr.WireClean(e.Body()) {
		e.facts |= factClean
	}
	// An ASCII line's strings without escapes hold no byte JSON escapes
	// (a raw control character is invalid JSON); a timestamp that is not
	// a string is kept as its text, which is checked.
	unescaped := func(f *jsonobj.Member) bool { return f == nil || !f.IsString(text) || !f.ValEsc }
	if !sc.NonASCII && !p.typ.ValEsc && !p.id.ValEsc && unescaped(p.parent) && unescaped(p.ts) &&
		(p.ts == nil || p.ts.IsString(text) || plainString(e.Timestamp)) {
		e.facts |= factPlainHead
	}
	if e.Type == TypeMessage {
		b.learnMessage(e, text, sc, p)
	}
}

var emptyBody = []byte("{}")

var knownTypes = [...]string{
	TypeMessage, TypeCompaction, TypeBranchSummary, TypeContextEdit, TypeModelChange,
	TypeThinkingLevelChange, TypeCustom, TypeCustomMessage, TypeLabel, TypeSessionInfo, TypeUsage,
}

// internType decodes the type value, reusing the constant for known types.
func internType(text []byte, f *jsonobj.Member) string {
	if !f.ValEsc {
		raw := text[f.ValStart+1 : f.ValEnd-1]
		for _, t := range knownTypes {
			if string(raw) == t {
				return t
			}
		}
	}
	return f.Str(text)
}

// RawEntry returns an entry of typ whose body is the JSON object body (nil
// means {}). Append rejects bodies that are not objects or that contain a
// reserved key (type, id, parentId, timestamp).
func RawEntry(typ string, body json.RawMessage) *Entry {
	if body == nil {
		body = json.RawMessage(emptyBody)
	}
	e := &Entry{Type: typ}
	e.setBody(body)
	e.learn()
	e.learnBody()
	return e
}

// WithBody returns a copy of e (same type, id, parent and timestamp)
// whose body is body: a shape of the entry for the wire (rpc's compact
// events). The copy has its own message cache and facts.
func (e *Entry) WithBody(body json.RawMessage) *Entry {
	c := &Entry{Type: e.Type, ID: e.ID, ParentID: e.ParentID, Timestamp: e.Timestamp}
	c.setBody(body)
	c.learn()
	c.learnBody()
	return c
}

// WithParent returns a copy of e (same type, id, timestamp and body) whose
// parent is parent. The copy has its own message cache.
func (e *Entry) WithParent(parent *string) *Entry {
	c := &Entry{Type: e.Type, ID: e.ID, ParentID: parent, Timestamp: e.Timestamp, bodyLen: e.bodyLen, facts: e.facts, span: e.span, msg: e.msg}
	if parent != nil && !plainString(*parent) {
		c.facts &^= factPlainHead
	}
	c.body.Store(e.body.Load())
	c.spilled.Store(e.spilled.Load()) // a moved body is not moved again (a fork's new file)
	return c
}

// Field returns the raw JSON of the body member key (nil if absent).
func (e *Entry) Field(key string) json.RawMessage { return jsonobj.Field(e.Body(), key) }

// validate checks that e can be written as a line that reads back as the
// same entry.
func (e *Entry) validate(s *jsonobj.Scanner) error {
	switch e.Type {
	case "", HeaderType, leafType:
		return fmt.Errorf("%w: type %q cannot be appended", ErrMalformedEntry, e.Type)
	}
	if e.ID == "" {
		return fmt.Errorf("%w: %s entry without id", ErrMalformedEntry, e.Type)
	}
	if e.Body() == nil || e.facts&factChecked != 0 { // read from a file: no need to scan it again (a fork)
		return nil
	}
	if s.Scan(e.Body()) != jsonobj.Object {
		return fmt.Errorf("%w: body of %s entry %s is not a JSON object", ErrMalformedEntry, e.Type, e.ID)
	}
	for i := range s.Members(0) {
		if k := reservedKey(e.Body(), &s.Members(0)[i]); k != "" {
			return fmt.Errorf("%w: body of %s entry %s has reserved key %q", ErrMalformedEntry, e.Type, e.ID, k)
		}
	}
	return nil
}

// newEntry builds an entry of typ whose body is the JSON of v.
func newEntry(typ string, v any) *Entry {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("store: encode %s entry: %v", typ, err))
	}
	e := &Entry{Type: typ}
	e.setBody(bytes.TrimRight(buf.Bytes(), "\n"))
	e.learn()
	e.learnBody()
	return e
}

// MessageEntry returns a message entry.
func MessageEntry(m llm.Message) *Entry {
	if strs, skel, ok := llm.BigStrings(m); ok {
		// A huge prompt or image: the body is encoded around placeholders
		// and the strings spliced in, one exact buffer instead of about
		// four.
		e := newEntry(TypeMessage, MessageBody{skel})
		if body, spans, ok := llm.SpliceStrings(e.Body(), strs); ok {
			e.setBody(body)
			e.learn()
			e.learnBody()
			e.setMessage(shareStrings(m, strs, body, spans)) // each string kept once (share.go)
			e.msg = FactsOf(m)
			return e
		}
	}
	e := newEntry(TypeMessage, MessageBody{m})
	e.setMessage(m)
	e.msg = FactsOf(m)
	return e
}

// Message decodes (once) the message of a message entry.
func (e *Entry) Message() (llm.Message, error) {
	if e.Type != TypeMessage {
		return nil, fmt.Errorf("entry %s is %s, not a message", e.ID, e.Type)
	}
	return e.cached(func() (llm.Message, error) {
		raw := jsonobj.Field(e.Body(), "message")
		if raw == nil {
			return nil, fmt.Errorf("%w: message entry %s has no message object", ErrMalformedEntry, e.ID)
		}
		m, err := llm.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		return shareDecoded(m, raw), nil
	})
}

// ModelChangeEntry records a model switch.
func ModelChangeEntry(provider, modelID, channel string) *Entry {
	return newEntry(TypeModelChange, ModelChangeBody{provider, modelID, channel})
}

// ThinkingLevelEntry records a thinking-level change.
func ThinkingLevelEntry(level string) *Entry {
	return newEntry(TypeThinkingLevelChange, ThinkingLevelBody{level})
}

// CustomEntry records extension state that is not part of the context.
func CustomEntry(customType string, data any) *Entry {
	return newEntry(TypeCustom, CustomBody{customType, data})
}

// CustomMessageEntry records an extension message that enters the context.
func CustomMessageEntry(m *llm.CustomMessage) *Entry {
	return newEntry(TypeCustomMessage, CustomMessageBody{m.CustomType, m.Content, m.Display, m.Details})
}

// SessionInfoEntry records the session name.
func SessionInfoEntry(name string) *Entry {
	return newEntry(TypeSessionInfo, SessionInfoBody{name})
}

// LabelEntry sets (or, with an empty label, clears) the label of an entry.
func LabelEntry(targetID, label string) *Entry {
	return newEntry(TypeLabel, LabelBody{targetID, label})
}

// ContextEditEntry replaces (or with nil removes) a message in the context.
func ContextEditEntry(targetID string, replacement *string, reason string) *Entry {
	return newEntry(TypeContextEdit, ContextEditBody{targetID, replacement, reason})
}

// CompactionEntry records a compaction.
func CompactionEntry(summary, firstKeptEntryID string, tokensBefore int, usage *llm.Usage) *Entry {
	return newEntry(TypeCompaction, CompactionBody{summary, firstKeptEntryID, tokensBefore, usage})
}

// BranchSummaryEntry records a summary of an abandoned branch.
func BranchSummaryEntry(fromID, summary string, usage *llm.Usage) *Entry {
	return newEntry(TypeBranchSummary, BranchSummaryBody{fromID, summary, usage})
}

// UsageEntry records an auxiliary request's usage (not in the context).
func UsageEntry(kind, provider, model string, usage llm.Usage) *Entry {
	return newEntry(TypeUsage, UsageBody{kind, provider, model, usage})
}

// Decode unmarshals the body into v.
func (e *Entry) Decode(v any) error { return json.Unmarshal(e.Body(), v) }

// CustomType returns the customType of a custom or custom_message entry.
func (e *Entry) CustomType() string {
	if e.Type != TypeCustom && e.Type != TypeCustomMessage {
		return ""
	}
	if e.facts&factCustom != 0 {
		return e.bodyString(len(customTypePrefix), len(customTypePrefix)+int(e.span)) // read by learn
	}
	if raw, ok := prefixString(e.Body(), customTypePrefix); ok { // how CustomEntry writes it
		return string(raw)
	}
	s, _ := jsonobj.StringField(e.Body(), "customType")
	return s
}

// IsCustomType reports whether e's customType is name. When the type was
// read with the entry, an other length answers without touching the body.
func (e *Entry) IsCustomType(name string) bool {
	if e.Type != TypeCustom && e.Type != TypeCustomMessage {
		return false
	}
	if e.facts&factCustom != 0 && int(e.span) != len(name) {
		return false
	}
	return e.CustomType() == name
}

var customTypePrefix = []byte(`{"customType":"`)

// appendJSONString appends s the way JSON.stringify writes it (session
// files keep U+2028/U+2029 raw, like the reference).
func appendJSONString(dst []byte, s string) []byte {
	return jsonstr.Append(dst, s, jsonstr.Stringify)
}

package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The fast path (scanner + builder) is hand-written; encoding/json is the
// reference it must agree with (differential_test.go). If it ever does
// not, a session must stay readable (issue 36): a line the scanner rejects
// but encoding/json accepts, or a line on which the fast path panics, is
// read again by stdLine, which uses encoding/json alone. The reader
// counts such lines (Snapshot.Fallback) so the opener can log them once.

// Fallback records the lines of a file that the fast parser failed on and
// the standard decoder read.
type Fallback struct {
	Line   int    // physical line number of the first one
	Reason string // what the fast path did on it
	Count  int    // how many lines
}

func (f *Fallback) String() string {
	return fmt.Sprintf("line %d: %s (%d line(s) read by the standard decoder)", f.Line, f.Reason, f.Count)
}

// member is one member of a line as encoding/json reads it.
type member struct {
	key string
	raw json.RawMessage // compact
}

// appendObject appends the compact object of members to b.
func appendObject(b []byte, members []member) []byte {
	b = append(b, '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.key)
		b = append(b, ':')
		b = append(b, m.raw...)
	}
	return append(b, '}')
}

// stdMembers decodes the top-level object text into its members, in
// order, duplicates kept. It fails when text is not one JSON object.
func stdMembers(text []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%w: not an object", ErrMalformedEntry)
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("%w: key is not a string", ErrMalformedEntry)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: key, raw: buf.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the object", ErrMalformedEntry)
	}
	return ms, nil
}

// stdLine is the standard decoder's reading of an entry or leaf line: leaf
// is set for a leaf line (then leafID is its id, nil for null), e for an
// entry. A malformed line is an error wrapping ErrMalformedEntry (the
// reason is reasonFor's).
func stdLine(text []byte) (e *Entry, leaf bool, leafID *string, err error) {
	ms, err := stdMembers(text)
	if err != nil {
		return nil, false, nil, err
	}
	var typ, id, parent, ts *member
	var body []member
	for i := range ms {
		switch m := &ms[i]; m.key {
		case keyType:
			typ = m
		case keyID:
			id = m
		case keyParentID:
			parent = m
		case keyTimestamp:
			ts = m
		default:
			body = append(body, *m)
		}
	}
	str := func(m *member) (string, bool) {
		if m == nil || len(m.raw) == 0 || m.raw[0] != '"' {
			return "", false
		}
		var s string
		return s, json.Unmarshal(m.raw, &s) == nil
	}
	t, ok := str(typ)
	if ok && t == leafType {
		if id != nil && string(id.raw) == "null" {
			return nil, true, nil, nil
		}
		if s, ok := str(id); ok {
			return nil, true, &s, nil
		}
		return nil, true, nil, errMalformedLeaf
	}
	idStr, idOK := str(id)
	if !ok || !idOK {
		return nil, false, nil, fmt.Errorf("%w: missing id or type", ErrMalformedEntry)
	}
	if t == HeaderType {
		return nil, false, nil, errDuplicateHeader
	}
	e = &Entry{Type: t, ID: idStr}
	if s, ok := str(parent); ok {
		e.ParentID = &s
	}
	if ts != nil {
		if s, ok := str(ts); ok {
			e.Timestamp = s
		} else {
			e.Timestamp = string(ts.raw)
		}
	}
	e.setBody(appendObject(nil, body))
	e.learn()
	e.learnBody()
	return e, false, nil, nil
}

var (
	errMalformedLeaf   = errors.New(ReasonMalformedLeaf)
	errDuplicateHeader = errors.New(ReasonDuplicateHeader)
)

// stdReason maps a stdLine error to the corruption reason the fast path
// would give.
func stdReason(err error) string {
	switch {
	case errors.Is(err, errMalformedLeaf):
		return ReasonMalformedLeaf
	case errors.Is(err, errDuplicateHeader):
		return ReasonDuplicateHeader
	case errors.Is(err, ErrMalformedEntry):
		return ReasonMalformedEntry
	}
	return ReasonInvalidJSON
}

package acp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/jsonobj"
)

// idMap makes request ids round-trip exactly as the client wrote them.
// jsonrpc2.ID holds a number as a uint64 decoded through Int64, so -1 was
// answered as 18446744073709551615, a number past int64 or with a fraction
// or an exponent was refused, and id null was taken for a notification;
// a string is re-encoded by encoding/json (escapes can change, invalid
// UTF-8 becomes U+FFFD). JSON-RPC 2.0 allows any number, any string and
// null, and the response must carry the same id.
//
// An id that jsonrpc2 already keeps exactly (a plain non-negative integer
// up to 2^63-1, a string of valid UTF-8 without escapes) passes as is.
// Any other number, string or null is replaced in the request line by an
// internal id, a negative integer -n (jsonrpc2 holds 2^64-n): the client's
// own negative ids are all replaced, so these cannot collide with one of
// the client's. The response to the request gets the id back as sent,
// byte for byte (except for U+2028 and U+2029, which every output line
// escapes), and the entry is dropped. Ids of another type (objects,
// arrays, booleans) are left to jsonrpc2, which refuses the request.
//
// Safe for concurrent use: requests are read on the connection's read
// goroutine, responses written from any goroutine.
type idMap struct {
	mu    sync.Mutex
	next  uint64
	sent  map[uint64][]byte // internal id (as jsonrpc2 holds it) → the id as sent
	byRaw map[string]uint64 // the id as sent → its latest internal id ($/cancel_request)
}

// exactID reports whether jsonrpc2 round-trips id unchanged.
func exactID(id []byte) bool {
	switch {
	case len(id) == 0:
		return false
	case id[0] == '"':
		body := id[1 : len(id)-1]
		return bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body)
	case id[0] >= '0' && id[0] <= '9':
		if id[0] == '0' && len(id) > 1 {
			return false
		}
		for _, c := range id {
			if c < '0' || c > '9' {
				return false
			}
		}
		_, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil
	}
	return false
}

// mappable reports whether id is a JSON-RPC id (number, string or null).
func mappable(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9') || string(id) == "null"
}

// in rewrites the id of the request line when jsonrpc2 would not keep it
// exactly. It returns the line to decode (line itself when nothing was
// replaced) and the internal id (0: none), to drop with forget when the
// line is refused after all.
//
// members are line's top-level members when the caller's scan recorded
// them (nil: line is walked here).
func (m *idMap) in(line []byte, members []jsonobj.Member) ([]byte, uint64) {
	var id []byte
	method := false
	if members == nil {
		jsonobj.Members(line, func(k string, v []byte) {
			switch k {
			case "id":
				id = v // the last one wins, as in jsonrpc2's decoding
			case "method":
				method = true
			}
		})
	}
	for i := range members {
		switch mb := &members[i]; {
		case mb.KeyIs(line, "id"):
			id = mb.Val(line) // the last one wins, as in jsonrpc2's decoding
		case mb.KeyIs(line, "method"):
			method = true
		}
	}
	if !method || id == nil || exactID(id) || !mappable(id) {
		return line, 0
	}
	m.mu.Lock()
	if m.sent == nil {
		m.sent, m.byRaw = map[uint64][]byte{}, map[string]uint64{}
	}
	m.next++
	n := m.next
	internal := -n // 2^64-n: how jsonrpc2 holds the id -n
	m.sent[internal] = bytes.Clone(id)
	m.byRaw[string(id)] = internal
	m.mu.Unlock()
	at := cap(line) - cap(id) // id is line[at:at+len(id)]
	repl := strconv.AppendInt(nil, -int64(n), 10)
	out := make([]byte, 0, len(line)-len(id)+len(repl))
	out = append(out, line[:at]...)
	out = append(out, repl...)
	out = append(out, line[at+len(id):]...)
	return out, internal
}

// forget drops an internal id whose request was refused.
func (m *idMap) forget(internal uint64) {
	if internal == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if raw, ok := m.sent[internal]; ok {
		delete(m.sent, internal)
		if m.byRaw[string(raw)] == internal {
			delete(m.byRaw, string(raw))
		}
	}
}

// out gives a response's id back as the client sent it (and drops the
// entry); any other id is returned unchanged.
func (m *idMap) out(id json.RawMessage) json.RawMessage {
	if len(id) == 0 || id[0] < '0' || id[0] > '9' {
		return id
	}
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil || n <= 1<<63 {
		return id // a client's own id (internal ids are above 2^63)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	raw, ok := m.sent[n]
	if !ok {
		return id
	}
	delete(m.sent, n)
	if m.byRaw[string(raw)] == n {
		delete(m.byRaw, string(raw))
	}
	return raw
}

// lookup returns the id jsonrpc2 holds for a request id as the client
// writes it (in $/cancel_request): its internal id while the request is
// pending, else the id as jsonrpc2 decodes it.
func (m *idMap) lookup(raw json.RawMessage) (jsonrpc2.ID, bool) {
	raw = bytes.TrimSpace(raw)
	m.mu.Lock()
	internal, ok := m.byRaw[string(raw)]
	m.mu.Unlock()
	if ok {
		return jsonrpc2.ID{Num: internal}, true
	}
	if !exactID(raw) {
		return jsonrpc2.ID{}, false
	}
	var id jsonrpc2.ID
	if err := json.Unmarshal(raw, &id); err != nil {
		return jsonrpc2.ID{}, false
	}
	return id, true
}

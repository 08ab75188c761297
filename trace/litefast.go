package trace

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// readLite reads the message of e into m without encoding/json: the
// members of the message object are visited in place (jsonobj), and only
// the ones liteMessage has are read. It answers only when every one of
// them has the plain form the decoder would accept the same way (an
// integer, a string without escapes, an object of such); anything else
// reports false and the caller decodes. Keys match as encoding/json
// matches them (case-insensitively, the last one wins). blocks receives
// the content blocks' type and id for an assistant message.
func readLite(e *store.Entry, m *liteMessage, blocks *[]liteBlock) bool {
	var msg []byte
	good := true
	ok := jsonobj.RawMembers(e.Body(), func(key, val []byte) {
		switch {
		case unreadable(key):
			good = false
		case keyIs(key, "message"):
			msg = val
		}
	})
	if !ok || !good || msg == nil || msg[0] != '{' {
		return false
	}
	var content []byte
	ok = jsonobj.RawMembers(msg, func(key, val []byte) {
		if !good {
			return
		}
		switch {
		case unreadable(key):
			good = false
		case keyIs(key, "role"):
			m.Role, good = plainRole(val)
		case keyIs(key, "timestamp"):
			m.Timestamp, good = plainInt(val)
		case keyIs(key, "toolCallId"):
			m.ToolCallID, good = plainString(val)
		case keyIs(key, "content"):
			content = val
		case keyIs(key, "usage"):
			good = readUsage(val, m)
		}
	})
	if !ok || !good {
		return false
	}
	m.Content = content
	*blocks = (*blocks)[:0]
	if m.Role != "assistant" || content == nil || string(content) == "null" {
		return true
	}
	if content[0] != '[' {
		return false
	}
	ok = jsonobj.Elements(content, func(val []byte) {
		if !good {
			return
		}
		if val[0] != '{' {
			good = false
			return
		}
		var b liteBlock
		jsonobj.RawMembers(val, func(key, v []byte) {
			switch {
			case !good:
			case unreadable(key):
				good = false
			case keyIs(key, "type"):
				b.Type, good = plainString(v)
			case keyIs(key, "id"):
				b.ID, good = plainString(v)
			}
		})
		*blocks = append(*blocks, b)
	})
	return ok && good
}

// readUsage reads the usage object val into m.Usage.
func readUsage(val []byte, m *liteMessage) bool {
	if string(val) == "null" {
		return true
	}
	if val[0] != '{' {
		return false
	}
	good := true
	u := &m.Usage
	ok := jsonobj.RawMembers(val, func(key, v []byte) {
		var n int64
		switch {
		case !good:
			return
		case unreadable(key):
			good = false
		case keyIs(key, "input"):
			n, good = plainInt(v)
			u.Input = int(n)
		case keyIs(key, "output"):
			n, good = plainInt(v)
			u.Output = int(n)
		case keyIs(key, "cacheRead"):
			n, good = plainInt(v)
			u.CacheRead = int(n)
		case keyIs(key, "cacheWrite"):
			n, good = plainInt(v)
			u.CacheWrite = int(n)
		case keyIs(key, "totalTokens"):
			_, good = plainInt(v)
		case keyIs(key, "cost"):
			good = readCost(v, m)
		}
	})
	return ok && good
}

// readCost reads the total of a cost object (every member must be a
// number, as the decoder requires of llm.Cost's fields).
func readCost(v []byte, m *liteMessage) bool {
	if string(v) == "null" {
		return true // the decoder leaves the pointer as it was
	}
	if v[0] != '{' {
		return false
	}
	good, hasTotal := true, false
	var total float64
	ok := jsonobj.RawMembers(v, func(key, n []byte) {
		if !good {
			return
		}
		if unreadable(key) {
			good = false
			return
		}
		for _, k := range [...]string{"input", "output", "cacheRead", "cacheWrite", "total"} {
			if keyIs(key, k) {
				f, err := strconv.ParseFloat(string(n), 64)
				if good = err == nil && isNumber(n); good && k == "total" {
					total, hasTotal = f, true
				}
				return
			}
		}
	})
	if !ok || !good {
		return false
	}
	if hasTotal { // a repeated cost object changes only the members it has
		m.cost.Total = total
	}
	m.Usage.Cost = &m.cost
	return true
}

// keyIs reports whether the raw JSON key names name as encoding/json
// matches a field (case-insensitively). An escaped key is not read:
// it marks the object unreadable (see unreadable).
func keyIs(key []byte, name string) bool {
	k := key[1 : len(key)-1]
	return len(k) == len(name) && bytes.EqualFold(k, []byte(name))
}

// unreadable reports a key with an escape (or a byte outside ASCII, which
// encoding/json may fold to an ASCII name: the Kelvin sign is a k): the
// readers leave such an object to the decoder.
func unreadable(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// plainRole is plainString for a role, without a copy for the roles the
// tally looks at.
func plainRole(v []byte) (string, bool) {
	if len(v) >= 2 && v[0] == '"' {
		switch string(v[1 : len(v)-1]) {
		case llm.RoleUser:
			return llm.RoleUser, true
		case llm.RoleAssistant:
			return llm.RoleAssistant, true
		case llm.RoleToolResult:
			return llm.RoleToolResult, true
		}
	}
	return plainString(v)
}

// plainString returns the text of a JSON string without escapes.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	for _, c := range v {
		if c >= utf8.RuneSelf { // the decoder would replace invalid UTF-8
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

// plainInt returns a JSON number that is an integer in range (what the
// decoder puts in an int).
func plainInt(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil && (v[0] != '+') && !(len(v) > 1 && v[0] == '0') && !(len(v) > 2 && v[0] == '-' && v[1] == '0')
}

// isNumber reports whether v is a JSON number (ParseFloat also takes
// forms JSON does not: "Inf", hex, a leading '+', underscores…).
func isNumber(v []byte) bool {
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return false
		}
	}
	return len(v) > 0 && v[0] != '+'
}

// readStep reads the data of an ama.trace entry into d without
// encoding/json, on the same terms as readLite: it answers only when
// every member stepData has is in a plain form the decoder reads the
// same way (numbers: any JSON number for the float64 members, integers
// for attempt and outputTokens; tps a number or null), else false and
// the caller decodes.
func readStep(e *store.Entry, d *stepData) bool {
	var data []byte
	good := true
	ok := jsonobj.RawMembers(e.Body(), func(key, val []byte) {
		switch {
		case unreadable(key):
			good = false
		case keyIs(key, "data"):
			data = val
		}
	})
	if !ok || !good || data == nil || data[0] != '{' {
		return ok && good && data == nil // no data: the zero stepData, as the decoder gives
	}
	num := func(v []byte, f *float64) {
		x, err := strconv.ParseFloat(string(v), 64)
		if good = err == nil && isNumber(v); good {
			*f = x
		}
	}
	integer := func(v []byte, n *int) {
		x, ok := plainInt(v)
		if good = ok; good {
			*n = int(x)
		}
	}
	ok = jsonobj.RawMembers(data, func(key, v []byte) {
		switch {
		case !good:
		case unreadable(key):
			good = false
		case keyIs(key, "kind"):
			d.Kind, good = plainString(v)
		case keyIs(key, "attempt"):
			integer(v, &d.Attempt)
		case keyIs(key, "assistantEntryId"):
			d.AssistantEntryID, good = plainString(v)
		case keyIs(key, "requestAt"):
			num(v, &d.RequestAt)
		case keyIs(key, "firstTokenAt"):
			num(v, &d.FirstTokenAt)
		case keyIs(key, "doneAt"):
			num(v, &d.DoneAt)
		case keyIs(key, "outputTokens"):
			integer(v, &d.OutputTokens)
		case keyIs(key, "tps"):
			if string(v) == "null" {
				d.TPS = nil
				return
			}
			var f float64
			if num(v, &f); good {
				d.TPS = &f
			}
		case keyIs(key, "status"):
			d.Status, good = plainString(v)
		}
	})
	return ok && good
}

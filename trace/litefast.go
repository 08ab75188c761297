package trace

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/jsonobj"
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
	ok := jsonobj.Members(e.Body(), func(key string, val []byte) {
		if strings.EqualFold(key, "message") {
			msg = val
		}
	})
	if !ok || msg == nil || msg[0] != '{' {
		return false
	}
	good := true
	var content []byte
	ok = jsonobj.Members(msg, func(key string, val []byte) {
		if !good {
			return
		}
		switch {
		case strings.EqualFold(key, "role"):
			m.Role, good = plainString(val)
		case strings.EqualFold(key, "timestamp"):
			m.Timestamp, good = plainInt(val)
		case strings.EqualFold(key, "toolCallId"):
			m.ToolCallID, good = plainString(val)
		case strings.EqualFold(key, "content"):
			content = val
		case strings.EqualFold(key, "usage"):
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
		jsonobj.Members(val, func(key string, v []byte) {
			switch {
			case !good:
			case strings.EqualFold(key, "type"):
				b.Type, good = plainString(v)
			case strings.EqualFold(key, "id"):
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
	ok := jsonobj.Members(val, func(key string, v []byte) {
		var n int64
		switch {
		case !good:
			return
		case strings.EqualFold(key, "input"):
			n, good = plainInt(v)
			u.Input = int(n)
		case strings.EqualFold(key, "output"):
			n, good = plainInt(v)
			u.Output = int(n)
		case strings.EqualFold(key, "cacheRead"):
			n, good = plainInt(v)
			u.CacheRead = int(n)
		case strings.EqualFold(key, "cacheWrite"):
			n, good = plainInt(v)
			u.CacheWrite = int(n)
		case strings.EqualFold(key, "totalTokens"):
			_, good = plainInt(v)
		case strings.EqualFold(key, "cost"):
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
	ok := jsonobj.Members(v, func(key string, n []byte) {
		if !good {
			return
		}
		for _, k := range [...]string{"input", "output", "cacheRead", "cacheWrite", "total"} {
			if strings.EqualFold(key, k) {
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
	ok := jsonobj.Members(e.Body(), func(key string, val []byte) {
		if strings.EqualFold(key, "data") {
			data = val
		}
	})
	if !ok || data == nil || data[0] != '{' {
		return ok && data == nil // no data: the zero stepData, as the decoder gives
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
	ok = jsonobj.Members(data, func(key string, v []byte) {
		switch {
		case !good:
		case strings.EqualFold(key, "kind"):
			d.Kind, good = plainString(v)
		case strings.EqualFold(key, "attempt"):
			integer(v, &d.Attempt)
		case strings.EqualFold(key, "assistantEntryId"):
			d.AssistantEntryID, good = plainString(v)
		case strings.EqualFold(key, "requestAt"):
			num(v, &d.RequestAt)
		case strings.EqualFold(key, "firstTokenAt"):
			num(v, &d.FirstTokenAt)
		case strings.EqualFold(key, "doneAt"):
			num(v, &d.DoneAt)
		case strings.EqualFold(key, "outputTokens"):
			integer(v, &d.OutputTokens)
		case strings.EqualFold(key, "tps"):
			if string(v) == "null" {
				d.TPS = nil
				return
			}
			var f float64
			if num(v, &f); good {
				d.TPS = &f
			}
		case strings.EqualFold(key, "status"):
			d.Status, good = plainString(v)
		}
	})
	return ok && good
}

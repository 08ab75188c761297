package trace

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/store"
)

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
// encoding/json: it answers only when every member stepData has is in a
// plain form the decoder reads the same way (keys without escapes or
// bytes outside ASCII; strings without escapes; numbers: any JSON number
// for the float64 members, integers for attempt and outputTokens; tps a
// number or null; permissions kept raw), else false and the caller
// decodes. The record as the
// session writes it is read in one pass (readStepAsWritten).
func readStep(e *store.Entry, d *stepData) bool {
	if readStepAsWritten(e.Body(), d) {
		return true
	}
	*d = stepData{}
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
		case keyIs(key, "permissions"):
			d.Permissions = v
		}
	})
	return ok && good
}

// stepPrefix is how store.CustomEntry starts an ama.trace record.
var stepPrefix = []byte(`{"customType":"` + CustomType + `","data":{`)

// stepKeys are the members of a record as the session writes them
// (session/reply.go traceStep), in order; each may be absent.
var stepKeys = [...]string{"kind", "attempt", "assistantEntryId", "requestAt", "firstTokenAt", "doneAt", "outputTokens", "status", "permissionsDropped", "permissions"}

// readStepAsWritten reads a record of exactly the shape the session
// writes: the members of stepKeys in that order (so none twice), strings
// of ASCII without escapes, non-negative integers of at most 15 digits
// (exact as float64), no whitespace. Anything else reports false.
func readStepAsWritten(body []byte, d *stepData) bool {
	if !bytes.HasPrefix(body, stepPrefix) {
		return false
	}
	i, next := len(stepPrefix), 0
	if i < len(body) && body[i] == '}' {
		return len(body) == i+2 && body[i+1] == '}'
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return false
		}
		k := next
		for k < len(stepKeys) && !hasKey(body[i+1:], stepKeys[k]) {
			k++
		}
		if k == len(stepKeys) {
			return false
		}
		next = k + 1
		i += len(stepKeys[k]) + 3 // "key":
		var end int
		switch k {
		case 9: // the decision records: the last member, an array
			if i >= len(body)-2 {
				return false
			}
			v := body[i : len(body)-2]
			if v[0] != '[' || !bytes.HasSuffix(body, []byte("}}")) || !json.Valid(v) {
				return false
			}
			d.Permissions = v
			return true
		case 0, 2, 7: // strings
			if i >= len(body) || body[i] != '"' {
				return false
			}
			end = i + 1
			for end < len(body) && body[end] != '"' {
				if c := body[end]; c == '\\' || c >= utf8.RuneSelf || c < 0x20 {
					return false
				}
				end++
			}
			if end >= len(body) {
				return false
			}
			switch v := body[i+1 : end]; k {
			case 0:
				d.Kind = internStep(v)
			case 2:
				// The entry's body never changes (store.Entry): the id
				// is read in place, not copied.
				d.AssistantEntryID = alias.String(v)
			default:
				d.Status = internStep(v)
			}
			end++
		default: // integers
			n := 0
			end = i
			for end < len(body) && body[end] >= '0' && body[end] <= '9' {
				n = n*10 + int(body[end]-'0')
				end++
			}
			if end == i || end-i > 15 || end-i > 1 && body[i] == '0' {
				return false
			}
			switch k {
			case 1:
				d.Attempt = n
			case 3:
				d.RequestAt = float64(n)
			case 4:
				d.FirstTokenAt = float64(n)
			case 5:
				d.DoneAt = float64(n)
			case 6:
				d.OutputTokens = n
			}
		}
		i = end
		if i >= len(body) {
			return false
		}
		switch body[i] {
		case ',':
			i++
		case '}':
			return len(body) == i+2 && body[i+1] == '}'
		default:
			return false
		}
	}
}

// hasKey reports whether b starts with key, its closing quote and a colon.
func hasKey(b []byte, key string) bool {
	return len(b) > len(key)+1 && string(b[:len(key)]) == key && b[len(key)] == '"' && b[len(key)+1] == ':'
}

// internStep returns the string of a record's kind or status, without a
// copy for the values the session writes.
func internStep(v []byte) string {
	switch string(v) {
	case "step":
		return "step"
	case StatusOK:
		return StatusOK
	case StatusError:
		return StatusError
	case StatusAborted:
		return StatusAborted
	}
	return string(v)
}

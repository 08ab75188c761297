package transcript

import "bytes"

// Keep selects the lines of a transcript that a golden holds.
type Keep struct {
	// From starts at the response with this id (inclusive).
	From string `json:"from,omitempty"`
	// Drop removes events of these types.
	Drop []string `json:"drop,omitempty"`
	// Only keeps just events of these types (plus selected responses).
	Only []string `json:"only,omitempty"`
	// Responses keeps only responses with these ids (nil: all).
	Responses []string `json:"responses,omitempty"`
	// DropResponses removes responses with these ids.
	DropResponses []string `json:"dropResponses,omitempty"`
	// DropRoles removes message_start/message_end of these roles.
	DropRoles []string `json:"dropRoles,omitempty"`
	// Containing keeps events of a type only when the line contains the
	// string (the notification's message_end).
	Containing map[string]string `json:"containing,omitempty"`
}

// Select applies the filter to raw output lines.
func (k Keep) Select(lines [][]byte) [][]byte {
	var out [][]byte
	started := k.From == ""
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, l := range lines {
		v, err := Parse(l)
		if err != nil {
			out = append(out, l)
			continue
		}
		o, ok := v.(*Object)
		if !ok {
			out = append(out, l)
			continue
		}
		typ := o.String("type")
		if !started {
			if typ == "response" && o.String("id") == k.From {
				started = true
			} else {
				continue
			}
		}
		if typ == "response" {
			if (k.Responses != nil && !in(k.Responses, o.String("id"))) || in(k.DropResponses, o.String("id")) {
				continue
			}
			out = append(out, l)
			continue
		}
		if in(k.Drop, typ) || (k.Only != nil && !in(k.Only, typ)) {
			continue
		}
		if sub, ok := k.Containing[typ]; ok && !bytes.Contains(l, []byte(sub)) {
			continue
		}
		if (typ == "message_start" || typ == "message_end") && len(k.DropRoles) > 0 {
			if m, ok := o.Values["message"].(*Object); ok && in(k.DropRoles, m.String("role")) {
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

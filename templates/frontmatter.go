package templates

import (
	"encoding/json"
	"strconv"
	"strings"
)

// normalize removes a leading byte order mark and turns CRLF into LF.
func normalize(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// SplitFrontMatter separates a normalized file into its front matter
// lines and its body. Front matter exists only when the first line is
// "---" (spaces around allowed) and a later line is "---" or "...";
// otherwise the whole text is the body.
func SplitFrontMatter(text string) (front []string, body string, ok bool) {
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimSpace(first) != "---" {
		return nil, text, false
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); t == "---" || t == "..." {
			return lines[:i], strings.Join(lines[i+1:], "\n"), true
		}
	}
	return nil, text, false
}

// Strings parses the YAML subset of a front matter and returns its keys
// whose value is a string (bare, 'single' where two quotes stand for one, or "double"
// with JSON escapes). Booleans, numbers, null, arrays (inline or block)
// are values of other types and are left out, as are keys whose value is
// an error (nested maps, block scalars, inline maps, bad quoting): the
// template ignores them. Hand-written: a full YAML library would accept
// far more than the format (anchors, tags, nested maps) and each key here
// needs only its string.
func Strings(front []string) map[string]string {
	out := map[string]string{}
	last := ""
	for _, line := range front {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(t, "- ") || t == "-" {
			// A block array item or a nested map under the previous key:
			// that key is not a string.
			delete(out, last)
			continue
		}
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		key := strings.TrimSpace(k)
		if key == "" {
			continue
		}
		last = key
		delete(out, key)
		if s, ok := scalarString(strings.TrimSpace(v)); ok {
			out[key] = s
		}
	}
	return out
}

// scalarString parses one value; ok is false when it is not a string.
func scalarString(v string) (string, bool) {
	if v == "" {
		return "", false // null, or the head of a block array / map
	}
	switch v[0] {
	case '"':
		end := closingDouble(v)
		if end < 0 || !onlyComment(v[end+1:]) {
			return "", false
		}
		var s string
		if err := json.Unmarshal([]byte(v[:end+1]), &s); err != nil {
			return "", false
		}
		return s, true
	case '\'':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			if v[i] != '\'' {
				b.WriteByte(v[i])
				continue
			}
			if i+1 < len(v) && v[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			if !onlyComment(v[i+1:]) {
				return "", false
			}
			return b.String(), true
		}
		return "", false
	case '[', '{', '|', '>', '&', '*', '!':
		return "", false
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	switch v {
	case "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE":
		return "", false
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return "", false
	}
	return v, true
}

// closingDouble is the index of the quote closing the double-quoted
// string that starts v, or -1.
func closingDouble(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func onlyComment(rest string) bool {
	rest = strings.TrimSpace(rest)
	return rest == "" || strings.HasPrefix(rest, "#")
}

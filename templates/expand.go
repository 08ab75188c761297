package templates

import (
	"strconv"
	"strings"
)

// Match recognizes a template invocation in a prompt: after trimming,
// "/" + a name ([A-Za-z0-9][A-Za-z0-9_-]*) + the end, or + spaces/tabs +
// the argument text (which may hold newlines). "/fix\nmore" is not one.
func Match(prompt string) (name, args string, ok bool) {
	t := strings.TrimSpace(prompt)
	if len(t) < 2 || t[0] != '/' || !alnum(t[1]) {
		return "", "", false
	}
	i := 2
	for i < len(t) && (alnum(t[i]) || t[i] == '_' || t[i] == '-') {
		i++
	}
	if i == len(t) {
		return t[1:], "", true
	}
	if t[i] != ' ' && t[i] != '\t' {
		return "", "", false
	}
	return t[1:i], strings.TrimLeft(t[i:], " \t"), true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// SplitArgs splits argument text the way a shell would, without
// expansions: whitespace separates; '…' is literal; inside "…" only \" and
// \\ are escapes; outside quotes a backslash takes the next character
// literally; quotes join adjacent text; an empty pair of quotes is an empty argument. An
// unterminated quote runs to the end.
func SplitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in := false // inside an argument (an empty quoted one counts)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case space(c):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\':
			in = true
			if i+1 < len(s) {
				i++
			}
			cur.WriteByte(s[i])
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Expand substitutes the placeholders of body (scanned once, left to
// right; substituted text is not rescanned):
//
//	\$                  a literal $
//	$N ${N}             argument N (1-based; missing or $0: empty)
//	${N:-default}       argument N, or default when missing or empty
//	$@ $ARGUMENTS ${@}  all arguments joined by one space
//	${@:-default}       all arguments, or default when there are none
//	${@:N} ${@:N:L}     arguments from N (L of them)
//
// A body with no placeholder gets the arguments appended after a blank
// line (its trailing white space removed); without arguments it is
// returned unchanged.
func Expand(body string, args []string) string {
	var b strings.Builder
	used := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) && body[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if c != '$' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		rest := body[i+1:]
		switch {
		case isDigit(rest[0]):
			n := 1
			for n < len(rest) && isDigit(rest[n]) {
				n++
			}
			b.WriteString(arg(args, rest[:n]))
			i += n
			used = true
		case rest[0] == '@':
			b.WriteString(strings.Join(args, " "))
			i++
			used = true
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(strings.Join(args, " "))
			i += len("ARGUMENTS")
			used = true
		case rest[0] == '{':
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			v, ok := braced(rest[1:end], args)
			if !ok {
				b.WriteByte(c)
				continue
			}
			b.WriteString(v)
			i += end + 1
			used = true
		default:
			b.WriteByte(c)
		}
	}
	if !used && len(args) > 0 {
		return strings.TrimRight(body, " \t\r\n\v\f") + "\n\n" + strings.Join(args, " ")
	}
	if !used {
		return body
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// arg is argument n (decimal, 1-based) or "".
func arg(args []string, n string) string {
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 || k > len(args) {
		return ""
	}
	return args[k-1]
}

// braced expands the inside of ${…}; ok is false for anything that is
// not a placeholder (kept literally).
func braced(in string, args []string) (string, bool) {
	key, mod, hasMod := strings.Cut(in, ":")
	switch {
	case digits(key):
		v := arg(args, key)
		if hasMod && strings.HasPrefix(mod, "-") && v == "" {
			return mod[1:], true
		}
		return v, true // a ${N:M} modifier is ignored
	case key == "@" && !hasMod:
		return strings.Join(args, " "), true
	case key == "@" && strings.HasPrefix(mod, "-"):
		if len(args) == 0 {
			return mod[1:], true
		}
		return strings.Join(args, " "), true
	case key == "@":
		from, length, hasLen := strings.Cut(mod, ":")
		if !digits(from) || hasLen && !digits(length) {
			return "", false
		}
		start, err := strconv.Atoi(from)
		if err != nil || start > len(args) { // out of range, or too long to parse
			start = len(args) + 1
		}
		start = max(start, 1) - 1
		end := len(args)
		if hasLen {
			if l, err := strconv.Atoi(length); err == nil && l < end-start {
				end = start + l
			}
		}
		return strings.Join(args[start:end], " "), true
	}
	return "", false
}

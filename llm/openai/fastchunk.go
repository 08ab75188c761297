package openai

import (
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// parseFast decodes one event's JSON into c when it has the common chunk
// shape, the way encoding/json would decode it into a reset chunk; it
// reports false, leaving c in an undefined state, for anything it does not
// handle, and the caller then decodes the event with encoding/json.
//
// It is written here, rather than taken from a library, because a
// general decoder is exactly the cost it removes (reflection and a
// separate validation scan per chunk, about half the CPU of a long
// reply) and because its contract is narrower than a decoder's: agree
// with encoding/json or refuse. Handled: an object with id, choices
// (objects with index, delta, finish_reason), usage (with the cache
// fields of chunkUsage) and any other members, which are validated and
// skipped; delta with content, reasoning_content, reasoning, refusal and
// tool_calls (index, id, function.name, function.arguments); string
// fields may be null, contain any escape, surrogate pairs and invalid
// UTF-8 (coerced to U+FFFD as encoding/json does). Refused (slow path):
// an "error" member, duplicate known members, member names that are
// escaped, non-ASCII or a case variant of a known name (encoding/json
// matches names case-insensitively), known members of another JSON type
// than expected, non-integer or long numbers in integer fields, null array
// elements, nesting deeper than maxFastDepth, and anything that is not
// one JSON object. The differential tests and FuzzParseFast hold it to
// that contract.
func parseFast(raw []byte, c *chunk, scratch *[]byte) bool {
	p := fastParser{b: raw, scratch: *scratch}
	ok := p.chunk(c)
	*scratch = p.scratch
	return ok
}

// maxFastDepth bounds the nesting of skipped values (encoding/json allows
// 10000; deeper chunks take the slow path).
const maxFastDepth = 64

type fastParser struct {
	b       []byte
	i       int
	scratch []byte // unquoting buffer, reused between chunks
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace (0 at the end).
func (p *fastParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// open consumes the opening byte of an object or array.
func (p *fastParser) open(c byte) bool {
	if p.peek() != c {
		return false
	}
	p.i++
	return true
}

// next reports whether the object or array being read has another member,
// consuming the separating comma or the closing byte.
func (p *fastParser) next(close byte, first bool) (more, ok bool) {
	c := p.peek()
	if c == close {
		p.i++
		return false, true
	}
	if first {
		return true, c != 0
	}
	if c != ',' {
		return false, false
	}
	p.i++
	p.ws()
	return true, true
}

// key reads a member name and its colon. Names that need unescaping or are
// not ASCII are refused (see parseFast).
func (p *fastParser) key() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			k := p.b[start:j]
			p.i = j + 1
			if p.peek() != ':' {
				return nil, false
			}
			p.i++
			p.ws()
			return k, true
		}
		if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return nil, false
		}
	}
	return nil, false
}

// object reads an object, calling field with the index in names of each
// member so named, which field reads; members of other names are
// validated and skipped. A repeated name (encoding/json would keep the
// last one) and a name that is none of names but one of them in another
// letter case (encoding/json would match it) are refused. field is a
// closure that stays on the stack (object does not keep it), so the
// walker costs no allocation per chunk: BenchmarkParseFast holds it.
func (p *fastParser) object(names []string, field func(i int) bool) bool {
	if !p.open('{') {
		return false
	}
	var seen uint16
	for first := true; ; first = false {
		more, ok := p.next('}', first)
		if !ok || !more {
			return ok
		}
		k, ok := p.key()
		if !ok {
			return false
		}
		i := -1
		for j, n := range names {
			if string(k) == n {
				i = j
				break
			}
			if len(n) == len(k) && strings.EqualFold(n, string(k)) {
				return false
			}
		}
		if i < 0 {
			ok = p.skip(0)
		} else {
			ok = seen&(1<<i) == 0 && field(i)
			seen |= 1 << i
		}
		if !ok {
			return false
		}
	}
}

// array reads an array of elements read by elem into *dst (null: nil;
// [] an empty non-nil slice, as encoding/json sets them). null elements
// are refused.
func array[T any](p *fastParser, dst *[]T, elem func(*T) bool) bool {
	if p.peek() == 'n' {
		*dst = nil
		return p.lit("null")
	}
	if !p.open('[') {
		return false
	}
	for first := true; ; first = false {
		more, ok := p.next(']', first)
		if !ok {
			return false
		}
		if !more {
			if first {
				*dst = []T{}
			}
			return true
		}
		var zero T
		*dst = append(*dst, zero)
		if !elem(&(*dst)[len(*dst)-1]) {
			return false
		}
	}
}

func (p *fastParser) chunk(c *chunk) bool {
	ok := p.object([]string{"id", "choices", "usage", "error"}, func(i int) bool {
		switch i {
		case 0:
			return p.str(&c.ID)
		case 1:
			return array(p, &c.Choices, p.choice)
		case 2:
			return p.usage(&c.Usage)
		}
		return false // an error member: the slow path
	})
	p.ws()
	return ok && p.i == len(p.b)
}

func (p *fastParser) choice(ch *chunkChoice) bool {
	return p.object([]string{"index", "delta", "finish_reason"}, func(i int) bool {
		switch i {
		case 0:
			return p.int(&ch.Index)
		case 1:
			return p.delta(&ch.Delta)
		}
		return p.str(&ch.FinishReason)
	})
}

func (p *fastParser) delta(d *chunkDelta) bool {
	if p.peek() == 'n' {
		return p.lit("null")
	}
	return p.object([]string{"content", "reasoning_content", "reasoning", "refusal", "tool_calls"}, func(i int) bool {
		switch i {
		case 0:
			return p.str(&d.Content)
		case 1:
			return p.str(&d.ReasoningContent)
		case 2:
			return p.str(&d.Reasoning)
		case 3:
			return p.str(&d.Refusal)
		}
		return array(p, &d.ToolCalls, p.toolCall)
	})
}

func (p *fastParser) toolCall(tc *chunkToolCall) bool {
	return p.object([]string{"index", "id", "function"}, func(i int) bool {
		switch i {
		case 0:
			return p.intPtr(&tc.Index)
		case 1:
			return p.str(&tc.ID)
		}
		if p.peek() == 'n' {
			return p.lit("null")
		}
		f := &tc.Function
		return p.object([]string{"name", "arguments"}, func(i int) bool {
			if i == 0 {
				return p.str(&f.Name)
			}
			return p.str(&f.Arguments)
		})
	})
}

func (p *fastParser) usage(dst **chunkUsage) bool {
	if p.peek() == 'n' {
		return p.lit("null")
	}
	u := &chunkUsage{}
	*dst = u
	return p.object([]string{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "prompt_cache_hit_tokens", "cached_tokens"}, func(i int) bool {
		switch i {
		case 0:
			return p.int(&u.PromptTokens)
		case 1:
			return p.int(&u.CompletionTokens)
		case 2:
			return p.details(&u.PromptTokensDetails)
		case 3:
			return p.intPtr(&u.PromptCacheHitTokens)
		}
		return p.intPtr(&u.CachedTokens)
	})
}

func (p *fastParser) details(dst **promptTokensDetails) bool {
	if p.peek() == 'n' {
		return p.lit("null")
	}
	d := &promptTokensDetails{}
	*dst = d
	return p.object([]string{"cached_tokens", "cache_write_tokens"}, func(i int) bool {
		if i == 0 {
			return p.intPtr(&d.CachedTokens)
		}
		return p.intPtr(&d.CacheWriteTokens)
	})
}

// lit consumes the literal s.
func (p *fastParser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// int reads an integer of at most 18 digits; null leaves *dst unchanged.
func (p *fastParser) int(dst *int) bool {
	if p.peek() == 'n' {
		return p.lit("null")
	}
	v, ok := p.integer()
	if ok {
		*dst = v
	}
	return ok
}

// intPtr is int for a pointer field; null leaves it nil.
func (p *fastParser) intPtr(dst **int) bool {
	if p.peek() == 'n' {
		return p.lit("null")
	}
	v, ok := p.integer()
	if ok {
		*dst = &v
	}
	return ok
}

func (p *fastParser) integer() (int, bool) {
	j := p.i
	neg := j < len(p.b) && p.b[j] == '-'
	if neg {
		j++
	}
	start := j
	v := 0
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		v = v*10 + int(p.b[j]-'0')
		j++
	}
	n := j - start
	if n == 0 || n > 18 || (n > 1 && p.b[start] == '0') {
		return 0, false
	}
	if j < len(p.b) {
		if c := p.b[j]; c == '.' || c == 'e' || c == 'E' {
			return 0, false // a float: encoding/json refuses it for an int
		}
	}
	p.i = j
	if neg {
		v = -v
	}
	return v, true
}

// str reads a string into *dst; null leaves it unchanged.
func (p *fastParser) str(dst *string) bool {
	switch p.peek() {
	case 'n':
		return p.lit("null")
	case '"':
	default:
		return false
	}
	for j := p.i + 1; j < len(p.b); j++ { // plain ASCII: one copy
		c := p.b[j]
		if c == '"' {
			*dst = string(p.b[p.i+1 : j])
			p.i = j + 1
			return true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	if !p.skipString() {
		return false
	}
	*dst = string(p.scratch)
	return true
}

// skip validates and skips one JSON value.
func (p *fastParser) skip(depth int) bool {
	switch c := p.peek(); {
	case c == '"':
		return p.skipString()
	case c == '{' || c == '[':
		if depth >= maxFastDepth {
			return false
		}
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		p.i++
		for first := true; ; first = false {
			more, ok := p.next(close, first)
			if !ok {
				return false
			}
			if !more {
				return true
			}
			if close == '}' {
				if p.peek() != '"' || !p.skipString() || p.peek() != ':' {
					return false
				}
				p.i++
			}
			if !p.skip(depth + 1) {
				return false
			}
		}
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return false
}

// skipString reads a string with encoding/json's rules into p.scratch.
func (p *fastParser) skipString() bool {
	out, n, ok := jsonstr.AppendUnquoted(p.scratch[:0], p.b[p.i:])
	p.scratch = out
	p.i += n
	return ok
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *fastParser) number() bool {
	b, j := p.b, p.i
	digits := func() int {
		s := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - s
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	if j < len(b) && b[j] == '0' {
		j++
	} else if digits() == 0 {
		return false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	p.i = j
	return true
}

package store

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
)

// MessageFacts are what get_trace counts of a message outside the turns
// it returns: its role and time, an assistant message's usage and the ids
// of its tool calls, a tool result's call id. They are read once, when
// the entry is made: from the spans the scanner recorded while it
// validated the line (a file), or from the message itself
// (MessageEntry); so a long branch is tallied without reading its
// bodies again. Entry.MessageFacts returns nil when they are not known
// (a body of a shape not read here); the caller then decodes the message.
type MessageFacts struct {
	Role      string
	Timestamp int64
	// The usage of an assistant message; of its cost only the total.
	Input, Output, CacheRead, CacheWrite int
	CostTotal                            float64
	// ToolCalls are the ids of an assistant message's toolCall blocks,
	// in order.
	ToolCalls []string
	// ToolCallID is a tool result's call id.
	ToolCallID string
}

// Usage returns the usage the facts hold (a cost with its total only).
func (f *MessageFacts) Usage() llm.Usage {
	u := llm.Usage{Input: f.Input, Output: f.Output, CacheRead: f.CacheRead, CacheWrite: f.CacheWrite}
	if f.CostTotal != 0 {
		u.Cost = &llm.Cost{Total: f.CostTotal}
	}
	return u
}

// MessageFacts returns the facts of a message entry read when it was made
// (nil: not known, decode the message).
func (e *Entry) MessageFacts() *MessageFacts { return e.msg }

// FactsOf returns the facts of a decoded message (nil for a role they are
// not kept for): what MessageEntry keeps, and what a caller reads of a
// message whose facts were not known.
func FactsOf(m llm.Message) *MessageFacts {
	f := &MessageFacts{Role: m.MessageRole()}
	switch m := m.(type) {
	case *llm.UserMessage:
		f.Timestamp = m.Timestamp
	case *llm.AssistantMessage:
		f.Timestamp = m.Timestamp
		f.Input, f.Output, f.CacheRead, f.CacheWrite = m.Usage.Input, m.Usage.Output, m.Usage.CacheRead, m.Usage.CacheWrite
		if m.Usage.Cost != nil {
			f.CostTotal = m.Usage.Cost.Total
		}
		for _, tc := range m.ToolCalls() {
			f.ToolCalls = append(f.ToolCalls, tc.ID)
		}
	case *llm.ToolResultMessage:
		f.Timestamp, f.ToolCallID = m.Timestamp, m.ToolCallID
	default:
		return nil // not counted by anyone: no facts kept
	}
	return f
}

// messageNests are the members the scanner records with an entry line,
// in its one pass, for learnMessage: the message object's (list
// listInner), its content blocks' (listBlocks), its usage's (listUsage)
// and the usage's cost's (listCost).
var messageNests = []jsonobj.Nest{
	{Parent: 0, Key: `"message"`},
	{Parent: listInner, Key: `"content"`, Array: true},
	{Parent: listInner, Key: `"usage"`},
	{Parent: listUsage, Key: `"cost"`},
}

const (
	listInner = 1 + iota
	listBlocks
	listUsage
	listCost
)

// learnMessage reads the facts of the message entry e from the spans the
// scanner sc recorded in line text (the members of the message object and
// of its content blocks), the way encoding/json reads them into the llm
// types: keys case-insensitively, numbers into ints. It keeps nothing (the
// message is decoded when asked) unless the body is the message object
// alone and every member it reads has a plain form read exactly that way:
// no escaped or non-ASCII key, no key of interest twice, strings without
// escapes, integers that are integers, cost members that are numbers,
// an assistant's content an array of objects.
func (b *builder) learnMessage(e *Entry, text []byte, sc *jsonobj.Scanner, p *entryParts) {
	inner := sc.Members(listInner)
	if p.count != 1 || len(inner) == 0 || !sc.Members(0)[p.first].KeyIs(text, "message") {
		return
	}
	var f MessageFacts
	var role, callID, content []byte
	var usage *jsonobj.Member
	var seen uint8
	exactContent := false
	for i := range inner {
		m := &inner[i]
		key := m.Key(text)
		bit, ok := memberBit(key, m.KeyEsc)
		if !ok {
			return
		}
		if bit == 0 {
			continue
		}
		if seen&bit != 0 {
			return // a repeated member: encoding/json would merge or replace
		}
		seen |= bit
		val := m.Val(text)
		switch bit {
		case bitRole:
			role = val
		case bitTimestamp:
			if f.Timestamp, ok = plainInt64(val); !ok {
				return
			}
		case bitToolCallID:
			callID = val
		case bitUsage:
			usage = m
		case bitContent:
			// The scanner recorded the blocks of a member keyed exactly so.
			content, exactContent = val, string(key) == `"content"`
		}
		if (bit == bitRole || bit == bitToolCallID) && !plain(val, m.ValEsc) {
			return
		}
	}
	if role == nil {
		return
	}
	switch string(role[1 : len(role)-1]) {
	case llm.RoleUser:
		f.Role = llm.RoleUser
	case llm.RoleToolResult:
		f.Role = llm.RoleToolResult
		if callID != nil {
			f.ToolCallID = b.str(callID[1 : len(callID)-1])
		}
	case llm.RoleAssistant:
		f.Role = llm.RoleAssistant
		if usage != nil && !b.readUsage(text, sc, usage, &f) {
			return
		}
		if content != nil && string(content) != "null" {
			if content[0] != '[' || !exactContent || !b.readCalls(text, sc.Members(listBlocks), &f) {
				return
			}
		}
	default:
		return
	}
	fp := b.msgFacts()
	*fp = f
	e.msg = fp
}

// The message members the facts read, one bit each.
const (
	bitRole uint8 = 1 << iota
	bitTimestamp
	bitToolCallID
	bitUsage
	bitContent
)

// memberBit returns the bit of a message member's key (quotes included),
// 0 for one the facts do not read; ok is false for a key they cannot
// judge (escaped, or not ASCII: encoding/json folds the Kelvin sign).
func memberBit(key []byte, esc bool) (uint8, bool) {
	k := key[1 : len(key)-1]
	if esc || !asciiKey(k) {
		return 0, false
	}
	switch {
	case foldIs(k, "role"):
		return bitRole, true
	case foldIs(k, "timestamp"):
		return bitTimestamp, true
	case foldIs(k, "toolCallId"):
		return bitToolCallID, true
	case foldIs(k, "usage"):
		return bitUsage, true
	case foldIs(k, "content"):
		return bitContent, true
	}
	return 0, true
}

func foldIs(k []byte, name string) bool {
	return len(k) == len(name) && (string(k) == name || bytes.EqualFold(k, []byte(name)))
}

// readUsage reads an assistant's usage object (null: none) from the
// members the scanner recorded with the line (lists listUsage and
// listCost), or, for a usage keyed otherwise ("Usage"), from a scan of its own.
func (b *builder) readUsage(text []byte, sc *jsonobj.Scanner, u *jsonobj.Member, f *MessageFacts) bool {
	val := u.Val(text)
	if string(val) == "null" {
		return true
	}
	if val[0] != '{' {
		return false
	}
	src, fields, recorded := text, sc.Members(listUsage), sc.At(listUsage) == u.ValStart
	if !recorded {
		if b.sub.Scan(val) != jsonobj.Object {
			return false
		}
		src, fields = val, b.sub.Members(0)
	}
	var cost *jsonobj.Member
	var seen uint8
	for i := range fields {
		m := &fields[i]
		if m.KeyEsc {
			return false
		}
		k := src[m.KeyStart+1 : m.KeyEnd-1]
		var dst *int
		var bit uint8
		switch {
		case !asciiKey(k):
			return false
		case foldIs(k, "input"):
			dst, bit = &f.Input, 1
		case foldIs(k, "output"):
			dst, bit = &f.Output, 2
		case foldIs(k, "cacheRead"):
			dst, bit = &f.CacheRead, 4
		case foldIs(k, "cacheWrite"):
			dst, bit = &f.CacheWrite, 8
		case foldIs(k, "totalTokens"):
			var n int
			dst, bit = &n, 16
		case foldIs(k, "cost"):
			cost, bit = m, 32
		default:
			continue
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if dst != nil {
			n, ok := plainInt64(m.Val(src))
			if !ok || n != int64(int(n)) {
				return false
			}
			*dst = int(n)
		}
	}
	if cost == nil {
		return true
	}
	cv := cost.Val(src)
	if string(cv) == "null" {
		return true
	}
	if cv[0] != '{' {
		return false
	}
	if recorded && sc.At(listCost) == cost.ValStart {
		fields = sc.Members(listCost)
	} else {
		if b.sub.Scan(cv) != jsonobj.Object {
			return false
		}
		src, fields = cv, b.sub.Members(0)
	}
	seen = 0
	for i := range fields {
		m := &fields[i]
		if m.KeyEsc {
			return false
		}
		k := src[m.KeyStart+1 : m.KeyEnd-1]
		if !asciiKey(k) {
			return false
		}
		for j, name := range [...]string{"input", "output", "cacheRead", "cacheWrite", "total"} {
			if !foldIs(k, name) {
				continue
			}
			if seen&(1<<j) != 0 {
				return false
			}
			seen |= 1 << j
			v := m.Val(src)
			if v[0] != '-' && !jsonobj.IsDigit(v[0]) {
				return false // a string, null, an object…: the decoder fails or keeps
			}
			if name != "total" && finiteFloat(v) {
				continue // only the total is kept
			}
			x, err := strconv.ParseFloat(numStr(v), 64)
			if err != nil || math.IsInf(x, 0) {
				return false
			}
			if name == "total" {
				f.CostTotal = x
			}
		}
	}
	return true
}

// finiteFloat reports a valid JSON number that surely parses as a finite
// float64 (no exponent and fewer than 300 digits), so its value need not
// be parsed when it is not kept.
func finiteFloat(v []byte) bool {
	return len(v) < 300 && bytes.IndexAny(v, "eE") < 0
}

// readCalls reads the ids of the toolCall blocks of an assistant's content
// (its blocks' members, each block after a separator).
func (b *builder) readCalls(text []byte, blocks []jsonobj.Member, f *MessageFacts) bool {
	n := 0
	for i := range blocks {
		switch blocks[i].KeyStart {
		case -1:
			n++
		case -2:
			return false // an element that is not an object
		}
	}
	var ids []string
	for i := 0; i < len(blocks); {
		i++ // the separator
		var typ, id []byte
		var seen uint8
		for ; i < len(blocks) && blocks[i].KeyStart >= 0; i++ {
			m := &blocks[i]
			if m.KeyEsc {
				return false
			}
			k := text[m.KeyStart+1 : m.KeyEnd-1]
			var bit uint8
			switch {
			case !asciiKey(k):
				return false
			case foldIs(k, "type"):
				bit = 1
			case foldIs(k, "id"):
				bit = 2
			default:
				continue
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			v := m.Val(text)
			if !plain(v, m.ValEsc) {
				return false
			}
			if bit == 1 {
				typ = v
			} else {
				id = v
			}
		}
		if string(typ) == `"toolCall"` {
			if ids == nil {
				ids = b.strSlice(n)[:0]
			}
			if id != nil {
				id = id[1 : len(id)-1]
			}
			ids = append(ids, b.str(id))
		}
	}
	f.ToolCalls = ids
	return true
}

func asciiKey(k []byte) bool {
	for _, c := range k {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plain reports a JSON string without escapes whose bytes are valid
// UTF-8 (the decoder would replace invalid bytes).
func plain(v []byte, esc bool) bool {
	return len(v) >= 2 && v[0] == '"' && !esc && utf8.Valid(v[1:len(v)-1])
}

// plainInt64 returns a JSON number that is an integer in range (what the
// decoder puts in an int64). The scanner has validated the number.
func plainInt64(v []byte) (int64, bool) {
	if len(v) == 0 || v[0] != '-' && !jsonobj.IsDigit(v[0]) {
		return 0, false
	}
	n, err := strconv.ParseInt(numStr(v), 10, 64)
	return n, err == nil
}

// numStr returns v as a string for strconv without a copy: strconv does
// not keep it, and the line's bytes do not change during the call.
func numStr(v []byte) string { return alias.String(v) }

// msgFacts returns a zeroed MessageFacts (carved from a slab in bulk reads).
func (b *builder) msgFacts() *MessageFacts {
	if !b.bulk {
		return new(MessageFacts)
	}
	if len(b.facts) == 0 {
		b.facts = make([]MessageFacts, slabSize)
	}
	f := &b.facts[0]
	b.facts = b.facts[1:]
	return f
}

// strSlice returns a slice of n strings (carved from the strings slab in
// bulk reads).
func (b *builder) strSlice(n int) []string {
	if !b.bulk || n > slabSize/8 {
		return make([]string, n)
	}
	if len(b.strs) < n {
		b.strs = make([]string, slabSize)
	}
	s := b.strs[:n:n]
	b.strs = b.strs[n:]
	return s
}

package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
)

// rawJSON is response data that is already encoded (valid JSON, any
// depth): encodeOK writes it verbatim. encoding/json would re-scan a
// json.RawMessage and refuse nesting deeper than 10000 levels (a long
// linear session tree).
type rawJSON []byte

// encodeOK encodes a success response line with data. The envelope keys
// are in the order of Response.
func encodeOK(id *string, command string, data any) ([]byte, error) {
	raw, ok := data.(rawJSON)
	if !ok {
		return stdio.Marshal(Response{ID: id, Type: "response", Command: command, Success: true, Data: data})
	}
	out := appendOKHead(make([]byte, 0, len(raw)+len(command)+80), id, command)
	out = append(out, raw...)
	return append(out, "}\n"...), nil
}

// appendOKHead appends a success response line up to its data; the
// caller appends the data and "}\n".
func appendOKHead(out []byte, id *string, command string) []byte {
	out = append(out, '{')
	if id != nil {
		out = append(out, `"id":`...)
		out = jsonstr.Append(out, *id, jsonstr.Wire)
		out = append(out, ',')
	}
	out = append(out, `"type":"response","command":`...)
	out = jsonstr.Append(out, command, jsonstr.Wire)
	return append(out, `,"success":true,"data":`...)
}

// encodeEvent writes {"type":<t>, <fields of e>} as one line.
// The fields are encoded right after the type (no copy of the body).
func encodeEvent(e events.Event) ([]byte, error) {
	if ea, ok := e.(events.EntryAppended); ok && ea.Entry != nil {
		// The entry's own writer, spliced: encoding/json would copy its
		// output twice more (compaction, then the encoder's buffer). The
		// writer escapes raw U+2028/U+2029 on the way out (stdio.ValidUTF8).
		out := append(make([]byte, 0, len(ea.Entry.Body())+160), `{"type":"entry_appended","entry":`...)
		out = ea.Entry.AppendJSON(out)
		return append(out, "}\n"...), nil
	}
	if n, ok := e.(events.Notification); ok && n.Err != nil && n.Code == "" {
		n.Code = wirecode.Native(n.Err) // the one table (issue 36: disk faults carry a code)
		e = n
	}
	if strs, skel, ok := bigMessageEvent(e); ok {
		if line, err := encodeEvent(skel); err == nil {
			if out, _, ok := llm.SpliceStrings(line, strs); ok {
				return out, nil
			}
		}
	}
	prefix := strconv.AppendQuote([]byte(`{"type":`), e.Type()) // event type names are plain ASCII
	out, err := stdio.MarshalAfter(prefix, e)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", e.Type(), err)
	}
	body := out[len(prefix):]
	if bytes.HasPrefix(body, []byte("{}")) {
		return append(out[:len(prefix)], "}\n"...), nil
	}
	body[0] = ','
	return out, nil
}

// appendDeltaLine writes a message_update line for a delta event. It is the
// hot path of streaming and avoids reflection.
func appendDeltaLine(dst []byte, typ string, idx int, delta []byte, usage any) []byte {
	dst = append(dst, `{"type":"message_update","assistantMessageEvent":{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","contentIndex":`...)
	dst = strconv.AppendInt(dst, int64(idx), 10)
	dst = append(dst, `,"delta":`...)
	dst = jsonstr.Append(dst, delta, jsonstr.Wire)
	dst = append(dst, '}')
	if u, _ := usage.(*llm.Usage); u != nil {
		dst = append(dst, `,"usage":`...)
		dst = appendUsage(dst, u)
	}
	return append(dst, "}\n"...)
}

func appendUsage(dst []byte, u *llm.Usage) []byte {
	if u.Cost != nil {
		b, _ := json.Marshal(u)
		return append(dst, b...)
	}
	dst = append(dst, `{"input":`...)
	dst = strconv.AppendInt(dst, int64(u.Input), 10)
	dst = append(dst, `,"output":`...)
	dst = strconv.AppendInt(dst, int64(u.Output), 10)
	dst = append(dst, `,"cacheRead":`...)
	dst = strconv.AppendInt(dst, int64(u.CacheRead), 10)
	dst = append(dst, `,"cacheWrite":`...)
	dst = strconv.AppendInt(dst, int64(u.CacheWrite), 10)
	dst = append(dst, `,"totalTokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	return append(dst, '}')
}

// hugeEventSize is about the length of e's line when e carries a huge
// text (a prompt of many MiB), else 0: the entry body or the text.
func hugeEventSize(e events.Event) int {
	if ea, ok := e.(events.EntryAppended); ok && ea.Entry != nil {
		return len(ea.Entry.Body())
	}
	if strs, _, ok := bigMessageEvent(e); ok {
		n := 0
		for _, s := range strs {
			n += len(s)
		}
		return n
	}
	return 0
}

// bigMessageEvent returns, for a message_start or message_end carrying a
// message with big strings (a huge prompt, a big image: llm.BigStrings),
// or a before_agent_start of a huge prompt, those strings and the event
// with placeholders in their place: encodeEvent encodes the small skeleton
// and splices the strings in, so the line is written once, in a buffer of
// its exact size (encoding/json would build it about four times over).
func bigMessageEvent(e events.Event) ([]string, events.Event, bool) {
	switch ev := e.(type) {
	case events.MessageStart:
		if strs, m, ok := llm.BigStrings(ev.Message); ok {
			return strs, events.MessageStart{Message: m}, true
		}
	case events.MessageEnd:
		if strs, m, ok := llm.BigStrings(ev.Message); ok {
			return strs, events.MessageEnd{Message: m}, true
		}
	case events.BeforeAgentStart:
		if len(ev.Prompt) >= llm.SpliceBytes {
			return []string{ev.Prompt}, events.BeforeAgentStart{Prompt: llm.Placeholder}, true
		}
	}
	return nil, nil, false
}

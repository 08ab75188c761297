package golden

import (
	"bytes"
	"slices"
)

// MergeDeltas joins consecutive streaming deltas the way the server's
// writer may when its reader is behind (internal/stdio Writer.SendDelta:
// the same event type and content index, usage on both lines or on
// neither, the later usage kept; Writer.SendJoinable: ACP text chunks of
// one session and one kind). Whether two deltas are merged depends on
// goroutine scheduling, not on behaviour, so transcripts are compared in
// the merged form on both sides; the merging itself is tested by the
// writer's own tests and the @waitMerged fixtures.
func MergeDeltas(lines [][]byte) [][]byte {
	out := make([][]byte, 0, len(lines))
	var pend *Object // the delta line being extended, not yet encoded
	var pendEv *Object
	flush := func() {
		if pend != nil {
			out = append(out, Encode(pend))
			pend, pendEv = nil, nil
		}
	}
	var chunk *Object // the ACP chunk line being extended
	var chunkKey, chunkText string
	flushChunk := func() {
		if chunk != nil {
			c := chunk.Values["params"].(*Object).Values["update"].(*Object).Values["content"].(*Object)
			c.Values["text"] = chunkText
			out = append(out, Encode(chunk))
			chunk = nil
		}
	}
	for _, l := range lines {
		if o, key, text := chunkLine(l); o != nil {
			flush()
			if chunk != nil && key == chunkKey {
				chunkText += text
				continue
			}
			flushChunk()
			chunk, chunkKey, chunkText = o, key, text
			continue
		}
		flushChunk()
		o, ev := deltaLine(l)
		if o == nil {
			flush()
			out = append(out, l)
			continue
		}
		if pend != nil && ev.String("type") == pendEv.String("type") &&
			ev.Values["contentIndex"] == pendEv.Values["contentIndex"] && slices.Equal(o.Keys, pend.Keys) {
			pendEv.Values["delta"] = pendEv.String("delta") + ev.String("delta")
			if u, ok := o.Values["usage"]; ok {
				pend.Values["usage"] = u
			}
			continue
		}
		flush()
		pend, pendEv = o, ev
	}
	flush()
	flushChunk()
	return out
}

// chunkLine returns an ACP session/update notification carrying only a
// text chunk of the agent's message or thought, the key that decides
// whether two of them may join (session and kind), and its text.
func chunkLine(l []byte) (*Object, string, string) {
	v, err := Parse(l)
	if err != nil {
		return nil, "", ""
	}
	o, ok := v.(*Object)
	if !ok || o.String("method") != "session/update" || !slices.Equal(o.Keys, []string{"jsonrpc", "method", "params"}) {
		return nil, "", ""
	}
	p, ok := o.Values["params"].(*Object)
	if !ok || !slices.Equal(p.Keys, []string{"sessionId", "update"}) {
		return nil, "", ""
	}
	u, ok := p.Values["update"].(*Object)
	if !ok || !slices.Equal(u.Keys, []string{"sessionUpdate", "content"}) {
		return nil, "", ""
	}
	kind := u.String("sessionUpdate")
	if kind != "agent_message_chunk" && kind != "agent_thought_chunk" {
		return nil, "", ""
	}
	c, ok := u.Values["content"].(*Object)
	if !ok || !slices.Equal(c.Keys, []string{"type", "text"}) || c.String("type") != "text" {
		return nil, "", ""
	}
	text, ok := c.Values["text"].(string)
	if !ok {
		return nil, "", ""
	}
	return o, p.String("sessionId") + "\x00" + kind, text
}

// deltaLine returns a message_update line carrying only a delta (as the
// writer renders it) and its assistantMessageEvent, or nil.
func deltaLine(l []byte) (*Object, *Object) {
	v, err := Parse(l)
	if err != nil {
		return nil, nil
	}
	o, ok := v.(*Object)
	if !ok || o.String("type") != "message_update" {
		return nil, nil
	}
	if !slices.Equal(o.Keys, []string{"type", "assistantMessageEvent"}) &&
		!slices.Equal(o.Keys, []string{"type", "assistantMessageEvent", "usage"}) {
		return nil, nil
	}
	ev, ok := o.Values["assistantMessageEvent"].(*Object)
	if !ok || !slices.Equal(ev.Keys, []string{"type", "contentIndex", "delta"}) {
		return nil, nil
	}
	switch ev.String("type") {
	case "text_delta", "thinking_delta", "toolcall_delta":
	default:
		return nil, nil
	}
	if _, ok := ev.Values["delta"].(string); !ok {
		return nil, nil
	}
	return o, ev
}

// MergeTranscript applies MergeDeltas to a transcript of newline-ended
// lines (a stored out.jsonl).
func MergeTranscript(b []byte) []byte {
	var lines [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, l)
		}
	}
	var buf bytes.Buffer
	for _, l := range MergeDeltas(lines) {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

package golden

import (
	"bytes"
	"slices"
)

// MergeDeltas joins consecutive streaming deltas the way the server's
// writer may when its reader is behind (internal/stdio Writer.SendDelta:
// the same event type and content index, usage on both lines or on
// neither, the later usage kept). Whether two deltas are merged depends on
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
	for _, l := range lines {
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
	return out
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

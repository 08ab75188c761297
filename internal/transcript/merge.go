package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
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
//
// It also collapses a run of one bash call's progress lines to the last
// (see progressLine): how the bash tool's snapshots are cut depends on a
// 100 ms ticker, the content of the last one does not.
func MergeDeltas(lines [][]byte) [][]byte {
	out := make([][]byte, 0, len(lines))
	var pend *joinable // the line being extended, not yet encoded
	var text string    // its joined text
	flush := func() {
		if pend != nil {
			pend.set(text)
			out = append(out, Encode(pend.o))
			pend = nil
		}
	}
	for _, l := range lines {
		j := joinableLine(l)
		if j == nil {
			flush()
			out = append(out, l)
			continue
		}
		if pend != nil && j.key == pend.key {
			// The joined line is the later one (its usage, as the writer
			// keeps it) with the text of both, or only its own text when
			// it replaces the earlier one.
			if j.replace {
				pend, text = j, j.text
			} else {
				pend, text = j, text+j.text
			}
			continue
		}
		flush()
		pend, text = j, j.text
	}
	flush()
	return out
}

// joinable is a line the writer may join with the next one of the same
// key: its decoded object, its text and where that text lives in it.
// replace: the line supersedes an earlier one of its key instead of
// extending it (progress snapshots).
type joinable struct {
	o       *Object
	key     string
	text    string
	set     func(text string)
	replace bool
}

// joinableLine parses l once and returns it as a joinable line, or nil:
// a message_update carrying only a delta (as the writer renders it; key:
// event type, content index and whether it has usage), an ACP
// session/update carrying only a text chunk of the agent's message or
// thought (key: session and kind), or a bash call's tool_execution_update
// (key: the call).
func joinableLine(l []byte) *joinable {
	// Most lines are none of the three: they are not parsed (the writer
	// and Encode write these names as they are, never escaped).
	if !bytes.Contains(l, []byte(`"message_update"`)) && !bytes.Contains(l, []byte(`"session/update"`)) && !bytes.Contains(l, []byte(`"tool_execution_update"`)) {
		return nil
	}
	v, err := Parse(l)
	if err != nil {
		return nil
	}
	o, ok := v.(*Object)
	if !ok {
		return nil
	}
	if o.String("type") == "message_update" {
		return deltaLine(o)
	}
	if o.String("method") == "session/update" {
		return chunkLine(o)
	}
	if o.String("type") == "tool_execution_update" {
		return progressLine(o)
	}
	return nil
}

// progressLine returns a bash call's progress line as one that replaces
// the previous progress line of the same call, or nil. While output
// arrives the bash tool sends all output so far at most every 100 ms, and
// once more at the end unless a tick already sent everything
// (tools/bash.go). So how many snapshots a call sends, and where the
// earlier ones cut the output, depends on how the command's writes fall
// against the ticker (`pwd && ls` under load: "<dir>\n", then
// "<dir>\nfile\n"); the last snapshot always holds all output
// (tools.TestBashUpdates). Only bash is collapsed: other tools' progress
// (task, host tools) follows events, not a clock, and is compared line by
// line. A snapshot is never joined across another line or another call.
func progressLine(o *Object) *joinable {
	if o.String("toolName") != "bash" ||
		(!slices.Equal(o.Keys, []string{"type", "toolCallId", "toolName", "partial"}) &&
			!slices.Equal(o.Keys, []string{"type", "toolCallId", "toolName", "partial", "parentToolCallId"})) {
		return nil
	}
	partial, ok := o.Values["partial"].(string)
	if !ok {
		return nil
	}
	key := "progress\x00" + o.String("toolCallId") + "\x00" + o.String("parentToolCallId")
	return &joinable{o: o, key: key, text: partial, replace: true,
		set: func(t string) { o.Values["partial"] = t }}
}

func deltaLine(o *Object) *joinable {
	if !slices.Equal(o.Keys, []string{"type", "assistantMessageEvent"}) &&
		!slices.Equal(o.Keys, []string{"type", "assistantMessageEvent", "usage"}) {
		return nil
	}
	ev, ok := o.Values["assistantMessageEvent"].(*Object)
	if !ok || !slices.Equal(ev.Keys, []string{"type", "contentIndex", "delta"}) {
		return nil
	}
	switch ev.String("type") {
	case "text_delta", "thinking_delta", "toolcall_delta":
	default:
		return nil
	}
	delta, ok := ev.Values["delta"].(string)
	idx, isNum := ev.Values["contentIndex"].(json.Number)
	if !ok || !isNum {
		return nil
	}
	_, usage := o.Values["usage"]
	key := fmt.Sprintf("delta\x00%s\x00%s\x00%t", ev.String("type"), idx, usage)
	return &joinable{o: o, key: key, text: delta, set: func(t string) { ev.Values["delta"] = t }}
}

func chunkLine(o *Object) *joinable {
	if !slices.Equal(o.Keys, []string{"jsonrpc", "method", "params"}) {
		return nil
	}
	p, ok := o.Values["params"].(*Object)
	if !ok || !slices.Equal(p.Keys, []string{"sessionId", "update"}) {
		return nil
	}
	u, ok := p.Values["update"].(*Object)
	if !ok || !slices.Equal(u.Keys, []string{"sessionUpdate", "content"}) {
		return nil
	}
	kind := u.String("sessionUpdate")
	if kind != "agent_message_chunk" && kind != "agent_thought_chunk" {
		return nil
	}
	c, ok := u.Values["content"].(*Object)
	if !ok || !slices.Equal(c.Keys, []string{"type", "text"}) || c.String("type") != "text" {
		return nil
	}
	text, ok := c.Values["text"].(string)
	if !ok {
		return nil
	}
	return &joinable{o: o, key: "chunk\x00" + p.String("sessionId") + "\x00" + kind, text: text,
		set: func(t string) { c.Values["text"] = t }}
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

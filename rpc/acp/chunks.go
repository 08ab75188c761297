package acp

import (
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/llm"
)

// Streamed text is the hot path of a reply: one session/update per delta.
// Going through jsonrpc2.Conn.Notify costs a marshal of the update, a
// marshal of the envelope (map, sorted keys) and encodeEnvelope's parse
// and rewrite, per delta. Instead each agent_message_chunk and
// agent_thought_chunk line is built here with one append: a prefix fixed
// per session and kind, the text escaped as encoding/json escapes it with
// HTML escaping undone (jsonstr.Wire, which is exactly what the Notify
// path produces: chunks_test.go pins it), and a fixed suffix. The line is
// handed to the writer as joinable (stdio.Writer.SendJoinable): while the
// writer is behind, consecutive chunks of the same session and kind (same
// prefix) become one line whose text is the concatenation. Each piece is
// escaped on its own, so the joined text is exactly the pieces' texts
// joined, even for bytes that are not valid UTF-8. Nothing else joins:
// every other message is a whole line that ends the run of chunks.

// chunkTail closes the text string, content, update, params and envelope.
var chunkTail = []byte(`"}}}}` + "\n")

// chunkHeads are one session's line prefixes, by kind.
type chunkHeads struct {
	message, thought []byte
	scratch          []byte // escaped text; touched only by event callbacks
}

func newChunkHeads(sessionID string) *chunkHeads {
	return &chunkHeads{message: chunkHead(sessionID, updAgentChunk), thought: chunkHead(sessionID, updThoughtChunk)}
}

// chunkHead is the line up to the opening quote of the text.
func chunkHead(sessionID, kind string) []byte {
	b := append([]byte(nil), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = jsonstr.Append(b, sessionID, jsonstr.Wire)
	b = append(b, `,"update":{"sessionUpdate":"`...)
	b = append(b, kind...)
	return append(b, `","content":{"type":"text","text":"`...)
}

// appendChunkLine appends the whole line of one chunk (the unmerged
// form; tests compare it with the Notify path).
func appendChunkLine(dst []byte, sessionID, kind, text string) []byte {
	dst = append(dst, chunkHead(sessionID, kind)...)
	dst = appendChunkBody(dst, text)
	return append(dst, chunkTail...)
}

// appendChunkBody appends text escaped, without the quotes.
func appendChunkBody(dst []byte, text string) []byte {
	n := len(dst)
	dst = jsonstr.Append(dst, text, jsonstr.Wire)
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// sendChunk writes e as a chunk line when it is a text or thinking delta
// and reports whether it did; translate would have made the same update.
// Called from onEvent (the session's events arrive one at a time).
func (as *acpSession) sendChunk(e events.Event) bool {
	mu, ok := e.(events.MessageUpdate)
	if !ok {
		return false
	}
	ev := mu.AssistantMessageEvent
	var head []byte
	switch ev.Type {
	case llm.EvTextDelta:
		head = as.heads.message
	case llm.EvThinkingDelta:
		head = as.heads.thought
	default:
		return false
	}
	if ev.Delta == "" {
		return true // translate sends nothing for it either
	}
	select {
	case <-as.srv.conn.DisconnectNotify():
		return true // Notify would fail with ErrClosed
	default:
	}
	as.heads.scratch = appendChunkBody(as.heads.scratch[:0], ev.Delta)
	as.srv.w.SendJoinableSeq(head, as.heads.scratch, chunkTail, as.seq)
	if cap(as.heads.scratch) > 1<<20 {
		as.heads.scratch = nil
	}
	return true
}

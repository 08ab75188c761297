// Package rpc speaks ama's native stdio JSONL protocol ({id,type}):
// command dispatch, handlers, the approval Broker, and the native wire
// shapes (including the message_update delta line the writer renders
// through WriterOptions.DeltaLine). Wire types live only here. The line
// framing, the single output writer and the shutdown sequence are
// internal/stdio's (shared with rpc/acp); the error → code table is
// rpc/internal/wirecode's.
//
// Exact JSON, kept on purpose: params (server.go) removes the keys that
// match a parameter only case-insensitively before decoding (foldedKeys).
// That is not byte matching but a protocol rule: encoding/json would fill
// "modelId" from a key "ModelID", which the protocol (case-sensitive keys,
// as in the JavaScript reference) treats as absent; the reflection walks
// the parameter struct's tags once per type. The
// envelope is read the same way (exact "type" and "id", from the members
// the one validating pass recorded: parseCommand). On the
// way out, encode.go writes the hot lines (deltas, raw results, spliced
// huge events) without reflection; its tests pin them to the generic
// encoding.
//
// Concurrency contract:
//   - One goroutine reads stdin (stdio.LineReader) and hands complete lines to
//     the dispatch loop, which runs each handler inline, in arrival order.
//     Handlers never block on a run: they call session methods that either
//     return quickly (the session actor answers) or take a reply callback
//     the session invokes later (prompt: once the run has started; abort:
//     once idle). The dispatch loop therefore always keeps reading, so a
//     running prompt never delays get_state or permission_response.
//   - Exactly one goroutine (the stdio.Writer's) writes stdout. Everyone else
//     enqueues whole lines; lines never interleave and keep their order.
//     get_tree's line is produced in vectors on the writer goroutine
//     (SendVector) from the session's immutable tree shape and entries.
//     A full queue blocks the sender (backpressure), except that
//     consecutive deltas of one content block merge losslessly.
//   - Session events reach the Writer synchronously from the session's
//     event bus, so a response enqueued by a session callback is ordered
//     exactly against the events around it.
//   - The reader runs at most MaxReadAheadBytes ahead of the dispatcher
//     (one line of any size always passes), hands big line buffers over
//     instead of copying them, and drops a rejected line's buffer.
//   - The first failed stdout write (EPIPE: the host closed stdout) closes
//     Writer.Broken; the dispatcher then shuts down as on stdin EOF, and
//     later output is discarded without blocking anyone.
//   - After a signal the shutdown has Options.ShutdownGrace (stdio.Finish); when it runs
//     out the Writer is abandoned (blocked senders return, queued lines are
//     dropped) so an aborted run stuck on output can still end.
//   - Numbered event lines (capability event_seq, replay.go): each
//     attachment of a session (feed) holds its stdio.Seq in an atomic
//     pointer read by the bus subscriber; the writer goroutine numbers
//     and keeps the lines. replay is positioned by Session.AtState (the
//     session's actor, under its bus lock) and answered by a SendPieces
//     fill on the writer goroutine, which alone reads the ring. A
//     stream's next reservation is written from a goroutine of its own
//     (the writer never waits for an actor).
//   - Broker methods are safe for concurrent use; Respond calls its
//     callback before waking the asking session.
//   - Send and Notify (events no session publishes: a host adapter's
//     notifications, the startup hooks' hook_executed) are safe from any
//     goroutine; they write only while Run serves. Options.Serving runs on
//     Run's goroutine after hello and session_start, before any command is
//     read; Options.Settle on the dispatcher at the end of input, after the
//     last run settled and before the output is flushed (it bounds itself).
package rpc

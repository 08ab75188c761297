// Package acp serves the Agent Client Protocol (ACP v1: JSON-RPC 2.0, one
// message per line on stdio) over github.com/sourcegraph/jsonrpc2 for
// `ama-rpc --mode acp` (jsonrpc2's other users are clients: host and
// agents/acpclient; golden/arch_test.go keeps it to those). Several
// sessions are served at once, one prompt turn at a time per session; the
// ACP session id is the session's on-disk id, so `--mode rpc --resume <id>`
// and session/resume reach the same session.
//
// Files: stream.go (newline framing, parse errors), ids.go (request ids
// given back exactly as sent: jsonrpc2.ID keeps only non-negative int64
// numbers and re-encodes strings), encode.go (envelope
// key order, no HTML escaping), server.go (lifecycle, dispatch, replies),
// methods.go (the method table), initialize.go, sessions.go (new, load,
// resume, list, close), prompt.go (prompt, cancel, $/cancel_request),
// turns.go (turn queue, stop reasons), acpsession.go (per-session state,
// event routing), updates.go and toolcalls.go (event → session/update),
// replay.go (history → updates), chunks.go (agent message and thought
// chunks: one append per line, joined while the writer is behind),
// permissions.go (session/request_permission),
// config_options.go (modes, config options, set_mode, set_config_option),
// errors.go (renders the one error → code table, rpc/internal/wirecode,
// as JSON-RPC errors), plans.go (plan
// proposals offered as permission requests), gate.go (the start-up still
// to finish without a model: -32000), notices.go (_ama/notice), inspect.go (_ama/permission_inspect), callids.go
// (unique tool call ids per session).
//
// Byte-exact JSON (encode.go), kept on purpose: jsonrpc2 marshals its
// envelopes with encoding/json, which orders the keys by struct field and
// escapes <, > and & as \u003c, \u003e, \u0026. encodeEnvelope rewrites
// each message to jsonrpc, id, method, params, result, error and undoes
// those escapes. A JSON peer does not care, but the line is what a person
// reads in a transcript or a log, tool output is full of <, > and &, and
// the reference transcripts are compared byte for byte (golden/, goldens
// unchanged); the cost is one re-scan of each written message. Compare
// the goldens semantically first if you want to delete it.
//
// Concurrency contract:
//
//   - Reading: jsonrpc2.Conn's read goroutine decodes one line at a time
//     (Stream.ReadObject) and calls Server.Handle inline, in arrival order.
//     A bad line is answered (-32700 or -32600, id null) by the stream
//     itself and skipped; the connection lives on. Without a model
//     (Options.Boot) the gate retries the start-up on this goroutine too,
//     so attempts never overlap and the Sessions, Base and StartupID it sets
//     are written before any session exists.
//   - Notice is safe from any goroutine (noticeMu orders the queue before
//     the first session against later notices). The tool call id map
//     (callIDs) is shared by the translator and the approver under its own
//     lock.
//   - Inline work: a handler validates its params, looks the session up and
//     either answers at once (initialize, set_mode, set_config_option,
//     list, new, resume, and load, whose replay updates are written before
//     its answer) or registers the request and returns: session/prompt is
//     queued on its session and answered when its run settles;
//     session/close is answered from a background goroutine once the
//     session is closed. Notifications (session/cancel, $/cancel_request)
//     only mark turns and post an abort to the session's mailbox. Inline
//     handlers may wait for a session's actor (a quick mailbox round trip)
//     but never for the client, so the read loop always gets back to
//     reading.
//   - Calls to the client: session/request_permission is sent with
//     DispatchCall from the session's runner goroutine (the approver) or,
//     for a plan proposal, from a background goroutine, and waited for
//     there; the read loop delivers the answer. A cancel, a
//     close, the approval timeout or the end of input withdraws it: the
//     wait ends, $/cancel_request is sent and the ask yields deny.
//   - Numbered updates (seq.go, clientCapabilities._meta["ama/seq"]): a
//     session's stdio.Seq is opened before its events are subscribed;
//     its session/update lines are built here (notifySeq, chunks) and
//     numbered by the writer goroutine as it writes them.
//   - Updates: session events arrive synchronously on the session's actor
//     or runner goroutine (the session's event bus orders them); each is
//     translated and written right there (Notify; chunks: chunks.go), so
//     updates keep the session's order and precede the prompt answer that
//     follows them.
//     Event callbacks never call back into the session (its actor may be
//     the caller); anything that needs the session (usage, title, the
//     prompt answer, starting the next queued prompt) runs on a background
//     goroutine started at the run's settle: the session hands its outcome
//     (stop reason, usage, limit, plan proposal) to onSettle
//     (session.OnSettle) right after agent_settled, and the turn maps it.
//   - Writing: every message goes through jsonrpc2.Conn (which serialises
//     sends) into Stream.WriteObject, which hands whole lines to one
//     stdio.Writer, except agent_message_chunk and agent_thought_chunk
//     updates: chunks.go builds those lines itself and hands them to the
//     same writer (SendJoinable) from the event callback, so they keep the
//     session's order with the other updates; while the writer is behind,
//     consecutive chunks of one session and kind join into one line. Only
//     that writer's goroutine writes stdout. Logs go to
//     stderr. A slow client applies backpressure up to the senders.
//   - Shutdown: at the end of input Stream parks the read loop instead of
//     returning EOF; Run then withdraws permission asks, answers queued
//     prompts cancelled, lets running turns finish, waits for every owed
//     reply, closes the sessions and the connection and flushes. On ctx
//     cancellation (a signal) running turns are aborted first and answer
//     cancelled; Run returns stdio.ErrInterrupted (also for a signal that comes
//     during the end-of-input shutdown, which then aborts the turns it
//     waits for). A failed write to stdout (the host closed it: EPIPE) is
//     a disconnect, shut down like the end of input, output discarded.
//     After a signal the shutdown is bounded by Options.ShutdownGrace
//     (stdio.Finish, shared with the native protocol): then the writer is
//     abandoned (queued lines dropped, blocked senders released) and Run
//     returns after at most a fifth of the grace more, without waiting for
//     a writer stuck in a write. The line framing, the writer and this
//     sequence are internal/stdio's; this package never imports rpc.
package acp

// Package session runs agent sessions: the conversation tree and its
// session file, the turn loop (model requests with retries, fallback and
// compaction; tool calls through the permission pipeline and host
// approvals; checkpoints), plan mode, rewind and the session commands the
// protocol layers call.
//
// Each tool call is resolved once (tools.Resolve) before its verdict; the
// verdict (approvals.Call.Facts), the approval preview, the checkpoint and
// the execution (tools.Execute, the one tool runner) all use that value.
//
// Concurrency contract:
//   - Each Session has one actor goroutine that owns all of its state.
//     Every command is a closure posted to the actor's mailbox and run in
//     arrival order; a command never waits on a run. The goroutine is
//     started by the first post (a command, a helper's post, Close), not
//     when the session is made.
//   - Long work runs on helper goroutines: one runner per run (model
//     stream, tool execution, approval waits), one per compaction or
//     summary. Helpers read and change state only by posting to the actor
//     (call/do), never directly; the actor never waits on a helper.
//   - Events are published on the session's events.Bus, from the actor or
//     a helper, in the order they happen; subscribers see one total order.
//     Commands that answer later take a reply callback that the session
//     calls exactly once, at the point the protocol fixes (prompt: right
//     after the first turn_start; abort: once idle), so replies and events
//     are ordered against each other.
//   - AtState (seq.go) reads the State on the actor and runs the caller's
//     function under the bus lock (events.Bus.Hold): a protocol positions
//     a replay's answer between two events with it. The function must not
//     call into the session.
//   - How a run ended (Outcome: stop reason, usage, warning, limit, plan
//     proposal) goes to the OnSettle callbacks on the actor, right after
//     agent_settled; outcome.go records it from the session's own events
//     (the bus's first subscriber).
//   - The permission decision tally (decision.go: counters, the rejection
//     tracker, recent denials) is outside the actor state: parallel and
//     nested calls record on their own goroutines, each part guarded by
//     its own mutex (package permlog); Deps.Decisions, the log, is shared
//     by every session and serialises its writes.
//   - Tools may run in parallel (read-only batches); what they share (read
//     tracker, jobs, todo store, checkpoint turn) is safe for concurrent
//     use. A running tool's tools.CallSession (nested.go) runs nested calls
//     through the same gate on the caller's goroutine (reading the current
//     permission mode with call, so never from the actor), reads custom entries
//     with call and appends them with a post that does not wait (so a
//     connection's read goroutine may call it).
//   - Tools and host instructions that appear after start-up
//     (GrowingToolSet, Host.Instructions; late.go) are taken up by a root
//     session on its actor: tools before each model request, the host
//     section before each prompt, each recorded as a system patch.
//   - A root session's MCP servers (Deps.MCP, mcp.go) are started and
//     waited for by the runner (MCP.Ready, before each model request, never
//     on the actor); the actor takes the set's current table at the request
//     snapshot, so the table changes only at that boundary. Session.Close
//     closes the set after the actor has stopped.
//   - Cache warming (telemetry.go) arms one timer per session; its
//     callback posts to the actor, and a warm request streams on one
//     helper goroutine that posts its result back. Throughput telemetry is
//     fed by the runner on every delta and read by Stats; it is safe for
//     concurrent use and costs one clock reading and no allocation per
//     delta.
//   - The projected context of the active branch is kept by the actor
//     (context.go, ctxCache): appends extend it, any other change of the
//     branch (rewind, fork, switch, compaction, context edit) projects it
//     once more, and get_state, get_session_stats, the compaction check
//     and the request snapshot read it. A request snapshot hands the runner
//     the kept messages capped at their length, so the actor can extend
//     the cache while the runner streams. The first request of a turn takes
//     one actor call: the turn's inputs, the compaction decision and the
//     snapshot (reply.go replyOnce).
//   - The permission mode is the actor's; after every closure the actor
//     mirrors it into an atomic (PermissionMode), which any goroutine may
//     read without waiting. A sub-agent's runner reads its parent's
//     through ParentLink.Mode when it builds a batch's permission snapshot
//     and again before each call of a sequential batch (the stricter of
//     the two modes judges; toolexec.go, permission.go tightened).
//   - Close aborts the run, waits for it to settle, stops background jobs
//     and the warming timer, and releases the session file.
//   - Manager (manager.go) owns which root sessions exist; it is safe for
//     concurrent use, and its methods wait for hooks and actors, so they
//     are never called from an actor. It runs SessionStart/SessionEnd
//     through the session (runHooks: hook_executed on its bus) and orders
//     them against the host's session events (start, switch, exit).
//
// The package never writes to stdout and knows nothing of wire shapes:
// results are Go values the rpc packages map.
package session

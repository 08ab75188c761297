// Package trace builds the session trace that get_trace returns (protocol
// spec §2.10): a tree of turns (user messages that started a turn), their
// steps (one per model request, i.e. per assistant message, joined with the
// ama.trace step entry written after it) and the tool calls of each step,
// plus the auxiliary requests (usage entries such as the permission
// classifier, compaction and branch summaries) and the usage totals.
//
// # Pieces
//
//   - Query: the get_trace parameters (branch, turnLimit, before, since,
//     content). Validate checks them; Build applies them.
//   - Input: a snapshot of one session (its id, cwd, file, leaf, whether a
//     run is active, and the entries of the selected branch or of the
//     whole file). The session package takes it on its actor.
//   - Build: the trace of the requested window of turns, the paging cursor
//     and, for content=preview, redacted and truncated previews of the
//     window's prompts, replies, tool arguments and tool results. Only
//     the window's messages are decoded; the turns outside it are tallied
//     for the totals from the facts the store read with each message
//     (store.MessageFacts), and the ama.trace records are put on the
//     entries they name (a slot per entry, no map by id).
//   - Redact: the secret scrubber used for previews.
//
// A turn is a user message whose origin is neither steer nor followUp
// (the same rule as rewind points); every other entry belongs to the turn
// of its nearest ancestor that starts one. Entries before the first turn
// belong to no turn; their steps are not shown and not counted. Steps and
// tools carry only ids, times, counts and usage; content appears only in
// previews.
//
// # Errors
//
// Errors wrap ErrInvalidArguments (bad or conflicting parameters, a before
// cursor that is not a turn of the selection) or ErrTaskNotFound; their
// text is the protocol's message (e.g. "turnLimit must be an integer in
// 1..500"). The rpc layer maps them to invalid_arguments and
// task_not_found.
//
// # Concurrency
//
// The package is pure: no I/O, no goroutines, no package state except
// compiled regular expressions. Build only reads its Input; store entries
// are immutable and may be shared with the session actor (their decoded
// messages are cached behind a sync.Once), so Build may run on any
// goroutine while the session keeps appending to its own tree. Results are
// fresh values owned by the caller.
package trace

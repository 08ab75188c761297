// Package golden replays transcripts against an in-process ama-rpc: it
// drives the server through piped stdio (Run), plays fixture steps
// (commands and @directives such as @wait, @bind, @stall, @close),
// normalises output (timestamps, ids, temporary paths; MergeDeltas joins
// what only timing splits: writer-merged deltas and a bash call's
// ticker-paced progress snapshots, of which the last is kept), and
// compares transcripts exactly or by shape (CompareShape).
//
// Fixtures live in test/fixtures/rpc/<name>/ (case.json, in.jsonl,
// out.jsonl); UPDATE_GOLDEN=1 rewrites out.jsonl. Reference transcripts of
// the TypeScript ama are read from ../shared at test time, never copied.
//
// Concurrency: a Run collects stdout on its own goroutine; its methods are
// safe to call from the test goroutine. The package is test support and is
// imported only by tests.
package golden

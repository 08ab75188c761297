// Package printmode is `ama-rpc -p`: one prompt, run unattended on the
// startup session app built, then the result on stdout (the final text,
// one JSON result object, or the session's events in rpc wire shapes) and
// an exit code that says what happened (outcome.go: signals, failures,
// budgets, pending plans and denied tool calls each have their own).
// Everything meant for people goes to stderr, one "ama: " line each,
// among them the search hint (searchhint.go) after the denied line.
//
// Unattended itself is not decided here: app sets the permission
// policy's Unattended (every final ask becomes a deny in the normal
// pipeline, with hooks and sandbox as in rpc mode), sub-agents' auto
// background to foreground, and never marks plans attended. This package
// only observes the session (events, OnSettle) and drives it (Prompt,
// Abort).
//
// Concurrency: Run runs on the caller's goroutine. The session's bus calls
// the collector (under the collector's mutex; it never waits for the
// session) and, for stream-json, rpc.EventSink, which enqueues lines on the
// one stdout writer goroutine (internal/stdio). Run waits on the
// collector's change signal, the context (signals) and the writer's Broken
// channel; the final output is enqueued on the same writer, which Run
// closes before it returns. stdin is read only before the session starts
// (ReadPrompt); a reader that never sends leaves one goroutine blocked in
// Read until the process exits (there is no way to cancel a read).
package printmode

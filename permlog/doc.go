// Package permlog is the permission decision record: one Record per
// verdict of every tool call (a model's call, a nested call, a sub-agent's
// call, a host tool's call), the stable codes of the results that are not
// an allow, the JSONL decision log (Log), the per-session counters
// (Counters), the repeated-rejection tracker (Rejections) and the recent
// denials that read-only diagnostics show (Recent).
//
// What a record holds is the shape of the call, never its content: the
// tool, its permission class, the names of the programs a command runs
// (only names that look like program names, see Program), the classes of
// the paths it touches, each layer's vote (rule ids as "deny:3", never the
// rule text; dangerous-list category ids; classifier stage, decision,
// latency and cache hit; the person's answer and how long it took), the
// final effect and its code. Command text, arguments, prompts, reasons
// written by a model and secrets never enter a record.
//
// The session (session/permission.go) is the one producer: the shared
// gate every call passes builds the record once the verdict is final.
//
// Concurrency: Log, Counters, Rejections and Recent are safe for
// concurrent use (each guards its state with a mutex); Record and Shape
// are plain values. Nothing here starts a goroutine. The package imports
// only internal/ownfs and internal/secrets of this module.
package permlog

// Package classifier is tier 3 of permission mode "auto": a model that
// decides whether a tool call the rule and static tiers left undecided may
// run without asking (spec permissions.md 11.1, variant 11.2).
//
// The question goes out as a separate request with purpose "classify": it is
// not part of the transcript and does not touch the session's prompt cache.
// The call's data — tool name, arguments as JSON with sorted keys, cwd,
// project root, the latest user message — sits inside a <tool_call_data>
// block in which every spelling of that block's tags is neutralised, and the
// system prompt declares the block untrusted. The answer can only turn an
// undecided call into allow: Verdict has no deny, and the pipeline
// (approvals.Verdict.WithClassifier) keeps everything that is not an allow
// as ask, which becomes deny only when nobody can be asked.
//
// Two variants exist (Options.Mode, config permission.classifier):
//
//   - ModeSingle (default): one request, reply {"decision":"allow"|"ask",
//     "reason":…} parsed strictly by ParseReply; input cut to MaxInputChars.
//   - ModeTwoStage (pi-automode): a fast request that must answer 0 (allow)
//     or 1 (review), then, for 1, a detailed request whose reply
//     {"decision":"allow"|"block","tier":…,"reason":…} is parsed strictly by
//     ParseDetailedReply, with one retry after a malformed or truncated
//     answer. Both requests share the system prompt and the context message
//     so the provider can cache that prefix. The action is never cut; an
//     input over MaxActionChars fails.
//
// Fail closed: a missing model, a provider error, an abort, the timeout, a
// stop reason other than "stop", a tool call or an empty or malformed reply
// all give {Allow: false, Failed: true}. Every request made, successful or
// not, is reported to Options.OnUsage with kind "permission_classify".
//
// Timeout: Options.Timeout (default 10 s) bounds a whole classification,
// every request of it included. This is deliberately stricter than
// pi-automode, which gives each stage its own budget: the permission
// pipeline needs one upper bound on how long a tool call can wait for the
// classifier.
//
// Cache: successful verdicts (allow and ask) are remembered per Classifier,
// keyed by the exact call (cacheKey: classifier mode, tool name, the full
// input with no string content normalised, cwd, project root, sandbox
// note), in an LRU of Options.CacheSize (default 512) entries; failures are
// never cached. As in the reference, the key does not include the user
// message: a verdict is reused for the same call later in the session. A
// command that differs in one blank is another call (whitespace can decide
// what runs, e.g. python's indentation).
//
// Complete action: the model judges the exact input or nothing. The single
// stage shows up to MaxInputChars; a larger input fails without a request
// (the pipeline asks, unattended denies), never a verdict on a cut view. The
// two-stage variant shows up to MaxActionChars whole, likewise. Its context
// message carries the transcript: the session's user messages and earlier
// tool-call inputs (never assistant prose or tool results), each kind within
// its own budget (Options.MaxUserTranscriptTokens / MaxToolTranscriptTokens).
//
// Concurrency: a Classifier is safe for concurrent use; create one per
// session (it holds that session's cache) and Close it when the session
// ends. Identical calls made while one is in flight share that single
// classification (a small singleflight of our own, see flight). The shared
// work runs on its own goroutine under a context detached from the caller
// that started it, carrying the timeout; each caller waits for it, for its
// own ctx, or for the deadline, whichever comes first, so Classify returns
// in time even if a provider ignores cancellation. When the last waiter
// gives up, the request is cancelled. Close cancels whatever is in flight
// and waits for those goroutines. OnUsage runs on these goroutines.
//
// Helpers for tests and `ama-rpc explain`: BuildPrompt, BuildStagePrompt,
// ParseReply, ParseFastReply, ParseDetailedReply, CanonicalInput, ParseMode.
//
// Dependencies: the standard library and package llm.
package classifier

// Package openai is the streaming provider for OpenAI-compatible chat
// completion endpoints (OpenAI, OpenRouter, DeepSeek, Groq, Together,
// Ollama, LM Studio, vLLM and any server configured by the user), built on
// github.com/sashabaranov/go-openai.
//
// # Job
//
// Provider.Stream converts an llm.Request into a streaming
// /chat/completions request (system prompt first, summaries and custom
// messages as user messages, tool results as "tool" messages, tools,
// stream_options.include_usage, reasoning_effort where the endpoint takes
// it) and assembles the reply with an llm.Builder:
//
//   - delta.content opens/extends a text block; delta.refusal is shown as
//     text too and makes the stop reason "refusal".
//   - delta.reasoning_content (DeepSeek, vLLM, LM Studio) or, when absent,
//     delta.reasoning (OpenRouter, Ollama) is a thinking block. go-openai's
//     stream type has no "reasoning" field, so each event is decoded into
//     this package's own small chunk type (which also sees OpenRouter's
//     in-chunk "error" object and DeepSeek's cache-hit count). One decode
//     per event, no double parsing.
//
// # Reading the stream
//
// go-openai sends the request and turns HTTP failures into errors; the
// body of a successful response is then read by sseReader, which gives
// exactly what go-openai's RecvRaw would (its framing rules, keep-alive
// limit and error accumulator included) without allocating every line or
// matching regular expressions. Each event goes to parseFast, a parser for
// the common chunk shape that either fills the chunk exactly as
// encoding/json would or refuses; refused events (error objects, odd
// JSON, case-variant names, ...) are decoded by encoding/json as before.
// NewReference in the tests is the old path (RecvRaw + encoding/json
// only); the differential tests and the fuzz targets FuzzParseFast and
// FuzzStream hold the two to the same events, message and error.
//   - delta.tool_calls are grouped by index: the first fragment of an index
//     opens a tool-call block (toolcall_start with id and name), argument
//     fragments are toolcall_delta, and all calls close when the reply ends;
//     Builder.End parses the arguments, and text that is not a JSON object
//     stays in RawArguments for the session to report as a tool error.
//   - The usage chunk sets input = prompt_tokens - cached tokens
//     (prompt_tokens_details.cached_tokens, or DeepSeek's
//     prompt_cache_hit_tokens), cacheRead = cached, output =
//     completion_tokens; cost comes from Usage.Finalize with the model's
//     prices (also on failure, where it is usually zero).
//   - finish_reason: stop → stop (toolUse when the reply has tool calls,
//     as Ollama reports them), length → length, tool_calls/function_call →
//     toolUse, content_filter → refusal (rawStopReason keeps the original),
//     other values → stop/toolUse with rawStopReason set, "error" → a server
//     error. A stream that ends without finish_reason or [DONE] is a
//     disconnect ("network" when not a single event arrived); one that is
//     cut after finish_reason keeps its reply (only usage is lost).
//
// Images in tool results cannot go into a "tool" message, so after the run
// of tool messages they follow as one user message ("Image output of tool
// X (call Y):" + image parts). For a model without image input, images are
// replaced by a short note.
//
// Errors are *llm.Error: 429 rate_limit (Retry-After seconds or HTTP date,
// retry-after-ms), 503/529 overloaded, other 5xx server, 401/403 auth (the
// message names the provider and where the key came from, never the key),
// 4xx with context-length wording overflow, other 4xx invalid_request,
// transport failures network (before the first event) or disconnect
// (after it), cancellation llm.Aborted. A missing required key is
// no_api_key before any request. Keys are redacted from every error text.
//
// # Bounds (limits.go)
//
// Options.Limits bound one reply: a line of the event stream longer than
// MaxLineBytes stops the reading there, and content past MaxReplyBytes
// ends the reply; both fail with llm.ErrTooLarge, which is not retried.
// IdleTimeout ends an attempt whose endpoint sent no byte for that long
// (from the request on) as a retryable network error (disconnect once a
// chunk arrived): the request runs under its own context, cancelled with
// the cause errIdle, so an idle end is never mistaken for an abort. The
// timer reads its time through a small clock interface: the system's in
// production; the tests move a manual one (export_test.go) instead of
// racing the machine's load with short real timeouts.
//
// Presets and BuildEntries turn built-in endpoints plus the user config
// into llm.ProviderEntry values (key precedence cli > config > env).
//
// # Concurrency
//
// A Provider is immutable after New and safe for concurrent Stream calls:
// every call builds its own go-openai client around a per-call HTTPDoer
// (which adds the configured headers and records the response status and
// headers for Retry-After) and owns its Builder. emit runs on the calling
// goroutine, in order. Cancelling the Stream context cancels the HTTP
// request, so an abort returns as soon as the transport notices. The idle
// timer (time.AfterFunc) runs on its own goroutine and only cancels the
// request's context; the body's reads touch it with one atomic store.
//
// Nothing here logs; keys live only in Provider's unexported options, and
// Options, ProviderConfig and Provider print without them.
package openai

// Package claudestream is the wire of Claude Code's stream-json mode
// (`claude -p --input-format stream-json --output-format stream-json`):
// one JSON object per line in both directions, with the SDK control
// protocol (control_request / control_response / control_cancel_request)
// multiplexed on the same stream. It knows the envelope only; package
// agents maps the messages to a task.
//
// Message shapes follow the public Claude Agent SDK sources: the Python
// SDK's claude_agent_sdk/_internal/query.py (control_request envelope
// {type, request_id, request{subtype,…}}, control_response
// {type, response{subtype:"success"|"error", request_id, response|error}},
// control_cancel_request {type, request_id}) as summarised by the
// claude-code-agent crate's protocol module (docs.rs/claude-code-agent,
// "Wire types for the Claude Code stream-json protocol"), and the SDK
// overview of the control protocol (initialize first).
//
// Concurrency: one read goroutine delivers the non-control lines to
// Handler.Message in arrival order; each control request of the CLI runs
// Handler.ControlRequest on its own goroutine (an approval may wait for a
// human while the stream goes on), with a context that a
// control_cancel_request of that id cancels. Send and Control may be used
// from any goroutine; writes are serialised.
package claudestream

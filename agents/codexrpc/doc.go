// Package codexrpc is the wire of `codex app-server` on stdio: JSON-RPC 2.0
// messages, one per line, without the "jsonrpc" member (OpenAI's app-server
// documentation, developers.openai.com/codex/app-server, "Protocol":
// requests {method, id, params}, responses {id, result|error},
// notifications {method, params}; the server also sends requests, e.g.
// approvals, that the client answers). It is written here instead of on
// sourcegraph/jsonrpc2 (the ACP wire) because that library always writes
// the "jsonrpc" member and requires it on what it reads.
//
// Concurrency: one read goroutine delivers notifications to
// Handler.Notification in arrival order; each server request runs
// Handler.Request on its own goroutine (an approval may wait for a human
// while notifications go on). Call and Notify may be used from any
// goroutine; writes are serialised.
package codexrpc

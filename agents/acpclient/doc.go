// Package acpclient is the client end of the Agent Client Protocol over a
// child process's stdio: JSON-RPC 2.0 on sourcegraph/jsonrpc2 (the same
// library as the server end, rpc/acp), one message per line of at most
// jsonline.MaxLine bytes (internal/jsonline's Stream).
// It knows the wire only; package agents maps the agent's updates and
// permission requests to tasks and approvals.
//
// Concurrency: incoming requests and notifications are handled one at a
// time, in arrival order, on the connection's read goroutine (so session
// updates keep their order and precede the response of the prompt they
// belong to). Call and Notify may be used from any goroutine.
package acpclient

// Package host runs a host adapter (ama's HostApi v1) out of process: the
// embedded Node bridge (bridge.cjs, loaded with --host) or any program
// speaking the same JSON-RPC 2.0 protocol (--host-cmd); see
// docs/host-protocol.md. Host implements session.Host: its tools join the
// tool registry as ordinary tools.Tool values (validation, permission
// pipeline, approvals and events are the session's), its broker is the
// first answerer of permission asks, its instructions are the system
// prompt's host section, and it observes the events of every root session
// (a task child's reach it through its parent). It also implements
// agents.HostRunners (runners.provide: runner.start, runner.event,
// runner.stop) and telemetry.WarmingDecider (cache.onWarmingDecision:
// cache.decider, cache.decide, bounded to 1 s since the warmer asks on a
// session's actor), and receives hook_executed from the hooks
// dispatcher's observer (HookExecuted, non-blocking).
//
// The transport is a private pipe pair (fds 3 and 4 of the child), never
// the process's stdio, framed as one JSON object per line of at most
// jsonline.MaxLine bytes by jsonline.Stream (a line that is not a message,
// or longer, ends the connection as the bridge's exit does).
//
// Tools registered after create() join through ToolSet (a
// session.GrowingToolSet over the start-up registry). A running host
// tool's ToolContext members that reach back (ctx.tools.executeTool,
// ctx.session.*, ctx.markRead, ctx.spawnSubagent; toolctx.go) name the
// call by its callRef (unique per execution; toolCallIds are the model's
// and may repeat across sessions) and use its tools.CallSession while it
// runs. The members that are views of machinery owned elsewhere (ctx.checkpoint over
// the turn's tools.Env.BeforeChange, ctx.tasks over the agents registry,
// ctx.maxResultChars = the call's tools.Call.Limit; ctxviews.go) call it and keep
// no state of their own.
//
// Concurrency: a Host is safe for concurrent use. Messages from the child
// are handled in arrival order on the connection's read goroutine, so the
// registrations sent during create() are all applied before Start returns.
// Observe does not block the session (except for session_start after a
// switch, awaited up to 10 s): events are queued and delivered one at a
// time, in order, by a single goroutine (an event is sent when the
// previous one has been answered); Emit waits for one delivery, Flush for
// everything queued so far (the ui.notify calls a handler makes arrive
// before its answer and are handled in order on the read goroutine), and
// StartupSession for the startup session_start at most StartupTimeout. Tool
// executions and approval asks are calls on the connection; the ask chain
// is serialised by askMu. Nested requests (tool.executeTool,
// tool.spawnSubagent, checkpoint.beforeWrite) run on their own goroutines
// and answer when done;
// notifications that touch a session (session.appendCustom) only post to
// its actor, so the read goroutine never waits on a session.
package host

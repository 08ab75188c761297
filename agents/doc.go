// Package agents runs sub-agents: the agent types (built-ins and Markdown
// definitions), the per-root-session task registry with its pool, the ama
// child runner (a child session.Session with a parent link, or a fork of
// the parent's context), the external agents (acp:<program>, claude,
// codex and the other ids of the driver table: a child process per run,
// spoken to by one of three drivers behind one interface — ACP through
// agents/acpclient, Claude stream-json through agents/claudestream, Codex
// app-server through agents/codexrpc), the probe of installed external
// CLIs for get_agents, and the task and task_ctl tools the model calls
// (agents.md).
//
// Concurrency contract:
//   - A Registry belongs to one root session. Its state (tasks, counters,
//     the pool) is guarded by one mutex; no lock is held while a session is
//     called or an event is published.
//   - Each task runs on its own goroutine: pool slot, child session, prompt,
//     wait for the child to settle, finish. The foreground tool call only
//     waits on the task's channels (done, moved to the background).
//   - The child's events arrive on the child's bus goroutine; the task turns
//     them into subagent_* events on the parent's bus (never the reverse,
//     so the two bus locks cannot deadlock). Text deltas are merged over
//     TextThrottle using the injected clock.
//   - Notifications of finished background tasks go to the parent in
//     completion order through Session.Notify (each starts its own run once
//     the parent is idle).
//   - An external task's updates arrive on its connection's read
//     goroutine, one at a time, into the task's extRun (guarded by its
//     own mutex). ACP permission requests block that goroutine until the
//     parent's approver answers; Claude control requests and Codex server
//     requests are answered on their own goroutines, with a context the
//     agent's cancel (control_cancel_request) or the task's end cancels.
//     The prompt of a turn runs on its own goroutine so the task can
//     cancel it and, after a 15 s grace, kill the process.
//   - External agents take no slot of the registry's pool: they wait for a
//     slot of the external pool (extpool.go), one per process and shared
//     by every registry of a Factory, guarded by its own mutex; waiters
//     wake on a channel closed at each release or on the task's context.
//   - get_trace{taskId} (Registry.Trace) reads a live child through its
//     actor, and a released child's file without a lock (store
//     ReadSnapshot); an external task's turn skeleton is copied under the
//     registry mutex.
//   - The Prober memoises per program; the first get_agents probe runs on
//     a goroutine of the registry and is published under its mutex.
//   - Close aborts every task and waits for their goroutines.
package agents

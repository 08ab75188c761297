// Package agents runs sub-agents: the agent types (built-ins and Markdown
// definitions), the per-root-session task registry with its pool, the ama
// child runner (a child session.Session with a parent link), the external
// ACP runner (acp:<program>, a child process spoken to through
// agents/acpclient), and the task and task_ctl tools the model calls
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
//   - An external task's updates arrive on its ACP connection's read
//     goroutine, one at a time; its permission requests block that
//     goroutine until the parent's approver answers.
//   - Close aborts every task and waits for their goroutines.
package agents

// Package sandbox runs bash commands in a Landlock kernel sandbox.
//
// It owns two things:
//
//   - the policy: Resolve merges the user and project "sandbox" settings
//     (the project may only tighten), and ForBash turns them, the project
//     directory, HOME and the temp dir into a declarative Policy (what is
//     writable, what stays read-only inside it, what is unreadable, whether
//     the network is denied). Both are pure functions.
//   - the mechanism: Landlock restricts the calling thread and its future
//     children, so it cannot be applied to a child from the outside. Wrap
//     builds the ruleset here (go-landlock), passes it as an inherited
//     descriptor and rewrites the *exec.Cmd to re-execute this binary as a
//     hidden launcher (`ama-rpc __sandbox-exec <path> -- <argv…>`, package
//     launcher, which runs from its init in every binary that links this
//     package, test binaries included) that enforces the ruleset and execs
//     the command in place, so the pid, the process group and the kill
//     semantics of the caller are unchanged. Where unprivileged user
//     namespaces work, the launcher also gets a private mount namespace
//     (read-only bind mounts over .git/hooks, .git/config and .ama) and,
//     with the network denied, an empty network namespace.
//
// New probes the kernel once; a missing or too old Landlock
// is reported (Status), never papered over.
//
// Concurrency: Resolve, ForBash, Hint and LooksLikeDenial are pure. A
// Runtime is immutable after New and safe for concurrent use; Wrap only
// touches the given command.
package sandbox

// Package sandbox runs bash commands in a jail: fresh user, mount, PID, IPC
// and (network denied) network namespaces, a read-only view of the system with
// the granted trees writable, HOME reduced to a reviewed readable list,
// credentials hidden, a private /tmp, and a /dev of its own holding only
// an allowlist of the host's device nodes (DeviceNodes: null, zero, full,
// random, urandom, tty), a devpts of its own and a private /dev/shm;
// Landlock is a second, independent layer (and, without namespaces, opens
// only that allowlist in /dev and refuses mknod), and a seccomp filter
// refuses TIOCSTI and TIOCLINUX.
//
// It owns:
//
//   - the policy: Resolve merges the user and project "sandbox" settings
//     (the project may only tighten), and ForBash turns them and the
//     directories into a declarative Policy. Both are pure functions.
//   - the mechanism: Landlock restricts the calling thread and its future
//     children, and mounts can only be made from inside the namespaces,
//     so Wrap plans the jail (jailPlan), builds the Landlock ruleset
//     (go-landlock) and the seccomp program here, and rewrites the
//     *exec.Cmd to start a launcher (package launcher: the small
//     ama-rpc-sandbox binary next to the executable, else this binary
//     re-executed as `__sandbox-exec`) that applies them and runs the
//     command. Without user namespaces it falls back to Landlock alone.
//   - the pre-started launchers: Command.Start sends a command (foreground
//     or background job) to the launcher of its session and policy
//     (started on first use, the jail built once), which forks it into a
//     PID namespace and process group of its own, in ama-rpc's session
//     (one scheduling autogroup for a call, as for a bare command)
//     without a controlling terminal (the launcher drops it); the
//     self-test runs the same way in a launcher of its own. Wrap remains
//     for when Start cannot (ErrNoLauncher: no namespaces, four busy
//     launchers, a request too large for the control socket); its
//     launcher starts a session of its own.
//   - the proof: Verify runs canary probes inside the real sandbox and
//     caches the result per boot, launcher and policy; a failure turns the
//     sandbox (or the network denial) off and Report says so.
//
// New reads the kernel's facilities without starting any process.
//
// Concurrency: Resolve, ForBash, Hint and LooksLikeDenial are pure. A
// Runtime is immutable after New except for the self-test's result, which
// Verify sets once under a mutex, and the list of pre-started launchers
// (zmu); all methods are safe for concurrent use. Each launcher has one
// reader goroutine (its control socket's replies; sends are serialised by
// a writer mutex).
// Wrap only touches the given command.
package sandbox

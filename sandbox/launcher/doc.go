// Package launcher is the in-process half of the bash sandbox: when the
// binary is started as `<self> __sandbox-exec <path> -- <argv…>`, its init
// function takes over the process, enforces the Landlock ruleset the parent
// built (inherited as a file descriptor), makes the protected paths
// read-only bind mounts when it runs in fresh namespaces, and execs the
// command in place. It returns to normal start-up otherwise.
//
// Why init and not main: the launcher runs on every sandboxed bash call, and
// the rest of ama-rpc spends milliseconds in package initialisation (the
// JSON-schema library compiles its meta-schemas at init). This package
// depends on the standard library only (no go-landlock, no x/sys), so Go's
// initialisation order — a package as soon as its imports are initialised,
// ties broken by import path — runs it before those heavy packages. The
// three system calls it needs are issued directly for the same reason.
//
// Concurrency: init runs before any goroutine of the program; the launcher
// locks its OS thread, because credentials, no_new_privs and the Landlock
// domain are per-thread, and that thread execs.
package launcher

// Arg is the hidden subcommand.
const Arg = "__sandbox-exec"

// Environment variables the parent sets for the launcher; the launcher
// removes them before it execs the command.
const (
	// EnvFD is the inherited Landlock ruleset descriptor (decimal).
	EnvFD = "AMA_SANDBOX_FD"
	// EnvFlags are the landlock_restrict_self flags (decimal).
	EnvFlags = "AMA_SANDBOX_FLAGS"
	// EnvMounts lists the bind mounts to make, one per line, each
	// MountPin or MountReadOnly followed by an absolute path; set only when
	// the launcher runs in new user and mount namespaces.
	EnvMounts = "AMA_SANDBOX_MOUNTS"
	// EnvNamespaces is "1" when the launcher runs in new namespaces.
	EnvNamespaces = "AMA_SANDBOX_NS"
)

// Envs are all of them (for filtering).
var Envs = []string{EnvFD, EnvFlags, EnvMounts, EnvNamespaces}

// Bind mount kinds in EnvMounts.
const (
	// MountPin binds a directory onto itself, writable: a mount point
	// cannot be renamed or removed, so what it holds cannot be swapped.
	MountPin = "pin:"
	// MountReadOnly binds a path onto itself read-only.
	MountReadOnly = "ro:"
)

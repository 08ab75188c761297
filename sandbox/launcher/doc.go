// Package launcher is the in-process half of the bash sandbox: when the
// binary is started as `<self> __sandbox-exec <path> -- <argv…>` (or the
// small ama-rpc-sandbox binary, cmd/ama-rpc-sandbox, is started as
// `ama-rpc-sandbox <path> -- <argv…>`), Main takes over the process: it
// builds the jail the parent planned (mount operations in EnvMounts, run in
// fresh user, mount, PID, IPC and network namespaces), installs the seccomp
// filter the parent assembled (EnvSeccomp), enforces the Landlock ruleset
// the parent built (inherited as a file descriptor) and execs the command.
// In a PID namespace the launcher stays as the namespace's init: it starts
// the command, forwards signals to it, stops it the moment it creates one
// of the protected entries the plan marked (EnvSweep: .git redirections,
// .ama and external agents' settings and dotenv files; inotify), and when
// it ends moves such entries aside, then exits with the command's status (126
// when it was stopped or an entry had to be removed), which ends every
// process left in the namespace.
//
// Why init and not main in ama-rpc: the launcher runs on every sandboxed
// bash call, and the rest of ama-rpc spends milliseconds in package
// initialisation. This package depends on the standard library only (no
// go-landlock, no x/sys), so it runs early; the separate ama-rpc-sandbox
// binary, when installed next to ama-rpc, avoids even that.
//
// Concurrency: Main runs before any goroutine of the program; it locks its
// OS thread, because credentials, no_new_privs, the seccomp filter and the
// Landlock domain are per-thread, and that thread forks or execs. As init
// it starts two goroutines: one forwards signals to the command, one reads
// the tripwire's inotify events and only stats paths, sends SIGKILL and
// stores the tripped path (an atomic); the sweep itself runs on the locked
// thread after the command ended.
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
	// EnvMounts is the jail plan: one operation a line (see Op*), set only
	// when the launcher runs in new user and mount namespaces.
	EnvMounts = "AMA_SANDBOX_MOUNTS"
	// EnvNamespaces is "1" when the launcher runs in new namespaces, "pid"
	// when a new PID namespace is among them (the launcher is its init).
	EnvNamespaces = "AMA_SANDBOX_NS"
	// EnvSeccomp is the seccomp filter: hex of the classic BPF program
	// (8 bytes an instruction, host byte order).
	EnvSeccomp = "AMA_SANDBOX_SECCOMP"
	// EnvRules are Landlock rules the launcher adds to the inherited
	// ruleset once the jail is built, for the file systems it mounted
	// (Landlock judges a mount by where it hangs, not by what it covers):
	// one "<access mask> <path>" a line.
	EnvRules = "AMA_SANDBOX_RULES"
	// EnvSweep lists, one a line, files the command must not create
	// (.git/commondir, .env): the init watches for each that did not exist
	// before, stops the command the moment one appears, and moves it aside
	// (AsideSuffix).
	EnvSweep = "AMA_SANDBOX_SWEEP"
)

// AsideSuffix is added to the name of what a command made at a guarded path
// (EnvSweep) when the init undoes it: moved aside, not removed, since a
// process outside the sandbox may have made it.
const AsideSuffix = ".ama-removed"

// EnvZygote, when set (to the control socket's descriptor number), makes
// the launcher a pre-started launcher ("zygote") instead of running one
// command: it builds the jail and restricts itself exactly as for one
// command (mounts, capabilities, securebits, no_new_privs, seccomp,
// Landlock; all inherited by what it starts), then starts each command ama-rpc sends it
// on the control socket, in a PID namespace of its own (the command is
// its init: when it ends, everything it started ends) and a process group
// of its own. It runs in ama-rpc's session, in a process group of its
// own, and drops a controlling terminal it inherited before anything else
// (every launcher does): its commands have none and cannot get one.
// See ZygoteProtocol.
const EnvZygote = "AMA_SANDBOX_ZYGOTE"

// ZygoteProtocol describes the control socket (SOCK_SEQPACKET, one message
// a datagram, fields separated by NUL):
//
//	ama-rpc → zygote: "run" id path dir argc argv… env…, with the
//	                  command's stdin, stdout and stderr (and, for the
//	                  self-test, a descriptor 3) as SCM_RIGHTS
//	                  "kill" id signal   (to the command's process group)
//	zygote → ama-rpc: "started" id (with the command's pidfd as
//	                  SCM_RIGHTS, where the kernel makes one)
//	                  | "error" id message
//	                  "exit" id code cpu   (code: 128+n for a signal, 126
//	                                    when the command was stopped by the
//	                                    tripwire; cpu: its user+system
//	                                    time in microseconds)
//
// The socket is close-on-exec and never passed to a command; the zygote
// is not dumpable (no ptrace, no /proc/<pid>/fd of it from the commands)
// and takes every signal its commands may send to it into a channel it
// drains, so a command can neither talk to ama-rpc through it nor end it.
const ZygoteProtocol = "v1"

// Envs are all of them (for filtering).
var Envs = []string{EnvFD, EnvFlags, EnvMounts, EnvNamespaces, EnvSeccomp, EnvSweep, EnvRules, EnvZygote}

// Jail plan operations, one a line: the name, a space, then the operands,
// each quoted (strconv.Quote) and separated by spaces.
const (
	// OpPrivate makes the whole mount tree private (no operand).
	OpPrivate = "private"
	// OpClone N "path" takes a detached recursive copy of the mounts at
	// path (before anything is made read-only) as clone N; a missing path
	// leaves clone N empty (later attaches of it are skipped).
	OpClone = "clone"
	// OpCloneRO is OpClone with the copy made read-only.
	OpCloneRO = "clone-ro"
	// OpReadOnlyAll "path" makes every mount at and below path read-only,
	// nosuid and nodev (OpDev's binds of the allowed device nodes and its
	// devpts are the exceptions); clones are nodev too.
	OpReadOnlyAll = "ro-all"
	// OpTmpfs "path" "mode" mounts an empty tmpfs (writable until
	// OpSeal).
	OpTmpfs = "tmpfs"
	// OpAttach N "path" mounts clone N at path, creating the mount point
	// (directory or empty file, like the source) when it is missing.
	OpAttach = "attach"
	// OpMkdir "path" creates a missing directory (a mount point for OpRO).
	OpMkdir = "mkdir"
	// OpPlaceholder "path" "content" creates a missing file (a mount
	// point for OpRO) with content, atomically (a git outside never
	// reads it half written), when its directory exists.
	OpPlaceholder = "placeholder"
	// OpRO "path" binds an existing path onto itself read-only.
	OpRO = "ro"
	// OpHide "path" "kind" covers an existing directory with an empty,
	// read-only, mode 000 tmpfs and an existing file with a read-only
	// /dev/null; a path already hidden by a tmpfs layer gets a mode 000
	// stand-in of its kind ("dir" or "file"; "" for none), so reading it
	// fails as refused rather than missing.
	OpHide = "hide"
	// OpSealScaffold "path" makes a directory of the private /tmp that
	// only holds mount points (the parents of a project below /tmp)
	// read-only, its top mount only.
	OpSealScaffold = "seal-scaffold"
	// OpProc mounts a new procfs at /proc (for the new PID namespace).
	OpProc = "proc"
	// OpDev "name"… gives the jail a /dev of its own (like bubblewrap's
	// --dev), after OpReadOnlyAll and before anything is covered with
	// /dev/null: an empty tmpfs (nosuid, noexec, nodev, mode 0755, made
	// read-only once built) over the host's /dev, holding only
	//   - the host's device nodes named (each a plain name in /dev: null,
	//     zero, full, random, urandom, tty; sandbox.DeviceNodes), each
	//     bound read-only onto an empty file; these binds (with the
	//     covers OpHide makes of /dev/null) and the devpts below are the
	//     only mounts that are not nodev (the node's file
	//     system, the host's devtmpfs, is not the user namespace's, so its
	//     device opens; a node made in the jail's tmpfs would not), and a
	//     missing source or one that is not a device node is left out;
	//   - pts, a new devpts instance (pseudo terminals of its own; the
	//     user's are not in it: writing to them spoofs the screen and sends
	//     escape sequences; where devpts cannot be mounted, an empty
	//     read-only tmpfs), and the link ptmx -> pts/ptmx;
	//   - shm, an empty tmpfs (mode 1777, nosuid, nodev);
	//   - the links fd -> /proc/self/fd and stdin, stdout, stderr ->
	//     /proc/self/fd/0, 1, 2.
	// No other node of the host is reachable (disks, cameras, microphones,
	// input devices, the host's terminals and VT screens, GPUs, KVM,
	// FUSE…), nor one that appears there later.
	OpDev = "dev"
	// OpSeal "path" makes the tmpfs at path read-only (after the mount
	// points in it were made).
	OpSeal = "seal"
)

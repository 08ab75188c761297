package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// Policy is what one sandboxed command may do. It is declarative: Wrap
// turns it into a jail plan (mounts, with namespaces) and Landlock rules at
// each start, so entries that appear later are judged at the next start.
type Policy struct {
	// Project is the project directory: writable (in Write) or, in plan
	// mode, read-only, but always visible (also below /tmp or HOME).
	Project string `json:"project,omitempty"`
	// Write are the writable trees (directories) and files.
	Write []string `json:"write,omitempty"`
	// Protect stay read-only although they lie inside a Write tree
	// (.git/config, .git/hooks, .ama, …). Missing entries stay uncreatable
	// only where the mechanism can guarantee it (see Create, Sweep and
	// README "Sandbox").
	Protect []string `json:"protect,omitempty"`
	// Create are protected directories the jail creates (empty) when they
	// are missing, so they can be made read-only (.git/hooks, .git/info,
	// .git/modules, .git/worktrees, .ama): an empty one changes nothing
	// for git or ama-rpc.
	Create []string `json:"create,omitempty"`
	// Placeholders are protected files the jail creates when missing,
	// with content git reads as nothing changed (PlaceholderFiles), so
	// they are read-only mount points from the first instant: a command
	// cannot create them (with namespaces only).
	Placeholders []string `json:"placeholders,omitempty"`
	// Sweep are the protected paths the jail's init guards when they are
	// missing (.git/commondir, .git/config.worktree, a missing
	// .git/config) or links (a .ama or .git/hooks link inside the
	// project): it stops the command the moment one is created or
	// replaced, and undoes that (what was made there is moved aside).
	Sweep []string `json:"sweep,omitempty"`
	// Pin are directories that hold protected paths (.git) or the
	// project (between it and a writable tree above it); with namespaces
	// they become (writable) mount points so they cannot be renamed away
	// and replaced (mv .git .old && mkdir -p .git/hooks).
	Pin []string `json:"pin,omitempty"`
	// Hide are unreadable (credentials, ama's own files, sockets that
	// reach outside the sandbox).
	Hide []string `json:"hide,omitempty"`
	// Sockets are pathname Unix sockets outside the sandbox (daemons,
	// agents) that the jail covers, so connect(2) cannot reach them; Wrap
	// finds them at each start (pathSockets).
	Sockets []string `json:"sockets,omitempty"`
	// Home is HOME: only its HomeRead entries (and the writable trees in
	// it) are visible; empty: HOME is not restricted.
	Home string `json:"home,omitempty"`
	// HomeRead are the readable entries under Home (absolute).
	HomeRead []string `json:"homeRead,omitempty"`
	// Tmp is the session's private temporary directory: the jail's /tmp
	// (and TMPDIR). Writable even in plan mode (it is the sandbox's own).
	Tmp string `json:"tmp,omitempty"`
	// Cache is the sandbox's build-cache directory (GOCACHE, npm, pip,
	// ccache, XDG_CACHE_HOME point into it); writable even in plan mode.
	Cache string `json:"cache,omitempty"`
	// Devices are the paths in /dev that may be opened, for reading and
	// writing (DevicePaths); Landlock grants nothing else in /dev (the
	// jail's /dev holds DeviceNodes only, whatever the policy).
	Devices []string `json:"devices,omitempty"`
	// DenyNetwork refuses TCP bind and connect (and, with namespaces, any
	// network outside an empty loopback-less namespace).
	DenyNetwork bool `json:"denyNetwork,omitempty"`
	// ReadOnly is set for plan mode: nothing but the devices, Tmp and
	// Cache is writable.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Namespaces tells Wrap to build the jail in fresh user, mount, PID and
	// IPC namespaces (set by Wrap from the Runtime, not by ForBash).
	Namespaces bool `json:"namespaces,omitempty"`
}

// HiddenHomePaths are the credential paths under HOME that sandboxed
// commands cannot read: the one list in internal/secrets, shared with
// auto mode's rule tier.
var HiddenHomePaths = secrets.HomePaths

// HomeReadable is the reviewed list of what sandboxed commands may read
// under HOME: toolchains and their package stores, and the dotfiles builds
// and shells read. Everything else in HOME is invisible (with namespaces)
// or unreadable (Landlock only); HiddenHomePaths stay hidden inside these.
var HomeReadable = []string{
	// Toolchains and package stores.
	"go", "sdk", ".cargo", ".rustup", ".pyenv", ".nvm", ".volta", ".bun", ".deno", ".sdkman",
	".rbenv", ".gem", ".local/bin", ".local/lib", ".npm-global", ".m2", ".gradle", ".jdks",
	".dotnet", ".ghcup", ".cabal", ".elan", ".asdf", ".local/share/mise", ".config/mise",
	// Dotfiles builds, git and shells read.
	".gitconfig", ".gitignore", ".gitignore_global", ".config/git", ".config/go", ".editorconfig",
	".profile", ".bashrc", ".bash_profile", ".bash_login", ".zshrc", ".zshenv", ".zprofile", ".inputrc",
	".tool-versions",
}

// HiddenSystemPaths are sockets outside HOME through which a command could
// act outside the sandbox (the user's D-Bus session and systemd --user,
// agents, the Docker daemon); hidden with namespaces.
var HiddenSystemPaths = []string{
	"/run/user", "/run/dbus", "/var/run/dbus", "/run/docker.sock", "/var/run/docker.sock",
	"/run/containerd", "/run/podman", "/run/snapd.socket",
}

// ProtectedProjectPaths stay read-only inside the project: git's
// configuration and everything that redirects it (another common dir,
// submodule and worktree administration, per-worktree config), hooks, and
// ama's project directory, and the external agents' project settings and
// the dotenv files their CLIs load at start (secrets.AgentConfigPaths;
// never created: an existing one is a read-only mount point, a missing one
// is guarded by the jail's init (Sweep), so the user's project gets no
// empty directories or files). git's own work (objects, refs, logs, index,
// HEAD, lock files) stays writable.
var ProtectedProjectPaths = append([]string{
	".git/config", ".git/hooks", ".git/info", ".git/modules", ".git/worktrees",
	".git/commondir", ".git/config.worktree", ".ama",
}, secrets.AgentConfigPaths...)

// createdDirs are the ProtectedProjectPaths the jail creates empty when
// missing (Policy.Create), so that they are read-only mount points: an
// empty .git/hooks changes nothing for git, an empty .ama nothing for
// ama-rpc, and neither can be filled from inside. The others cannot be
// created empty (git dies on an empty commondir), and a protected link
// cannot carry a mount: all of them are in Policy.Sweep, and the jail's
// init guards those that are missing or links.
var createdDirs = []string{".git/hooks", ".git/info", ".git/modules", ".git/worktrees", ".ama"}

// PlaceholderFiles are the protected files that redirect git when a
// command creates them (.git/commondir names another common directory
// with its own config and hooks; config.worktree and a missing config are
// config), with the content the jail gives them when they are missing:
// commondir "." is the repository itself (what git assumes without the
// file), an empty config.worktree or config sets nothing. Made before the
// command starts and read-only for it, they leave no instant in which a
// git outside could follow a planted one; they stay in .git afterwards
// (like the empty directories of createdDirs).
var PlaceholderFiles = map[string]string{".git/commondir": ".\n", ".git/config.worktree": "", ".git/config": ""}

// DeviceNodes are the only device nodes of the host a sandboxed command can
// open (for reading and writing), in both modes: the jail's /dev of its own
// holds binds of these and nothing else of the host's (launcher.OpDev), and
// Landlock grants DevicePaths (these, ptmx, pts, shm) and no other path in
// /dev. Any
// other node (disks and loop devices, zram swap, cameras, microphones,
// keyboards and mice, FIDO keys, GPUs, KVM, FUSE, USB buses, the hardware
// RNG, the host's terminals and VT screens…) is out of reach, since a list
// of what to refuse could never be complete. Each is here because everyday
// commands open it by name:
//   - null: discarding output, empty input (`>/dev/null`, everywhere); the
//     jail also covers hidden files and sockets with binds of it;
//   - zero: zero bytes (dd, head -c, tests);
//   - full: a write that fails with ENOSPC (error-handling tests);
//   - random, urandom: random bytes for programs that read them rather than
//     call getrandom(2) (shell scripts, Java, older OpenSSL);
//   - tty: the process's own controlling terminal (ENXIO without one; in
//     the jail only one of its own pseudo terminals can become it), which
//     ssh-keygen, gpg, sudo-style prompts and `script` open.
//
// Left out on purpose: console and the tty[0-63], ttyS… lines (the user's
// screen), log (the host's syslog: acting outside), kmsg (the kernel's log,
// which dmesg reads; writing it logs as the kernel), mqueue (a view of the
// host's POSIX message queues: mq_open needs no path, and the sandbox has
// no IPC namespace of its own), kvm, fuse, net/tun, dri, snd, video, input,
// hidraw, bus/usb, the disks.
var DeviceNodes = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// DevicePaths are what a sandboxed command may open (and write) in /dev:
// DeviceNodes, pseudo terminals (ptmx, pts: in the jail a devpts of its
// own) and POSIX shared memory (shm: in the jail a tmpfs of its own). The
// links /dev/fd, stdin, stdout and stderr lead through /proc/self/fd.
var DevicePaths = append(slices.Clip(DeviceNodes), "/dev/ptmx", "/dev/pts", "/dev/shm")

// Dirs are the directories a policy is built from.
type Dirs struct {
	Project string // session directory (the project root)
	Home    string
	Temp    string // os.TempDir()
	// Tmp is the session's private temp dir (Runtime.For derives it
	// from Temp); may be empty.
	Tmp string
	// Cache is the sandbox's build-cache dir (may be empty).
	Cache string
	// Output is ama's tool output directory of the session (background
	// job logs, cut outputs); may be empty. It is NOT writable by
	// sandboxed commands: ama-rpc writes it through descriptors it holds
	// (internal/ownfs), and a command that could write it could swap a log
	// for a link that ama-rpc then reads (issue 24).
	Output string
	// Config is ama's user config directory and Data its data directory
	// (sessions, checkpoints, outputs of every project): both hidden,
	// except the session's Output; may be empty.
	Config string
	Data   string
	// Sessions is the session directory when it is set apart from Data
	// (--session-dir, a profile's or the user config's sessionDir), which
	// may lie in the project: hidden too, so a command cannot read or
	// change another session's file; may be empty.
	Sessions string
}

// ForBash builds the policy of a bash call. readOnly (plan mode) leaves
// nothing writable but the device files and the sandbox's own temp and
// cache directories.
func ForBash(s Settings, d Dirs, readOnly bool) Policy {
	p := Policy{DenyNetwork: s.NetworkDenied, ReadOnly: readOnly, Devices: slices.Clone(DevicePaths)}
	add := func(list *[]string, v string) {
		if v == "" || !filepath.IsAbs(v) {
			return
		}
		v = filepath.Clean(v)
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	if filepath.IsAbs(d.Project) {
		p.Project = filepath.Clean(d.Project)
	}
	if filepath.IsAbs(d.Tmp) {
		p.Tmp = filepath.Clean(d.Tmp)
	}
	if filepath.IsAbs(d.Cache) {
		p.Cache = filepath.Clean(d.Cache)
	}
	if !readOnly {
		add(&p.Write, d.Project)
		for _, w := range s.Writable {
			add(&p.Write, w)
		}
	}
	if d.Project != "" {
		for _, rel := range ProtectedProjectPaths {
			add(&p.Protect, filepath.Join(d.Project, rel))
		}
		for _, rel := range createdDirs {
			add(&p.Create, filepath.Join(d.Project, rel))
		}
		for _, rel := range ProtectedProjectPaths {
			if _, ok := PlaceholderFiles[rel]; ok {
				add(&p.Placeholders, filepath.Join(d.Project, rel))
			}
		}
		for _, rel := range ProtectedProjectPaths {
			add(&p.Sweep, filepath.Join(d.Project, rel))
		}
		add(&p.Pin, filepath.Join(d.Project, ".git"))
		// A writable tree above the project holds what the external
		// agents' CLIs read above their working directory (the parent
		// directories' .env), and the directories leading to the
		// project, which a command could rename away (mv ../../app
		// ../../old) and replace with one of its own at the session's
		// path: those are pinned (the tree itself and the project are
		// mount points already).
		proj := filepath.Clean(d.Project)
		for _, w := range p.Write {
			if w == proj || !within(proj, w) {
				continue
			}
			for dir := filepath.Dir(proj); ; dir = filepath.Dir(dir) {
				for _, rel := range secrets.AgentParentPaths {
					add(&p.Protect, filepath.Join(dir, rel))
					add(&p.Sweep, filepath.Join(dir, rel))
				}
				if dir == w || dir == "/" {
					break
				}
				add(&p.Pin, dir)
			}
		}
	}
	if h := filepath.Clean(d.Home); filepath.IsAbs(d.Home) && h != "/" {
		for _, rel := range HiddenHomePaths {
			add(&p.Hide, filepath.Join(h, rel))
		}
		// HOME itself is restricted unless the project (or another
		// writable tree) is HOME or holds it.
		if !slices.ContainsFunc(p.Write, func(w string) bool { return within(h, w) }) {
			p.Home = h
			for _, rel := range HomeReadable {
				add(&p.HomeRead, filepath.Join(h, rel))
			}
		}
	}
	add(&p.Hide, d.Config)
	add(&p.Hide, d.Data)
	add(&p.Hide, d.Sessions)
	for _, s := range HiddenSystemPaths {
		add(&p.Hide, s)
	}
	return p
}

// within reports whether p is root or lies below it (cleaned absolute
// paths).
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

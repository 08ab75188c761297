//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// capSysAdmin is CAP_SYS_ADMIN; the launcher keeps it (inside its own user
// namespace only) just long enough to make the bind mounts read-only.
const (
	capSysAdmin = 21
	capSetPCap  = 8
)

// detect reads the Landlock ABI and, without starting any process (New
// must not delay start-up), whether unprivileged user namespaces are
// allowed; the canary self-test (Verify, in the background) then proves
// the sandbox for real, and a failure turns it off.
func detect(_ *Runtime, _ bool, allowNS bool) Status {
	st := Status{Mechanism: "none"}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		st.Detail = "Landlock is not available in this kernel (" + err.Error() + ")"
		return st
	}
	st.ABI = abi
	if abi < minABI {
		st.Detail = fmt.Sprintf("Landlock ABI %d is too old (need %d or newer, Linux 6.2+)", abi, minABI)
		return st
	}
	st.Mechanism = "landlock"
	st.Available = true
	if _, err := seccompFilter(true); err == nil {
		st.Seccomp = true
	}
	why := "not tried"
	if allowNS {
		why = usernsBlocked()
	}
	if why == "" {
		st.Namespaces, st.NetworkIsolation = true, true
		return st
	}
	// Landlock ABI 4 refuses TCP; the seccomp filter refuses every other
	// IPv4/IPv6 socket.
	st.NetworkIsolation = abi >= 4 && st.Seccomp
	st.Detail = "no user namespaces (" + why + "): Landlock only; .git and .ama are protected by leaving the project root and .git themselves read-only (no new top-level entries, git cannot commit), no private /tmp, /proc or System V IPC, metadata changes (chmod, utime, xattrs) outside are not blocked"
	return st
}

// readUnixSocketTable reads the kernel's table of bound Unix sockets
// (unixSocketTable); unreadable, the environment's sockets are the only
// ones covered.
// pidOf reads the pid a pidfd names in ama-rpc's PID namespace (its
// fdinfo's "Pid:" line), 0 when it cannot.
func pidOf(pidfd int) int {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return 0
			}
			return n
		}
	}
	return 0
}

// openDevNull is the null device (a self-test's stdin).
func openDevNull() (*os.File, error) { return os.Open(os.DevNull) }

func readUnixSocketTable() []byte {
	b, _ := os.ReadFile(unixSocketTable)
	return b
}

// usernsBlocked says why unprivileged user namespaces are unavailable
// (the knobs of Linux, Debian and Ubuntu), or "".
func usernsBlocked() string {
	num := func(p string) (int, bool) {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	if n, ok := num("/proc/sys/user/max_user_namespaces"); ok && n == 0 {
		return "user.max_user_namespaces is 0"
	}
	if os.Getuid() != 0 {
		if n, ok := num("/proc/sys/kernel/unprivileged_userns_clone"); ok && n == 0 {
			return "kernel.unprivileged_userns_clone is 0"
		}
		if n, ok := num("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && n != 0 {
			return "AppArmor restricts unprivileged user namespaces"
		}
	}
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return "the kernel has no user namespaces"
	}
	return ""
}

// setupProc starts the launcher in a new session (no controlling terminal:
// /dev/tty cannot be opened, and TIOCSTI needs it; a pre-started launcher
// is moved to a process group in ama-rpc's session by startZygote and
// drops the terminal itself) and, with namespaces,
// in new user, mount, PID, IPC and (network denied) network namespaces. The
// IPC namespace (owned by the new user namespace: no privilege needed)
// hides the host's System V shared memory segments (X11's MIT-SHM holds
// screen contents), message queues and semaphore sets and its POSIX
// message queues, by key, id and name: one per launcher, so the commands
// of a pre-started launcher share theirs, as they share /dev/shm. The
// launcher keeps CAP_SYS_ADMIN and CAP_SETPCAP inside its user namespace
// just long enough to build the jail and lock the command out of them.
func setupProc(cmd *exec.Cmd, p Policy) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Setsid, a.Setpgid, a.Setctty, a.Foreground = true, false, false, false
	if !p.Namespaces {
		return nil
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if p.DenyNetwork {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{capSysAdmin, capSetPCap}
	return nil
}

// ownDir checks that p is a directory (not a link) owned by this user.
func ownDir(p string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a directory owned by uid %d", p, os.Getuid())
	}
	return nil
}

// newRuleset builds the Landlock ruleset of a policy (not enforced: the
// launcher enforces it) and returns it as a file with the
// landlock_restrict_self flags.
func newRuleset(p Policy) (*os.File, uint32, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < minABI {
		return nil, 0, fmt.Errorf("Landlock ABI %d is not usable (%v)", abi, err)
	}
	cfg := landlock.Config{
		HandledAccessFS: fsAll | fsResolveUnix,
		Scoped:          landlock.ScopedSet(ll.ScopeAbstractUnixSocket | ll.ScopeSignal),
	}
	if p.DenyNetwork {
		if abi < 4 && !p.Namespaces {
			return nil, 0, fmt.Errorf("cannot deny the network: Landlock ABI %d has no TCP rules and there are no network namespaces", abi)
		}
		cfg.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	}
	// Best effort only downgrades what the kernel lacks beyond the checks
	// above (minABI, TCP rules): rights newer than its ABI (ioctl on
	// devices before ABI 5, IPC scoping before 6), which such kernels do
	// not restrict at all; connect(2) to pathname Unix sockets
	// (fsResolveUnix) before ABI 9, where the jail's mounts
	// (Policy.Sockets) are the only layer.
	fd, flags, err := cfg.BestEffort().NewRulesetFD(buildRules(p)...)
	if err != nil {
		return nil, 0, fmt.Errorf("build the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return nil, 0, errors.New("the Landlock ruleset is empty")
	}
	return os.NewFile(uintptr(fd), "landlock-ruleset"), flags, nil
}

// jailRules are the Landlock rules of the file systems the jail mounts
// itself (launcher.EnvRules): the new /proc readable, the private /dev/shm
// and the new devpts instance (/dev/ptmx is a link into it) writable, the
// HOME tmpfs listable. The jail's /dev itself is listable and its device
// nodes open through buildRules' rules on the host's /dev and nodes (what
// the jail binds; Landlock walks up through the mount points).
func jailRules(p Policy) string {
	all := fsWrite
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi < 5 {
		all &^= ll.AccessFSIoctlDev // not handled before ABI 5
	}
	rules := fmt.Sprintf("%d /proc\n%d /dev/shm\n%d /dev/pts\n", uint64(fsRead), uint64(all), uint64(all))
	if p.Home != "" {
		rules += fmt.Sprintf("%d %s\n", uint64(fsRead), p.Home)
	}
	return rules
}

// Access rights.
const (
	fsAll = landlock.AccessFSSet(1<<16 - 1) // every right up to ABI 5 (ioctl_dev)
	// fsWrite is what a writable tree grants: all but making device
	// nodes (root without namespaces could otherwise mknod its own
	// /dev/tty1 or disk, beside the jail's covers and Landlock's rules).
	fsWrite = fsAll &^ landlock.AccessFSSet(ll.AccessFSMakeChar|ll.AccessFSMakeBlock)
	// fsResolveUnix (ABI 9) is connect(2) to a pathname Unix socket: only
	// granted in the writable trees (the project, the private /tmp), so
	// the sockets of daemons and agents elsewhere cannot be reached.
	fsResolveUnix = landlock.AccessFSSet(ll.AccessFSResolveUnix)
	fsFile        = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
	fsRead        = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	fsReadFile    = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile)
	fsListDir     = landlock.AccessFSSet(ll.AccessFSReadDir)
)

// buildRules expands the policy: read everywhere except HOME, the hidden
// paths and /dev, read the readable HOME entries, write (but make no device
// node) in the writable trees (and the session's temp and cache dirs)
// except hidden (and, without namespaces, protected) paths, list /dev and
// read and write the device files (Policy.Devices): no other node in /dev
// opens, whatever it is, also one that appears there later.
func buildRules(p Policy) []landlock.Rule {
	hide := realPaths(p.Hide)
	var rules []landlock.Rule
	readEx := hide
	if p.Home != "" {
		readEx = append(slices.Clone(hide), realPaths([]string{p.Home})...)
		for _, h := range realPaths(p.HomeRead) {
			grant(&rules, h, hide, fsRead, fsListDir)
		}
	}
	// /dev is an allowlist (below): without namespaces the host's nodes
	// are in view, and in the jail this repeats its /dev of its own.
	readEx = append(slices.Clip(readEx), "/dev")
	grant(&rules, "/", readEx, fsRead, fsListDir)
	rules = append(rules, landlock.PathAccess(fsListDir, "/dev").IgnoreIfMissing())
	noWrite := hide
	if !p.Namespaces {
		noWrite = append(slices.Clone(hide), realPaths(p.Protect)...)
	}
	var writes []string
	if !p.ReadOnly {
		writes = append(writes, p.Write...)
	}
	writes = append(writes, p.Tmp, p.Cache)
	for _, w := range realPaths(writes) {
		if w == "" {
			continue
		}
		if _, err := os.Stat(w); err != nil {
			continue
		}
		// A tree granted explicitly is writable even inside a hidden
		// directory (the session's output directory in ama's data
		// directory); what is hidden inside it stays hidden.
		var ex []string
		for _, x := range noWrite {
			if x != w && within(x, w) || x == w {
				ex = append(ex, x)
			}
		}
		grant(&rules, w, ex, fsWrite|fsResolveUnix, 0)
	}
	for _, d := range p.Devices {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			rules = append(rules, landlock.PathAccess(fsWrite, d).IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.PathAccess(fsFile, d).IgnoreIfMissing())
		}
	}
	return rules
}

// grant gives rights on the tree at root minus the excluded paths. Landlock
// rights are inherited by a whole tree, so a directory above an excluded
// path only gets dirOnly (may be 0) and each of its entries is granted in
// turn; entries are listed now, at the start of the command. Symbolic
// links met on the way are never followed: what a link points to is
// granted where it lies or not at all (a link `shared -> ../sibling` in the
// project does not make the sibling writable).
func grant(rules *[]landlock.Rule, root string, excluded []string, rights, dirOnly landlock.AccessFSSet) {
	switch relation(root, excluded) {
	case excludedPath:
		return
	case clear:
		add(rules, root, rights)
		return
	}
	if dirOnly != 0 {
		*rules = append(*rules, landlock.PathAccess(dirOnly, root).IgnoreIfMissing())
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return // fail closed: nothing below is granted
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		grant(rules, filepath.Join(root, e.Name()), excluded, rights, dirOnly)
	}
}

func add(rules *[]landlock.Rule, p string, rights landlock.AccessFSSet) {
	fi, err := os.Stat(p)
	if err != nil {
		return
	}
	if fi.IsDir() {
		*rules = append(*rules, landlock.PathAccess(rights, p).IgnoreIfMissing())
	} else if r := rights & fsFile; r != 0 {
		*rules = append(*rules, landlock.PathAccess(r, p).IgnoreIfMissing())
	}
}

const (
	clear = iota
	excludedPath
	aboveExcluded
)

// relation tells whether p is excluded, lies above an excluded path, or is
// clear of all of them.
func relation(p string, excluded []string) int {
	out := clear
	for _, x := range excluded {
		switch {
		case p == x || below(p, x) || x == "/":
			return excludedPath
		case p == "/" || below(x, p):
			out = aboveExcluded
		}
	}
	return out
}

// below tells whether p lies below dir (dir+"/" a prefix of p), without
// building that string: relation runs for every entry of the walk against
// every excluded path.
func below(p, dir string) bool {
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// realPaths resolves symbolic links so the paths match the directory walk;
// a missing path is resolved as far as it exists. Both the given and the
// resolved form are kept.
func realPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		p = filepath.Clean(p)
		out = append(out, p)
		if r := realish(p); r != p {
			out = append(out, r)
		}
	}
	return out
}

func realish(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	dir = filepath.Clean(dir)
	if dir == p {
		return p
	}
	return filepath.Join(realish(dir), base)
}

// openPTY opens a pseudo terminal for the TIOCSTI probe and returns its
// terminal's path.
func openPTY() (string, func(), error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", nil, err
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		m.Close()
		return "", nil, err
	}
	return "/dev/pts/" + strconv.FormatUint(uint64(n), 10), func() { m.Close() }, nil
}

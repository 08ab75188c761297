//go:build linux

package launcher

import (
	"encoding/hex"
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe" // system call arguments: the seccomp program, Landlock rules, mount paths and attributes, capability sets
)

func init() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	Main(os.Args[2:])
}

// Main runs the launcher on "<path> -- <argv…>" and never returns: it execs
// the command (or, as a PID namespace's init, exits with its status), or
// exits 126 when the sandbox cannot be applied (the command has not run).
func Main(args []string) {
	err := run(args)
	os.Stderr.WriteString("ama-rpc sandbox: " + err.Error() + "\n")
	os.Exit(126)
}

// Constants not in package syscall. The numbers of the system calls added
// since Linux 5.x are the same on every architecture.
const (
	sysOpenTree             = 428
	sysMoveMount            = 429
	sysMountSetattr         = 442
	sysLandlockAddRule      = 445
	sysLandlockRestrictSelf = 446
	landlockRulePathBeneath = 1
	oPath                   = 0x200000 // O_PATH
	prSetNoNewPrivs         = 38
	prSetSeccomp            = 22
	seccompModeFilter       = 2
	prGetSecurebits         = 27
	prSetSecurebits         = 28
	prCapbsetDrop           = 24
	prCapAmbient            = 47
	prCapAmbientClearAll    = 4
	capVersion3             = 0x20080522 // _LINUX_CAPABILITY_VERSION_3
	// SECBIT_NOROOT, its lock, SECBIT_NO_CAP_AMBIENT_RAISE and its lock:
	// a command that runs as uid 0 gains no capabilities at exec (from
	// the bounding set or ambient ones). Also the locks of
	// SECBIT_NO_SETUID_FIXUP and SECBIT_KEEP_CAPS (bits 3 and 5) with
	// the bits themselves left clear: the kernel keeps dropping
	// capabilities when uid 0 becomes another uid, and keep_caps cannot
	// be turned on again (there is nothing to keep: the command holds no
	// capabilities, and no longer has CAP_SETPCAP to change any of it;
	// the locks make that hold even where it would).
	secureBits          = 1<<0 | 1<<1 | 1<<6 | 1<<7 | 1<<3 | 1<<5
	openTreeClone       = 1
	atRecursive         = 0x8000
	atEmptyPath         = 0x1000
	moveMountFEmptyPath = 0x4
	mountAttrRdonly     = 0x1
	mountAttrNosuid     = 0x2
	mountAttrNodev      = 0x4
	mountAttrNoexec     = 0x8
)

// run applies the sandbox and execs the command; it returns only on
// failure, and then the command has not run.
func run(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("usage: " + Arg + " <path> -- <argv…>")
	}
	path, argv := args[0], args[2:]
	if err := dropTerminal(); err != nil {
		return err
	}
	fd, err := strconv.Atoi(os.Getenv(EnvFD))
	if err != nil || fd < 3 {
		return errors.New("no Landlock ruleset was passed")
	}
	// Descriptors ama-rpc inherited from its own parent without
	// close-on-exec (a host's pipes and sockets) reach this process too:
	// none of them may reach the command. Those below the ruleset's are
	// the ones the caller passed on purpose (exec.Cmd.ExtraFiles). A
	// pre-started launcher, which outlives many commands, closes them
	// (a host waiting for a pipe's end would otherwise wait for it).
	_, zygoteMode := os.LookupEnv(EnvZygote)
	if err := strays(fd+1, zygoteMode); err != nil {
		return err
	}
	syscall.CloseOnExec(fd)
	flags, _ := strconv.ParseUint(os.Getenv(EnvFlags), 10, 32)
	ns := os.Getenv(EnvNamespaces)
	plan := os.Getenv(EnvMounts)
	filter, err := hex.DecodeString(os.Getenv(EnvSeccomp))
	if err != nil || len(filter)%8 != 0 {
		return errors.New("bad seccomp filter")
	}
	var sweep []string
	if s := os.Getenv(EnvSweep); s != "" {
		sweep = strings.Split(s, "\n")
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !isOurs(kv) {
			env = append(env, kv)
		}
	}
	runtime.LockOSThread() // never unlocked: this thread forks or execs
	if ns != "" {
		// The working directory is re-entered through the jail's mounts
		// (the one inherited is the old, now read-only view).
		wd, err := syscall.Getwd()
		if err != nil {
			return errors.New("working directory: " + err.Error())
		}
		if err := runPlan(plan); err != nil {
			return err
		}
		if err := syscall.Chdir(wd); err != nil {
			return errors.New("working directory " + wd + " in the sandbox: " + err.Error())
		}
		if err := addRules(fd, os.Getenv(EnvRules)); err != nil {
			return err
		}
	}
	// In the jail the launcher's capabilities count in its user namespace
	// only, and as the namespace's init it keeps its own (it restores
	// guarded paths the command changed); without namespaces they are
	// the host's, and it keeps none.
	if err := dropCapabilities(ns != ""); err != nil {
		return err
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return errors.New("no_new_privs: " + e.Error())
	}
	if len(filter) > 0 {
		prog := struct {
			n      uint16
			filter unsafe.Pointer
		}{uint16(len(filter) / 8), unsafe.Pointer(&filter[0])}
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetSeccomp, seccompModeFilter, uintptr(unsafe.Pointer(&prog))); e != 0 {
			return errors.New("seccomp: " + e.Error())
		}
		runtime.KeepAlive(filter)
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(fd), uintptr(flags), 0); e != 0 {
		return errors.New("landlock_restrict_self: " + e.Error())
	}
	_ = syscall.Close(fd)
	if z, err := strconv.Atoi(os.Getenv(EnvZygote)); err == nil && ns == "pid" {
		return runZygote(z, fd, sweep)
	}
	if ns == "pid" {
		return initProcess(path, argv, env, fd, sweep)
	}
	return errors.New("exec " + path + ": " + syscall.Exec(path, argv, env).Error())
}

// dropCapabilities makes sure the command holds no capability, whatever
// its uid: it empties the bounding set (exec can grant nothing from it, a
// file's capabilities included), clears the ambient and inheritable sets,
// and sets secureBits (uid 0 gains nothing at exec, locked). Unless keep,
// it also empties this process's own sets, so that nothing between here
// and the exec holds one either. Without namespaces, ama-rpc as root (in
// a container, where user namespaces are refused) would otherwise hand
// root's capabilities to the command, and Landlock does not restrict what
// they allow through system calls (init_module, kexec_load, reboot, bpf,
// raw network configuration, open_by_handle_at, syslog, sethostname…).
//
// Emptying the bounding set and setting securebits need CAP_SETPCAP. A
// process without it (any non-root user) gets EPERM: that is accepted
// only when its permitted set is empty, so there is nothing to hand on
// (no_new_privs then stops setuid and file capabilities at exec); one
// that holds capabilities but cannot drop them fails closed.
func dropCapabilities(keep bool) error {
	hdr := struct {
		version uint32
		pid     int32
	}{capVersion3, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return errors.New("capabilities: " + e.Error())
	}
	none := data[0].permitted == 0 && data[1].permitted == 0
	unprivileged := func(what string, e syscall.Errno) error {
		if e == syscall.EPERM && none {
			return nil
		}
		return errors.New(what + ": " + e.Error())
	}
	// The highest capability is /proc/sys/kernel/cap_last_cap; past it
	// the kernel answers EINVAL (read no file: /proc may be another's).
	for c := uintptr(0); ; c++ {
		_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0)
		if e == syscall.EINVAL && c > 0 {
			break
		}
		if e != 0 {
			if err := unprivileged("drop capability "+strconv.Itoa(int(c))+" from the bounding set", e); err != nil {
				return err
			}
			break
		}
	}
	bits, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetSecurebits, 0, 0)
	if e != 0 {
		return errors.New("securebits: " + e.Error())
	}
	if bits|secureBits != bits {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetSecurebits, bits|secureBits, 0); e != 0 {
			if err := unprivileged("securebits", e); err != nil {
				return err
			}
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
		return errors.New("clear ambient capabilities: " + e.Error())
	}
	for i := range data {
		data[i].inheritable = 0
		if !keep {
			data[i].effective, data[i].permitted = 0, 0
		}
	}
	hdr.version, hdr.pid = capVersion3, 0 // capget may have rewritten them
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return errors.New("capabilities: " + e.Error())
	}
	return nil
}

// dropTerminal detaches this process from a controlling terminal it
// inherited, so that neither it nor anything it starts has one (/dev/tty
// cannot be opened, TIOCSTI and job control have no terminal to act on).
// A per-call launcher leads a session of its own and has none; a
// pre-started launcher stays in ama-rpc's session (a scheduling group
// less for each call to wake: the scheduler's autogroups are per session)
// and inherits ama-rpc's terminal, if any. TIOCNOTTY from a process that
// does not lead its session clears its own tie only (the kernel's
// no_tty: disassociate_ctty returns at once for a non-leader, then
// proc_clear_tty), and such a process can never acquire a terminal again
// (opening one or TIOCSCTTY need a session leader); its children inherit
// none. A leader is never detached here (that would hang up the terminal's
// foreground group): one with a terminal is refused. The result is checked
// in /proc/self/stat's tty_nr, the kernel's own record: still a terminal,
// the launcher fails and nothing runs.
func dropTerminal() error {
	nr, err := ttyNr()
	if err != nil || nr == 0 {
		return err
	}
	if sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0); int(sid) != syscall.Getpid() {
		if fd, err := syscall.Open("/dev/tty", syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0); err == nil {
			_, _, _ = syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCNOTTY, 0)
			_ = syscall.Close(fd)
		}
		if nr, err = ttyNr(); err != nil || nr == 0 {
			return err
		}
	}
	return errors.New("cannot drop the controlling terminal (tty " + strconv.Itoa(nr) + ")")
}

// ttyNr is the controlling terminal's device number from /proc/self/stat
// (its 7th field), 0 for none.
func ttyNr() (int, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, errors.New("controlling terminal: " + err.Error())
	}
	// The command name (2nd field) may hold spaces and parentheses: the
	// fields after it follow the last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 5 {
		return 0, errors.New("controlling terminal: bad /proc/self/stat")
	}
	return strconv.Atoi(f[4])
}

// initProcess is PID 1 of the command's namespace: it starts the command
// from this (sandboxed) thread, forwards the signals the parent sends to
// it, reaps orphans, and when the command ends kills what is left, removes
// the sweep entries the command created, and exits with the command's
// status (128+n when a signal ended it; 126 when a guard tripped or had to
// be restored).
func initProcess(path string, argv, env []string, rulesetFD int, sweep []string) error {
	guards := guardsOf(sweep)
	files := make([]uintptr, rulesetFD)
	for i := range files {
		files[i] = uintptr(i)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGTSTP)
	guards, trip, err := tripwire(guards, rulesetFD)
	if err != nil {
		return err
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: files})
	if err != nil {
		return errors.New("exec " + path + ": " + err.Error())
	}
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	code := 0
wait:
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return errors.New("wait: " + err.Error())
		}
		if got != pid {
			continue
		}
		code = exitCode(ws)
		break wait
	}
	// Nothing the command started may outlive it (or race the sweep).
	_ = syscall.Kill(-1, syscall.SIGKILL)
	for {
		if _, err := syscall.Wait4(-1, nil, 0, nil); err == syscall.ECHILD {
			break
		}
	}
	p := trip()
	for _, g := range guards {
		if g.restore() {
			os.Stderr.WriteString("ama-rpc sandbox: restored " + g.path + ", which the command changed (it would redirect git, ama-rpc or an agent outside the sandbox; what it made there is kept as " + g.path + AsideSuffix + "…)\n")
			// A plant as the command's last act, before the tripwire
			// read its event: the command failed all the same (as the
			// pre-started launcher's reap reports it).
			if p == "" {
				p = g.path
			}
		}
	}
	if p != "" {
		os.Stderr.WriteString("ama-rpc sandbox: the command was stopped when it created or replaced " + p + "\n")
		os.Exit(126)
	}
	os.Exit(code)
	return nil
}

// guard is a protected path the mounts cannot pin: one that does not exist
// (it must stay missing: .git/commondir) or a symbolic link (it must stay
// the same link: a .ama or .git/hooks link inside the project; its target
// is bound read-only by OpRO). Existing files and directories need no
// guard: they are read-only mount points, which cannot be removed or
// renamed.
type guard struct {
	path, link string // link: the target when path is a symbolic link
}

func guardsOf(paths []string) []guard {
	var out []guard
	for _, p := range paths {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			out = append(out, guard{path: p})
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(p); err == nil {
				out = append(out, guard{path: p, link: t})
			}
		}
	}
	return out
}

// broken reports whether the guarded path changed.
func (g guard) broken() bool {
	if g.link == "" {
		_, err := os.Lstat(g.path)
		return err == nil
	}
	t, err := os.Readlink(g.path)
	return err != nil || t != g.link
}

// firstBroken is the path of the first guard of gs whose path changed, or
// "".
func firstBroken(gs []guard) string {
	for _, g := range gs {
		if g.broken() {
			return g.path
		}
	}
	return ""
}

// restore undoes a change: it moves what was created aside (removes it
// when no name is free) and puts a link back. It reports whether there was
// anything to undo. Aside, not removed: the guard cannot tell who made the
// path, and a .env the user or an approved write tool made outside while a
// sandboxed job ran must not be lost; the names aside are read by none of
// the programs a guard protects (git, ama-rpc, the agent CLIs).
func (g guard) restore() bool {
	if !g.broken() {
		return false
	}
	if _, err := os.Lstat(g.path); err == nil && !moveAside(g.path) {
		if err := os.RemoveAll(g.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	if g.link != "" {
		return os.Symlink(g.link, g.path) == nil
	}
	return true
}

// moveAside renames p to the first free of p.ama-removed, p.ama-removed-2
// … -9. It runs once every process of the command is gone.
func moveAside(p string) bool {
	for i := 1; i <= 9; i++ {
		q := p + AsideSuffix
		if i > 1 {
			q += "-" + strconv.Itoa(i)
		}
		if _, err := os.Lstat(q); err == nil {
			continue
		}
		if os.Rename(p, q) == nil {
			return true
		}
	}
	return false
}

// tripwire watches the directories of the guards (inotify: entries
// created, moved in or out, deleted): the moment a guarded path changes,
// every process of the namespace is killed, so a git or ama-rpc outside
// the sandbox can follow it only for the microseconds between the change
// and the kill, and nothing the command would do next happens (restore
// then undoes it). After each batch of events, and on a queue overflow,
// the guards themselves are checked, so a flood of other events hides
// nothing. It returns the guards it could watch (a guard whose directory
// does not exist is dropped: a .git the command makes with git init is
// its own), and a function naming the path that tripped it, or "". The
// inotify descriptor is close-on-exec and numbered at or above minFD (the
// command inherits the descriptors below it).
func tripwire(guards []guard, minFD int) ([]guard, func() string, error) {
	var tripped atomic.Value
	tripped.Store("")
	get := func() string { return tripped.Load().(string) }
	if len(guards) == 0 {
		return nil, get, nil
	}
	ifd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		return nil, nil, errors.New("inotify: " + err.Error())
	}
	if ifd < minFD {
		nfd, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(ifd), syscall.F_DUPFD_CLOEXEC, uintptr(minFD))
		_ = syscall.Close(ifd)
		if e != 0 {
			return nil, nil, errors.New("inotify: " + e.Error())
		}
		ifd = int(nfd)
	}
	var watched []guard
	for _, g := range guards {
		dir := g.path[:strings.LastIndexByte(g.path, '/')+1]
		if _, err := syscall.InotifyAddWatch(ifd, dir, syscall.IN_CREATE|syscall.IN_MOVED_TO|syscall.IN_MOVED_FROM|
			syscall.IN_DELETE|syscall.IN_ONLYDIR|syscall.IN_DONT_FOLLOW); err == nil {
			watched = append(watched, g)
		}
	}
	if len(watched) == 0 {
		_ = syscall.Close(ifd)
		return nil, get, nil
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := syscall.Read(ifd, buf)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				return
			}
			if p := firstBroken(watched); p != "" {
				tripped.Store(p)
				_ = syscall.Kill(-1, syscall.SIGKILL)
				return
			}
		}
	}()
	return watched, get, nil
}

// addRules adds EnvRules to the ruleset: for each line, the access mask on
// the tree at the path (missing paths are skipped).
func addRules(ruleset int, rules string) error {
	for _, line := range strings.Split(rules, "\n") {
		mask, p, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		m, err := strconv.ParseUint(mask, 10, 64)
		if err != nil {
			return errors.New("bad Landlock rule " + strconv.Quote(line))
		}
		fd, err := syscall.Open(p, oPath|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		// struct landlock_path_beneath_attr is packed: u64, s32.
		var attr [12]byte
		*(*uint64)(unsafe.Pointer(&attr[0])) = m
		*(*int32)(unsafe.Pointer(&attr[8])) = int32(fd)
		_, _, e := syscall.Syscall6(sysLandlockAddRule, uintptr(ruleset), landlockRulePathBeneath, uintptr(unsafe.Pointer(&attr[0])), 0, 0, 0)
		_ = syscall.Close(fd)
		if e != 0 {
			return errors.New("landlock_add_rule " + p + ": " + e.Error())
		}
	}
	return nil
}

func isOurs(kv string) bool {
	for _, k := range Envs {
		if strings.HasPrefix(kv, k+"=") {
			return true
		}
	}
	return false
}

// runPlan executes the jail plan (see the Op constants).
func runPlan(plan string) error {
	st := &jailState{clones: map[string]clone{}, tmpfs: map[string]bool{}}
	for _, line := range strings.Split(plan, "\n") {
		if line == "" {
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		args, err := unquote(rest)
		if err != nil {
			return errors.New("bad jail plan line " + strconv.Quote(line))
		}
		if err := step(op, args, st); err != nil {
			return errors.New(op + " " + strings.Join(args, " ") + ": " + err.Error())
		}
	}
	for _, c := range st.clones {
		if c.fd >= 0 {
			_ = syscall.Close(c.fd)
		}
	}
	return nil
}

type jailState struct {
	clones map[string]clone
	tmpfs  map[string]bool // the tmpfs layers mounted (OpSeal seals only these)
}

type clone struct {
	fd  int
	dir bool
}

func step(op string, a []string, js *jailState) error {
	clones := js.clones
	need := map[string]int{OpPrivate: 0, OpClone: 2, OpCloneRO: 2, OpReadOnlyAll: 1, OpTmpfs: 2, OpAttach: 2,
		OpMkdir: 1, OpPlaceholder: 2, OpRO: 1, OpHide: 2, OpProc: 0, OpSeal: 1, OpSealScaffold: 1, OpDev: -1}
	if n, ok := need[op]; !ok || n >= 0 && len(a) != n {
		return errors.New("unknown operation or wrong operands")
	}
	switch op {
	case OpPrivate:
		return syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "")
	case OpClone, OpCloneRO:
		fd, err := openTree(a[1], 0)
		if errors.Is(err, syscall.ENOENT) {
			clones[a[0]] = clone{fd: -1}
			return nil
		}
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return err
		}
		// nodev like the rest of the tree (OpReadOnlyAll): a device
		// node in a project (a chroot, a root file system being built)
		// reaches the host's device.
		attrs := uintptr(mountAttrNodev)
		if op == OpCloneRO {
			attrs |= mountAttrRdonly
		}
		if err := setattr(fd, "", atEmptyPath|atRecursive, attrs); err != nil {
			return err
		}
		clones[a[0]] = clone{fd: fd, dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR}
	case OpReadOnlyAll:
		return setattr(atFDCWD, a[0], atRecursive, mountAttrRdonly|mountAttrNosuid|mountAttrNodev)
	case OpTmpfs:
		if !isDir(a[0]) && js.mountPoint(a[0], true, 0o755) != nil {
			return nil // nothing to cover; mount points below are made in what covers it
		}
		js.tmpfs[a[0]] = true
		return syscall.Mount("tmpfs", a[0], "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode="+a[1])
	case OpAttach:
		c, ok := clones[a[0]]
		if !ok {
			return errors.New("no such clone")
		}
		if c.fd < 0 {
			return nil
		}
		if err := js.mountPoint(a[1], c.dir, 0o755); err != nil {
			return err
		}
		err := moveMount(c.fd, a[1])
		_ = syscall.Close(c.fd)
		clones[a[0]] = clone{fd: -1}
		return err
	case OpMkdir:
		// Missing parent or a .git file (ENOTDIR): nothing to protect.
		if err := os.Mkdir(a[0], 0o755); err != nil && !errors.Is(err, os.ErrExist) &&
			!errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTDIR) {
			return err
		}
	case OpPlaceholder:
		// Not fatal: a name a command blocked (a directory at the
		// temporary name) must not turn the sandbox off; the path then
		// stays missing and the init's guard (EnvSweep) watches it.
		_ = placeholder(a[0], a[1])
		return nil
	case OpRO:
		fi, err := os.Lstat(a[0])
		if err != nil {
			return nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			// A mount cannot hang on a link: its target is bound
			// read-only (made when missing, so nothing can be put
			// there), and the link itself is guarded (EnvSweep).
			target := a[0]
			for i := 0; i < 40; i++ {
				t, err := os.Readlink(target)
				if err != nil {
					break
				}
				if !strings.HasPrefix(t, "/") {
					t = target[:strings.LastIndexByte(target, '/')+1] + t
				}
				target = t
			}
			if _, err := os.Lstat(target); errors.Is(err, os.ErrNotExist) {
				_ = os.MkdirAll(target, 0o755)
			}
			if _, err := os.Stat(target); err != nil {
				return nil // out of reach (a loop, or outside the writable trees)
			}
			return readOnlyOver(target, target, atRecursive)
		}
		return readOnlyOver(a[0], a[0], atRecursive)
	case OpHide:
		var st syscall.Stat_t
		if err := syscall.Stat(a[0], &st); err != nil {
			// Hidden by a tmpfs layer already (HOME): a stand-in nobody
			// may open makes it fail as refused, not as missing.
			if len(a) == 2 && (a[1] == "dir" || a[1] == "file") {
				_ = js.mountPoint(a[0], a[1] == "dir", 0)
			}
			return nil
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			return syscall.Mount("tmpfs", a[0], "tmpfs",
				syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=000,size=4k")
		}
		return readOnlyOver("/dev/null", a[0], 0)
	case OpProc:
		return syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	case OpDev:
		return buildDev(a)
	case OpSealScaffold:
		if !isDir(a[0]) {
			return nil
		}
		// The top mount only: the trees mounted in it stay writable.
		return readOnlyOver(a[0], a[0], 0)
	case OpSeal:
		if !js.tmpfs[a[0]] {
			return nil
		}
		return setattr(atFDCWD, a[0], 0, mountAttrRdonly|mountAttrNosuid|mountAttrNodev)
	}
	return nil
}

// buildDev is OpDev: a /dev of the jail's own over the host's, holding
// binds of the named host nodes, a devpts of its own, a private /dev/shm
// and the /proc/self/fd links.
func buildDev(nodes []string) error {
	// The host's nodes are taken while its /dev is in view: detached
	// binds, read-only, nosuid, noexec, and not nodev (OpReadOnlyAll made
	// the host's /dev nodev, which a user namespace may lift: only what
	// was nodev when the namespace was made is locked).
	type bind struct {
		name string
		fd   int
	}
	var binds []bind
	defer func() {
		for _, b := range binds {
			_ = syscall.Close(b.fd)
		}
	}()
	for _, n := range nodes {
		if n == "" || n == "." || n == ".." || strings.ContainsRune(n, '/') {
			return errors.New("bad device name " + strconv.Quote(n))
		}
		fd, err := openTree("/dev/"+n, 0)
		if errors.Is(err, syscall.ENOENT) {
			continue
		}
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR && st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
			_ = syscall.Close(fd)
			continue
		}
		binds = append(binds, bind{n, fd})
		if err := mountAttrs(fd, "", atEmptyPath|atRecursive, mountAttrRdonly|mountAttrNosuid|mountAttrNoexec, mountAttrNodev); err != nil {
			return err
		}
	}
	if err := syscall.Mount("tmpfs", "/dev", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, b := range binds {
		p := "/dev/" + b.name
		fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		_ = syscall.Close(fd)
		if err := moveMount(b.fd, p); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("devpts", "/dev/pts", "devpts", syscall.MS_NOSUID|syscall.MS_NOEXEC,
		"newinstance,ptmxmode=0666,mode=0620"); err != nil {
		// No pseudo terminals then, but not the user's either.
		if err := syscall.Mount("tmpfs", "/dev/pts", "tmpfs",
			syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=000,size=4k"); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/dev/shm", 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", "/dev/shm", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err != nil {
		return err
	}
	for _, l := range [][2]string{{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
		{"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}} {
		if err := os.Symlink(l[1], "/dev/"+l[0]); err != nil {
			return err
		}
	}
	// Nothing more is made in it.
	return setattr(atFDCWD, "/dev", 0, mountAttrRdonly|mountAttrNosuid|mountAttrNodev|mountAttrNoexec)
}

func isDir(p string) bool {
	var st syscall.Stat_t
	return syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR
}

const atFDCWD = -100

// cwdFD is AT_FDCWD as a variable (a negative constant cannot become a uintptr).
var cwdFD = atFDCWD

// mountPoint creates a missing mount point (with mode): a directory, or an
// empty file for a file mount.
func (js *jailState) mountPoint(p string, dir bool, mode uint32) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	parent := p[:strings.LastIndexByte(p, '/')+1]
	if dir {
		parent = p
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if dir {
		return syscall.Chmod(p, mode)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(mode))
	if err != nil {
		return err
	}
	return f.Close()
}

// readOnlyOver clones the mount tree at src, makes it read-only (the top
// mount only, or with atRecursive every mount below it too) and moves the
// clone over dst.
func readOnlyOver(src, dst string, recursive uintptr) error {
	fd, err := openTree(src, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := setattr(fd, "", atEmptyPath|recursive, mountAttrRdonly); err != nil {
		return err
	}
	return moveMount(fd, dst)
}

func openTree(p string, extra uintptr) (int, error) {
	b, err := syscall.BytePtrFromString(p)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.Syscall(sysOpenTree, uintptr(cwdFD), uintptr(unsafe.Pointer(b)),
		openTreeClone|syscall.O_CLOEXEC|atRecursive|extra)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func moveMount(fd int, to string) error {
	empty, _ := syscall.BytePtrFromString("")
	b, err := syscall.BytePtrFromString(to)
	if err != nil {
		return err
	}
	if _, _, e := syscall.Syscall6(sysMoveMount, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(cwdFD), uintptr(unsafe.Pointer(b)), moveMountFEmptyPath, 0); e != 0 {
		return e
	}
	return nil
}

// setattr is mount_setattr(2) setting attrs.
func setattr(dfd int, p string, flags, attrs uintptr) error {
	return mountAttrs(dfd, p, flags, attrs, 0)
}

// mountAttrs is mount_setattr(2) setting set and clearing clear.
func mountAttrs(dfd int, p string, flags, set, clear uintptr) error {
	b, err := syscall.BytePtrFromString(p)
	if err != nil {
		return err
	}
	attr := struct{ set, clr, propagation, userns uint64 }{set: uint64(set), clr: uint64(clear)}
	if _, _, e := syscall.Syscall6(sysMountSetattr, uintptr(dfd), uintptr(unsafe.Pointer(b)), flags,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0); e != 0 {
		return e
	}
	return nil
}

// unquote splits `"a" "b"` into its strings.
func unquote(s string) ([]string, error) {
	var out []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, err
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		s = s[len(q):]
	}
	return out, nil
}

// placeholder creates the missing file p with content: written under a
// temporary name, then linked into place (never replacing anything), so
// it appears whole. A missing or non-directory parent (no .git, a .git
// file) leaves nothing to protect.
func placeholder(p, content string) error {
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		return nil // exists (then OpRO protects it), or cannot be judged
	}
	if !isDir(p[:strings.LastIndexByte(p, '/')+1]) {
		return nil
	}
	tmp := p + ".ama-placeholder"
	_ = os.Remove(tmp) // a leftover (never followed: a link is removed itself)
	fd, err := syscall.Open(tmp, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	_, werr := syscall.Write(fd, []byte(content))
	cerr := syscall.Close(fd)
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		if err := syscall.Link(tmp, p); err != nil && err != syscall.EEXIST {
			werr = err
		}
	}
	_ = os.Remove(tmp)
	return werr
}

// strays marks every descriptor from min up that is not close-on-exec
// (so was inherited, not opened here) close-on-exec, or closes it.
func strays(min int, close bool) error {
	if !close {
		// close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11).
		const sysCloseRange, closeRangeCloexec = 436, 4
		if _, _, e := syscall.RawSyscall(sysCloseRange, uintptr(min), ^uintptr(0)>>32, closeRangeCloexec); e == 0 {
			return nil
		}
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return errors.New("list descriptors: " + err.Error())
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < min {
			continue
		}
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(n), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC != 0 {
			continue // gone (the listing's own), or opened here
		}
		if close {
			_ = syscall.Close(n)
		} else {
			syscall.CloseOnExec(n)
		}
	}
	return nil
}

// exitCode is a command's exit code as a shell reports it: its status, or
// 128+n when signal n ended it.
func exitCode(ws syscall.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 0
}

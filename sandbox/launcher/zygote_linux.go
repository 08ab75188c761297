//go:build linux

package launcher

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// zygoteMaxMsg is the largest control message.
const zygoteMaxMsg = 1 << 20

// started is a running command: its id and a copy of its stderr (for the
// tripwire's message; closed when it is reported).
type started struct {
	id     string
	stderr int
}

type zygote struct {
	ctl     int
	wmu     sync.Mutex // one writer on ctl at a time
	mu      sync.Mutex // guards running and stopped
	running map[int]started
	// stopped is the guarded path reap found changed (the tripwire had
	// not yet read its event): from then on no command starts, so none
	// can plant again between the restore and the launcher's exit.
	stopped string
	started chan struct{} // a command was started (wakes reap)
	guards  []guard
	tripped func() string // the tripwire's tripped path, or ""
}

// runZygote serves the control socket until it closes (ama-rpc ended or
// closed it), then kills what still runs and exits.
func runZygote(ctl int, minFD int, sweep []string) error {
	syscall.CloseOnExec(ctl) // inherited without: never a command's
	// Not dumpable: the commands (same uid) cannot ptrace it, open its
	// /proc entries or take its descriptors (pidfd_getfd).
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		return errors.New("dumpable: " + e.Error())
	}
	// As the PID namespace's init it only gets the signals it handles;
	// taking all of them into a drained channel means a command's kill
	// changes nothing (real faults still crash it, as they should).
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	go func() {
		for range sigs {
		}
	}()
	z := &zygote{ctl: ctl, running: map[int]started{}, started: make(chan struct{}, 1)}
	// The tripwire kills every process of the namespace but the zygote
	// (kill(-1) from its init): every running command.
	guards, trip, err := tripwire(guardsOf(sweep), minFD)
	if err != nil {
		return err
	}
	z.guards, z.tripped = guards, trip
	go z.reap()
	buf := make([]byte, zygoteMaxMsg)
	oob := make([]byte, syscall.CmsgSpace(3*4))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(ctl, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		var fds []int
		if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				if f, err := syscall.ParseUnixRights(&m); err == nil {
					fds = append(fds, f...)
				}
			}
		}
		z.handle(strings.Split(string(buf[:n]), "\x00"), fds)
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
	}
	z.mu.Lock()
	for pid := range z.running {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	z.mu.Unlock()
	os.Exit(0)
	return nil
}

func (z *zygote) send(fields ...string) { z.sendFD(-1, fields...) }

// sendFD sends fields with descriptor fd (none when negative).
func (z *zygote) sendFD(fd int, fields ...string) {
	var oob []byte
	if fd >= 0 {
		oob = syscall.UnixRights(fd)
	}
	z.wmu.Lock()
	defer z.wmu.Unlock()
	_ = syscall.Sendmsg(z.ctl, []byte(strings.Join(fields, "\x00")), oob, nil, 0)
}

func (z *zygote) handle(f []string, fds []int) {
	switch {
	case len(f) >= 5 && f[0] == "run":
		id := f[1]
		argc, err := strconv.Atoi(f[4])
		if err != nil || argc < 1 || 5+argc > len(f) || len(fds) < 3 || len(fds) > 4 {
			z.send("error", id, "bad run request")
			return
		}
		files := make([]uintptr, len(fds))
		for i, fd := range fds {
			files[i] = uintptr(fd)
		}
		argv, env := f[5:5+argc], f[5+argc:]
		// Fresh PID namespace (the command is its init: what it starts
		// ends with it) and process group (kill reaches all of it), in
		// the zygote's session, which is ama-rpc's: no controlling
		// terminal (the zygote dropped it, dropTerminal), and no way to
		// one: not leading the session, the command can acquire none,
		// and leading its group, it cannot setsid. A session a child of
		// it makes starts without one, as the command's own did, and
		// the user's pseudo terminals are not in the jail's devpts. A
		// session of its own would cost each call a scheduling group
		// more to wake (the kernel's autogroups are per session). The
		// seccomp filter, Landlock domain, no_new_privs and securebits
		// are the zygote's, inherited.
		// The pidfd goes to ama-rpc with "started": it names the
		// command by its pid there (this PID namespace's numbers mean
		// nothing outside).
		pidfd := -1
		attr := &syscall.ProcAttr{Dir: f[3], Env: env, Files: files,
			Sys: &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL, PidFD: &pidfd}}
		z.mu.Lock()
		p := z.tripped()
		if p == "" {
			p = z.stopped
		}
		if p != "" {
			z.mu.Unlock()
			z.send("error", id, "tripped: the sandbox launcher was stopped when a command created or replaced "+p)
			return
		}
		pid, err := syscall.ForkExec(f[2], argv, attr)
		if err != nil {
			z.mu.Unlock()
			z.send("error", id, "exec "+f[2]+": "+err.Error())
			return
		}
		errFD, derr := syscall.Dup(fds[2])
		if derr != nil {
			errFD = -1
		} else {
			syscall.CloseOnExec(errFD)
		}
		z.running[pid] = started{id: id, stderr: errFD}
		// "started" goes out before the reaper can look the command up
		// (under mu): a command that trips the launcher at once would
		// otherwise be reported ended, and the launcher gone (os.Exit
		// after a trip), before ama-rpc heard it started; its start
		// failed and Start ran it again on a new launcher.
		z.sendFD(pidfd, "started", id)
		z.mu.Unlock()
		select {
		case z.started <- struct{}{}:
		default:
		}
		if pidfd >= 0 {
			_ = syscall.Close(pidfd)
		}
	case len(f) == 3 && f[0] == "kill":
		sig, err := strconv.Atoi(f[2])
		if err != nil || sig <= 0 || sig > 64 {
			return
		}
		z.mu.Lock()
		for pid, s := range z.running {
			if s.id == f[1] {
				_ = syscall.Kill(-pid, syscall.Signal(sig)) // its group (Setpgid)
				_ = syscall.Kill(pid, syscall.Signal(sig))
			}
		}
		z.mu.Unlock()
	}
}

// reap waits for every child (commands and what their namespaces leave
// to it) and reports the commands' ends; after a trip, once nothing runs,
// the guards are restored.
func (z *zygote) reap() {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, 0, &ru)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ECHILD {
			<-z.started // no child: wait for the next start
			continue
		}
		if err != nil {
			return
		}
		trippedBy := z.tripped()
		if trippedBy == "" {
			// The tripwire reads its events asynchronously: a command
			// that plants a guarded path as its last act may end before
			// the event is read. The guards are checked here, before
			// the end is reported, so ama-rpc never starts anything
			// (git, an external agent) while a planted path stands.
			if trippedBy = firstBroken(z.guards); trippedBy != "" {
				_ = syscall.Kill(-1, syscall.SIGKILL) // as the tripwire does
			}
		}
		z.mu.Lock()
		s, ok := z.running[pid]
		delete(z.running, pid)
		if trippedBy != "" && z.stopped == "" {
			z.stopped = trippedBy
		}
		empty := len(z.running) == 0
		z.mu.Unlock()
		tripped := trippedBy != ""
		if !ok {
			continue
		}
		code := exitCode(ws)
		if tripped {
			code = 126
		}
		if tripped && s.stderr >= 0 {
			_, _ = syscall.Write(s.stderr, []byte("ama-rpc sandbox: the command was stopped when it created or replaced "+trippedBy+"\n"))
		}
		if s.stderr >= 0 {
			_ = syscall.Close(s.stderr)
		}
		if tripped && empty {
			for _, g := range z.guards {
				g.restore()
			}
		}
		// The command's CPU time (its namespace's, as their init reaped
		// them) goes with it: only this process, its parent, learns it.
		cpu := (ru.Utime.Nano() + ru.Stime.Nano()) / 1000
		z.send("exit", s.id, strconv.Itoa(code), strconv.FormatInt(cpu, 10))
		if tripped && empty {
			// A tripped launcher serves no more commands: ama-rpc starts
			// a new one (its guards are taken afresh).
			os.Exit(0)
		}
	}
}

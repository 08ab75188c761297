//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/sandbox/launcher"
)

// ErrNoLauncher means the command cannot go through a pre-started
// launcher (no namespaces, a request too large for the control socket, the
// launcher could not start): start it with Wrap instead.
var ErrNoLauncher = errors.New("sandbox: no pre-started launcher for this command")

// maxLaunchers is how many pre-started launchers (one per session and
// policy) are kept; the least recently used idle one is ended first.
const maxLaunchers = 4

// zygote is a pre-started launcher (launcher.EnvZygote): the jail of one
// policy, built once, starting each command in a PID namespace and session
// of its own.
type zygote struct {
	key string
	tmp string // the policy's private temp directory: its session
	cmd *exec.Cmd
	// ctl is the control socket, non-blocking in Go's network poller:
	// the reader goroutine parks instead of holding a thread in
	// recvmsg, so a reply wakes it and the waiting call without a
	// hand-off between threads (a wake-up less per message on a loaded
	// machine).
	ctl  *os.File
	rc   syscall.RawConn
	wmu  sync.Mutex    // one writer on ctl
	errb syncBuffer    // the launcher's stderr
	gone chan struct{} // closed when the launcher was reaped

	mu      sync.Mutex // guards the fields below
	starts  map[string]chan startReply
	exits   map[string]chan exitReply
	dead    error
	next    uint64
	used    uint64 // last use (Runtime.zclock), for eviction
	running int
}

// startReply is the launcher's answer to "run": the command's pid in
// ama-rpc's PID namespace (0: unknown), or why it did not start.
type startReply struct {
	pid int
	err error
}

// exitReply is the launcher's "exit": the command's exit code and CPU
// time (user+system, its reaped descendants included).
type exitReply struct {
	code int
	cpu  time.Duration
}

// Proc is a command started by a pre-started launcher.
type Proc struct {
	z    *zygote
	id   string
	pid  int
	exit chan exitReply
	cpu  time.Duration
}

// PID is the command's process id as ama-rpc sees it (0 when the kernel
// gave no pidfd to learn it from).
func (p *Proc) PID() int { return p.pid }

// Wait waits for the command (and, as its PID namespace's init, everything
// it started) to end and returns its exit code: 128+n when signal n ended
// it, 126 when the sandbox stopped it. An error means the launcher died.
func (p *Proc) Wait() (int, error) {
	r, ok := <-p.exit
	if !ok {
		return -1, p.z.err()
	}
	p.cpu = r.cpu
	return r.code, nil
}

// CPU is the command's user+system time, known once Wait returned (the
// launcher reaps it, so it is in no rusage of ama-rpc's: make bench-sandbox
// charges it to the call).
func (p *Proc) CPU() time.Duration { return p.cpu }

// Signal sends sig to the command's process group (its session).
func (p *Proc) Signal(sig syscall.Signal) error {
	return p.z.send([]string{"kill", p.id, strconv.Itoa(int(sig))}, nil)
}

// Start runs argv (path resolved by the caller) in dir with env and the
// given standard files through the policy's pre-started launcher, starting
// it first when needed. ErrNoLauncher means: use Wrap.
func (c *Command) Start(path string, argv, env []string, dir string, stdin, stdout, stderr *os.File) (*Proc, error) {
	if c == nil || c.rt == nil {
		return nil, errors.New("sandbox: not active")
	}
	p := c.policy
	p.Namespaces = c.rt.status.Namespaces
	if !p.Namespaces {
		return nil, ErrNoLauncher
	}
	if env == nil {
		env = childenv.Environ(childenv.Policy{})
	}
	env = commandEnv(env, p)
	fds := []int{int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd())}
	for attempt := 0; ; attempt++ {
		z, err := c.rt.zygoteFor(p, env)
		if err != nil {
			return nil, err
		}
		pr, err := z.start(path, argv, env, dir, fds)
		if errors.Is(err, errRetired) && attempt == 0 {
			continue // tripped or ended meanwhile: a new launcher
		}
		// fds are these files' numbers: a file the caller holds no more
		// must not be closed by its finalizer before they were sent.
		runtime.KeepAlive(stdin)
		runtime.KeepAlive(stdout)
		runtime.KeepAlive(stderr)
		return pr, err
	}
}

// runAlone runs one command in a pre-started launcher of its own for p
// (not kept: the self-test's policy is nobody else's), the way every
// foreground command runs; extra becomes the command's descriptor 3. It returns
// the exit code and the combined output; ErrNoLauncher means: use Wrap.
func (r *Runtime) runAlone(p Policy, path string, argv, env []string, dir string, extra *os.File, timeout time.Duration) (int, string, error) {
	p.Namespaces = r.status.Namespaces
	if !p.Namespaces {
		return 0, "", ErrNoLauncher
	}
	lenv := childenv.Environ(childenv.Policy{})
	env = commandEnv(env, p)
	p.Sockets = jailSockets(p, lenv, env)
	z, err := r.startZygote(p, "", lenv)
	if err != nil {
		return 0, "", err
	}
	defer func() {
		z.close()
		<-z.gone
	}()
	null, err := openDevNull()
	if err != nil {
		return 0, "", err
	}
	defer null.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		return 0, "", err
	}
	defer rd.Close()
	fds := []int{int(null.Fd()), int(wr.Fd()), int(wr.Fd())}
	if extra != nil {
		fds = append(fds, int(extra.Fd()))
	}
	pr, err := z.start(path, argv, env, dir, fds)
	wr.Close()
	if err != nil {
		return 0, "", err
	}
	// Past the timeout the launcher is ended, and the command with it.
	t := time.AfterFunc(timeout, z.close)
	defer t.Stop()
	var out bytes.Buffer
	_, _ = io.Copy(&out, rd) // every writer is in its PID namespace
	code, err := pr.Wait()
	return code, out.String(), err
}

// errRetired: the launcher serves no more commands (its tripwire fired,
// or it ended).
var errRetired = errors.New("sandbox: the launcher was retired")

// commandEnv is what a sandboxed command gets: env without the launcher's
// variables, TMPDIR the private /tmp, the caches in the sandbox's cache.
func commandEnv(env []string, p Policy) []string {
	set := map[string]string{}
	if p.Tmp != "" {
		set["TMPDIR"] = "/tmp"
	}
	if p.Cache != "" {
		for k, sub := range cacheEnv {
			set[k] = filepath.Join(p.Cache, sub)
		}
	}
	out := overlayEnv(env, set)
	slices.Sort(out)
	return out
}

// zygoteFor returns the running launcher of p for a command with env,
// starting one when there is none. Its key is everything the jail is built
// from now (the plan with the sockets and HOME entries found now, the
// Landlock rules' inputs, the .git it pins): a policy whose world changed
// gets a new launcher. The sockets are found here, once, from the kernel's
// table, the launcher's own environment and the command's (a socket only
// the command's environment names is covered too), and the launcher is
// built from exactly that list.
func (r *Runtime) zygoteFor(p Policy, env []string) (*zygote, error) {
	lenv := childenv.Environ(childenv.Policy{})
	p.Sockets = jailSockets(p, lenv, env)
	key := strings.Join([]string{jailPlan(p, true), jailRules(p), r.launcher(), inodes(p.Pin), strconv.FormatBool(p.DenyNetwork),
		strings.Join(p.Write, "\n"), strings.Join(p.Hide, "\n"), strings.Join(p.HomeRead, "\n")}, "\x00")
	r.zmu.Lock()
	defer r.zmu.Unlock()
	r.zclock++
	for _, z := range r.zygotes {
		if z.key == key && z.err() == nil {
			z.mu.Lock()
			z.used = r.zclock
			z.mu.Unlock()
			return z, nil
		}
	}
	// Drop dead launchers, then the least recently used idle ones.
	r.zygotes = slices.DeleteFunc(r.zygotes, func(z *zygote) bool { return z.err() != nil })
	for len(r.zygotes) >= maxLaunchers {
		victim := -1
		for i, z := range r.zygotes {
			z.mu.Lock()
			idle, used := z.running == 0, z.used
			z.mu.Unlock()
			if idle && (victim < 0 || used < r.zygotes[victim].used) {
				victim = i
			}
		}
		if victim < 0 {
			return nil, ErrNoLauncher // all busy: start this one with Wrap
		}
		r.zygotes[victim].close()
		r.zygotes = slices.Delete(r.zygotes, victim, victim+1)
	}
	z, err := r.startZygote(p, key, lenv)
	if err != nil {
		return nil, err
	}
	z.used = r.zclock
	r.zygotes = append(r.zygotes, z)
	return z, nil
}

// inodes identifies the directories the jail pins (a .git replaced
// between two commands gets a new launcher).
func inodes(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) == nil {
			fmt.Fprintf(&b, "%d:%d ", st.Dev, st.Ino)
		}
	}
	return b.String()
}

// startZygote starts the launcher of p (p.Sockets final) with env.
func (r *Runtime) startZygote(p Policy, key string, env []string) (*zygote, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: launcher socket: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "sandbox-launcher-control")
	defer child.Close()
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		return nil, fmt.Errorf("sandbox: launcher socket: %w", err)
	}
	ctl := os.NewFile(uintptr(fds[0]), "sandbox-launcher-control")
	rc, err := ctl.SyscallConn()
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("sandbox: launcher socket: %w", err)
	}
	z := &zygote{key: key, tmp: p.Tmp, ctl: ctl, rc: rc, starts: map[string]chan startReply{}, exits: map[string]chan exitReply{}, gone: make(chan struct{})}
	cmd := exec.Command("/bin/true") // the launcher's own argv; commands come over ctl
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{child} // descriptor 3
	// The launcher's own directory: "/", which every jail has. ama-rpc's
	// directory may not exist inside (a private /tmp hides a checkout
	// under /tmp); each command gets its own directory over ctl.
	cmd.Dir = "/"
	cmd.Stderr = &z.errb
	release, err := r.wrap(cmd, p, true)
	if err != nil {
		ctl.Close()
		return nil, err
	}
	cmd.Env = append(cmd.Env, launcher.EnvZygote+"=3")
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// In ama-rpc's session, not one of its own (setupProc's): the
	// scheduler's autogroups are per session, and each call wakes this
	// launcher and its command, which in sessions of their own waited on
	// a loaded machine behind every other group's slice (3-7x a bare
	// call's wall time; 1.5-2x in this one). It drops a controlling
	// terminal it inherits before anything else (launcher's
	// dropTerminal), so its commands have none and, as non-leaders, can
	// get none; its own process group keeps a Ctrl-C meant for ama-rpc's
	// group away from it and its commands.
	cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setpgid = false, true
	err = cmd.Start()
	release()
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("sandbox: start the launcher: %w", err)
	}
	z.cmd = cmd
	go z.read()
	return z, nil
}

// retire marks the launcher as serving no more commands (zygoteFor skips
// it), keeping the first reason.
func (z *zygote) retire() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.dead == nil {
		z.dead = errRetired
	}
}

func (z *zygote) err() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.dead
}

// read dispatches the launcher's messages until the socket ends, then
// fails what waits.
func (z *zygote) read() {
	buf := make([]byte, 4096)
	oob := make([]byte, syscall.CmsgSpace(4))
	for {
		var n, oobn int
		var err error
		if rerr := z.rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, err = syscall.Recvmsg(int(fd), buf, oob, syscall.MSG_CMSG_CLOEXEC)
			return err != syscall.EAGAIN
		}); rerr != nil && err == nil {
			err = rerr
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		pid := 0
		for _, fd := range receivedFDs(oob[:oobn]) {
			if pid == 0 {
				pid = pidOf(fd)
			}
			_ = syscall.Close(fd)
		}
		f := strings.Split(string(buf[:n]), "\x00")
		if len(f) < 2 {
			continue
		}
		z.mu.Lock()
		switch f[0] {
		case "started", "error":
			if ch := z.starts[f[1]]; ch != nil {
				delete(z.starts, f[1])
				switch {
				case f[0] == "started":
					ch <- startReply{pid: pid}
				case len(f) > 2 && strings.HasPrefix(f[2], "tripped: "):
					z.running--
					delete(z.exits, f[1])
					if z.dead == nil {
						z.dead = errRetired
					}
					ch <- startReply{err: errRetired}
				default:
					z.running--
					delete(z.exits, f[1])
					ch <- startReply{err: errors.New("sandbox: " + strings.Join(f[2:], " "))}
				}
			}
		case "exit":
			// A launcher built before the CPU field (a stale
			// ama-rpc-sandbox) sends three fields: its commands still end.
			if ch := z.exits[f[1]]; ch != nil && (len(f) == 3 || len(f) == 4) {
				delete(z.exits, f[1])
				z.running--
				r := exitReply{}
				r.code, _ = strconv.Atoi(f[2])
				if len(f) == 4 {
					us, _ := strconv.ParseInt(f[3], 10, 64)
					r.cpu = time.Duration(us) * time.Microsecond
				}
				ch <- r
			}
		}
		z.mu.Unlock()
	}
	_ = z.cmd.Wait()
	z.mu.Lock()
	msg := strings.TrimSpace(z.errb.String())
	if msg == "" {
		msg = z.cmd.ProcessState.String()
	}
	if z.dead == nil {
		z.dead = fmt.Errorf("%w: it ended: %s", errRetired, msg)
	}
	for id, ch := range z.starts {
		ch <- startReply{err: z.dead}
		delete(z.starts, id)
	}
	for id, ch := range z.exits {
		close(ch)
		delete(z.exits, id)
	}
	z.mu.Unlock()
	_ = z.ctl.Close()
	close(z.gone)
}

func (z *zygote) send(fields []string, fds []int) error {
	msg := []byte(strings.Join(fields, "\x00"))
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	z.wmu.Lock()
	defer z.wmu.Unlock()
	if err := z.err(); err != nil {
		return err
	}
	var err error
	if werr := z.rc.Write(func(fd uintptr) bool {
		err = syscall.Sendmsg(int(fd), msg, oob, nil, 0)
		return err != syscall.EAGAIN
	}); werr != nil && err == nil {
		// The socket was closed: read does that once the launcher
		// ended, possibly between the check above and the write (the
		// poller's "use of closed file" is no os.ErrClosed).
		err = fmt.Errorf("%w: %w", errRetired, werr)
	}
	return err
}

func (z *zygote) start(path string, argv, env []string, dir string, fds []int) (*Proc, error) {
	z.mu.Lock()
	if z.dead != nil {
		z.mu.Unlock()
		return nil, errRetired
	}
	z.next++
	id := strconv.FormatUint(z.next, 10)
	started, exit := make(chan startReply, 1), make(chan exitReply, 1)
	z.starts[id], z.exits[id] = started, exit
	z.running++
	z.mu.Unlock()
	fields := append([]string{"run", id, path, dir, strconv.Itoa(len(argv))}, argv...)
	if err := z.send(append(fields, env...), fds); err != nil {
		z.mu.Lock()
		delete(z.starts, id)
		delete(z.exits, id)
		z.running--
		z.mu.Unlock()
		if errors.Is(err, syscall.EMSGSIZE) || errors.Is(err, syscall.ENOBUFS) {
			return nil, ErrNoLauncher
		}
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, errRetired) || errors.Is(err, os.ErrClosed) {
			// The launcher is gone (a tripped one exits once its
			// commands ended) but read may not have seen the end yet:
			// marked here, Start's retry gets a new launcher from
			// zygoteFor instead of this one again.
			z.retire()
			return nil, errRetired
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	rep := <-started
	if rep.err != nil {
		return nil, rep.err
	}
	return &Proc{z: z, id: id, pid: rep.pid, exit: exit}, nil
}

// receivedFDs are the descriptors of a message's SCM_RIGHTS.
func receivedFDs(oob []byte) []int {
	var fds []int
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		if f, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

// close ends an idle launcher (the socket's end makes it exit).
func (z *zygote) close() {
	z.wmu.Lock()
	defer z.wmu.Unlock()
	// Through the RawConn: once the reader closed the socket, this is a
	// no-op rather than a shutdown of whatever reused its number.
	_ = z.rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
}

// CloseSession ends the pre-started launchers of the session whose
// project and output directories these are (both modes), with any command
// still running in them, and waits until they are gone. The session calls
// it when it closes, after its background jobs ended.
func (r *Runtime) CloseSession(project, output string) {
	if r == nil || r.base.Temp == "" {
		return
	}
	tmp := sessionTmp(r.base.Temp, project, output)
	r.zmu.Lock()
	var zs []*zygote
	r.zygotes = slices.DeleteFunc(r.zygotes, func(z *zygote) bool {
		if z.tmp == tmp {
			zs = append(zs, z)
			return true
		}
		return false
	})
	r.zmu.Unlock()
	for _, z := range zs {
		z.close()
	}
	for _, z := range zs {
		<-z.gone
	}
}

// CloseLaunchers ends every pre-started launcher (and with them any
// command still running in them) and waits until they are gone.
func (r *Runtime) CloseLaunchers() {
	if r == nil {
		return
	}
	r.zmu.Lock()
	zs := r.zygotes
	r.zygotes = nil
	r.zmu.Unlock()
	for _, z := range zs {
		z.close()
	}
	for _, z := range zs {
		<-z.gone
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.b) < 64<<10 {
		s.b = append(s.b, p...)
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// CloseLaunchers ends the pre-started launchers of the command's runtime.
func (c *Command) CloseLaunchers() {
	if c != nil && c.rt != nil {
		c.rt.CloseLaunchers()
	}
}

// StartCommand is Start for the bash tool (tools.CommandStarter): the same,
// returning the started command as an interface.
func (c *Command) StartCommand(path string, argv, env []string, dir string, stdin, stdout, stderr *os.File) (interface {
	Wait() (int, error)
	Signal(syscall.Signal) error
	PID() int
}, error) {
	p, err := c.Start(path, argv, env, dir, stdin, stdout, stderr)
	if err != nil {
		return nil, err
	}
	return p, nil
}

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
	"sync"
	"syscall"

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
	key  string
	cmd  *exec.Cmd
	ctl  int
	wmu  sync.Mutex    // one writer on ctl
	errb syncBuffer    // the launcher's stderr
	gone chan struct{} // closed when the launcher was reaped

	mu      sync.Mutex // guards the fields below
	starts  map[string]chan error
	exits   map[string]chan int
	dead    error
	next    uint64
	used    uint64 // last use (Runtime.zclock), for eviction
	running int
}

// Proc is a command started by a pre-started launcher.
type Proc struct {
	z    *zygote
	id   string
	exit chan int
}

// Wait waits for the command (and, as its PID namespace's init, everything
// it started) to end and returns its exit code: 128+n when signal n ended
// it, 126 when the sandbox stopped it. An error means the launcher died.
func (p *Proc) Wait() (int, error) {
	code, ok := <-p.exit
	if !ok {
		return -1, p.z.err()
	}
	return code, nil
}

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
		return pr, err
	}
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
	key := jailPlan(p, true) + "\x00" + jailRules(p) + "\x00" + r.launcher() + "\x00" + inodes(p.Pin) + "\x00" + fmt.Sprint(p.DenyNetwork, p.Write, p.Hide, p.HomeRead)
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
	z := &zygote{key: key, ctl: fds[0], starts: map[string]chan error{}, exits: map[string]chan int{}, gone: make(chan struct{})}
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
		syscall.Close(fds[0])
		return nil, err
	}
	cmd.Env = append(cmd.Env, launcher.EnvZygote+"=3")
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	err = cmd.Start()
	release()
	if err != nil {
		syscall.Close(fds[0])
		return nil, fmt.Errorf("sandbox: start the launcher: %w", err)
	}
	z.cmd = cmd
	go z.read()
	return z, nil
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
	for {
		n, _, _, _, err := syscall.Recvmsg(z.ctl, buf, nil, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
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
					ch <- nil
				case len(f) > 2 && strings.HasPrefix(f[2], "tripped: "):
					z.running--
					delete(z.exits, f[1])
					if z.dead == nil {
						z.dead = errRetired
					}
					ch <- errRetired
				default:
					z.running--
					delete(z.exits, f[1])
					ch <- errors.New("sandbox: " + strings.Join(f[2:], " "))
				}
			}
		case "exit":
			if ch := z.exits[f[1]]; ch != nil && len(f) == 3 {
				delete(z.exits, f[1])
				z.running--
				code, _ := strconv.Atoi(f[2])
				ch <- code
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
		ch <- z.dead
		delete(z.starts, id)
	}
	for id, ch := range z.exits {
		close(ch)
		delete(z.exits, id)
	}
	z.mu.Unlock()
	_ = syscall.Close(z.ctl)
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
	return syscall.Sendmsg(z.ctl, msg, oob, nil, 0)
}

func (z *zygote) start(path string, argv, env []string, dir string, fds []int) (*Proc, error) {
	z.mu.Lock()
	if z.dead != nil {
		z.mu.Unlock()
		return nil, errRetired
	}
	z.next++
	id := strconv.FormatUint(z.next, 10)
	started, exit := make(chan error, 1), make(chan int, 1)
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
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, errRetired) {
			return nil, errRetired
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := <-started; err != nil {
		return nil, err
	}
	return &Proc{z: z, id: id, exit: exit}, nil
}

// close ends an idle launcher (the socket's end makes it exit).
func (z *zygote) close() {
	z.wmu.Lock()
	defer z.wmu.Unlock()
	_ = syscall.Shutdown(z.ctl, syscall.SHUT_RDWR)
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
}, error) {
	p, err := c.Start(path, argv, env, dir, stdin, stdout, stderr)
	if err != nil {
		return nil, err
	}
	return p, nil
}

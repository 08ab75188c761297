//go:build linux

package launcher

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe" // ioctl arguments (TIOCSTI, TIOCGPTN, TIOCSPTLCK) are pointers
)

// CanaryArg is the hidden subcommand of the canary probes: the sandbox
// starts `<launcher> __sandbox-canary <probe>…` inside the real sandbox and
// each probe tries one thing the sandbox must refuse, printing
// "<name> refused <errno>", "<name> DONE" or, when it could not try,
// "<name> failed <why>". A probe is "<name>=<operand>":
//
//	write=<path>     create the file
//	chmod=<path>     chmod 0777
//	read=<path>      read the file (DONE only when it has content)
//	tcp=<port>       connect to 127.0.0.1:<port>
//	udp=<port>       send a datagram to 127.0.0.1:<port>
//	tiocsti=<tty>    become a session leader (in a child when this process
//	                 leads its process group), open the terminal (one of
//	                 its own when that one is out of reach), TIOCSTI
const CanaryArg = "__sandbox-canary"

func init() {
	if len(os.Args) >= 2 && os.Args[1] == CanaryArg {
		canary(os.Args[2:])
		os.Exit(0)
	}
}

func canary(probes []string) {
	for _, pr := range probes {
		name, arg, _ := strings.Cut(pr, "=")
		err := probe(name, arg)
		if err == nil {
			os.Stdout.WriteString(name + " DONE\n")
			continue
		}
		var nr notRun
		if errors.As(err, &nr) {
			// Neither refused nor done: the self-test fails.
			os.Stdout.WriteString(name + " failed " + err.Error() + "\n")
			continue
		}
		os.Stdout.WriteString(name + " refused " + err.Error() + "\n")
	}
}

func probe(name, arg string) error {
	switch name {
	case "write", "link": // link: a path through a link out of the project
		fd, err := syscall.Open(arg, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = syscall.Write(fd, []byte("canary\n"))
		syscall.Close(fd)
		return err
	case "chmod":
		return syscall.Chmod(arg, 0o777)
	case "read":
		b, err := os.ReadFile(arg)
		if err == nil && len(b) == 0 {
			return syscall.ENODATA
		}
		return err
	case "tcp", "udp":
		port, _ := strconv.Atoi(arg)
		typ := syscall.SOCK_STREAM
		if name == "udp" {
			typ = syscall.SOCK_DGRAM
		}
		fd, err := syscall.Socket(syscall.AF_INET, typ|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		to := &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
		if name == "udp" {
			return syscall.Sendto(fd, []byte("canary"), 0, to)
		}
		return syscall.Connect(fd, to)
	case "tiocsti":
		if sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0); int(sid) != syscall.Getpid() {
			if _, err := syscall.Setsid(); err == syscall.EPERM {
				// A command of the pre-started launcher leads its
				// process group, which cannot lead a session: the
				// probe runs again in a child, which can (as any
				// child of a command can).
				return inNewSession(name, arg)
			} else if err != nil {
				return err
			}
		}
		fd, err := syscall.Open(arg, syscall.O_RDWR, 0)
		if err != nil {
			// The jail's own devpts has no terminal of the outside: the
			// filter is tried on one made here.
			if fd, err = ownTerminal(); err != nil {
				return err
			}
		}
		defer syscall.Close(fd)
		c := byte('#')
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSTI, uintptr(unsafe.Pointer(&c))); e != 0 {
			return e
		}
		return nil
	}
	return syscall.EINVAL
}

// inNewSession runs probe name=arg in a child of this process (the same
// executable) that leads a session of its own, and returns its outcome.
func inNewSession(name, arg string) error {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return notRun{err}
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{os.Args[0], CanaryArg, name + "=" + arg},
		&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, uintptr(p[1]), 2}, Sys: &syscall.SysProcAttr{Setsid: true}})
	_ = syscall.Close(p[1])
	if err != nil {
		_ = syscall.Close(p[0])
		return notRun{err}
	}
	var out []byte
	buf := make([]byte, 256)
	for {
		n, err := syscall.Read(p[0], buf)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 {
			break
		}
		out = append(out, buf[:n]...)
	}
	_ = syscall.Close(p[0])
	for {
		if _, err := syscall.Wait4(pid, nil, 0, nil); err != syscall.EINTR {
			break
		}
	}
	switch line := strings.TrimSpace(string(out)); {
	case line == name+" DONE":
		return nil
	case strings.HasPrefix(line, name+" refused "):
		return errors.New(strings.TrimPrefix(line, name+" refused "))
	default:
		return notRun{errors.New("the probe in a new session reported " + strconv.Quote(line))}
	}
}

// notRun is a probe that could not try what it tests.
type notRun struct{ err error }

func (e notRun) Error() string { return e.err.Error() }

// ownTerminal opens a new pseudo terminal's terminal end (it becomes the
// controlling terminal of the session leader that opens it).
func ownTerminal() (int, error) {
	m, err := syscall.Open("/dev/ptmx", syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	// The end stays open with the probe's process (a closed master hangs
	// the terminal up).
	var n uint32
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(m), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		return -1, e
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(m), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		return -1, e
	}
	return syscall.Open("/dev/pts/"+strconv.FormatUint(uint64(n), 10), syscall.O_RDWR, 0)
}

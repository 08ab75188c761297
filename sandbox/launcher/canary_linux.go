//go:build linux

package launcher

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe" // ioctl arguments (TIOCSTI, TIOCGPTN, TIOCSPTLCK) are pointers
)

// CanaryArg is the hidden subcommand of the canary probes: the sandbox
// starts `<launcher> __sandbox-canary <probe>…` inside the real sandbox and
// each probe tries one thing the sandbox must refuse, printing
// "<name> refused <errno>" or "<name> DONE". A probe is "<name>=<operand>":
//
//	write=<path>     create the file
//	chmod=<path>     chmod 0777
//	read=<path>      read the file (DONE only when it has content)
//	tcp=<port>       connect to 127.0.0.1:<port>
//	udp=<port>       send a datagram to 127.0.0.1:<port>
//	tiocsti=<tty>    become a session leader, open the terminal (one of
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
		// A command of the pre-started launcher leads its session
		// already (setsid would fail with EPERM, not for the filter).
		if sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0); int(sid) != syscall.Getpid() {
			if _, err := syscall.Setsid(); err != nil {
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

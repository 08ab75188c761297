//go:build unix

package tools

import (
	"io"
	"syscall"
)

// walkFile is a regular file found by a walk, opened for reading with raw
// system calls: an *os.File would register each descriptor with the
// runtime poller (a failed epoll_ctl per file for O_NONBLOCK opens) and
// allocate, and grep opens every file of the tree.
type walkFile struct{ fd int }

// openWalkFile opens p as grep's walk found it: O_NONBLOCK|O_NOCTTY so
// that nothing blocks or becomes a terminal, O_NOFOLLOW unless follow is
// set (an entry the directory listed as a file must still not be a link
// when opened), then fstat on the descriptor: anything but a regular file
// is refused with ErrNotRegular before a byte is read. size is fstat's.
func openWalkFile(p string, follow bool) (f walkFile, size int64, err error) {
	if procEnviron(p) {
		return walkFile{}, 0, ErrProcEnviron
	}
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | openExtraFlags
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	var fd int
	for {
		fd, err = syscall.Open(p, flags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return walkFile{}, 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return walkFile{}, 0, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return walkFile{}, 0, ErrNotRegular
	}
	return walkFile{fd: fd}, st.Size, nil
}

func (f walkFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f walkFile) Close() error { return syscall.Close(f.fd) }

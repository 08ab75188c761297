//go:build linux

package store

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openAnon opens a new file without a name in dir (O_TMPFILE, mode 0600)
// for writeAnon, which links it under its name once written and synced.
// It fails with errNoAnon where that cannot work (a kernel or file system
// without O_TMPFILE, no /proc to link from).
func openAnon(dir string) (*os.File, error) {
	if !procFDs() {
		return nil, errNoAnon
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_APPEND|unix.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return nil, errNoAnon
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// linkAnon gives the file openAnon made its name; the error wraps
// fs.ErrExist if the name is taken (nothing is replaced).
func linkAnon(fd *os.File, path string) error {
	return linkProc(int(fd.Fd()), fd.Name(), path)
}

// linkProc gives the open file fd (old names it in errors) one more name,
// path, by link(2): linkat(fd, "", AT_EMPTY_PATH), which Linux 6.10 and
// later allow the file's opener without privilege, else through
// /proc/self/fd (a path walk of four names and a magic link the kernel
// resolves again for every link: about half of each link's CPU here).
// The same link either way: a taken name fails with EEXIST, a file
// without a name left (not O_TMPFILE) or a missing directory with ENOENT.
func linkProc(fd int, old, path string) error {
	if !noEmptyPathLink.Load() {
		err := unix.Linkat(fd, "", unix.AT_FDCWD, path, unix.AT_EMPTY_PATH)
		switch err {
		case nil:
			return nil
		case unix.ENOENT, unix.EPERM, unix.EINVAL:
			// ENOENT is also what a kernel before 6.10 answers without
			// CAP_DAC_READ_SEARCH: /proc tells which it was.
		default:
			return &os.LinkError{Op: "link", Old: old, New: path, Err: err}
		}
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
		if err != nil {
			return &os.LinkError{Op: "link", Old: old, New: path, Err: err}
		}
		noEmptyPathLink.Store(true) // /proc could, AT_EMPTY_PATH could not
		return nil
	}
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: old, New: path, Err: err}
	}
	return nil
}

// noEmptyPathLink is set once linkat's AT_EMPTY_PATH failed where
// /proc/self/fd linked the same file: an older kernel, or no privilege.
var noEmptyPathLink atomic.Bool

// procFDs reports whether /proc/self/fd is there to link from.
var procFDs = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// The files of a session's creation and lock (the lock file, the
// directory fsynced) are opened here with open(2) itself: os.OpenFile
// also asks the poller to watch every file it opens (fcntl twice,
// epoll_ctl, which refuses a regular file or a directory, fcntl twice
// again), five calls of eight for nothing (store BenchmarkCreateFork).

// createExcl creates path with O_EXCL (mode 0600) holding data and
// returns it open (for linkLock); a taken name fails with an error
// wrapping fs.ErrExist. A failed write removes the file again.
func createExcl(path string, data []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	n, err := unix.Write(fd, data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		unix.Close(fd)
		os.Remove(path)
		return -1, &os.PathError{Op: "write", Path: path, Err: err}
	}
	return fd, nil
}

// linkLock gives the open file fd one more name, path (linkProc: fails with an error wrapping fs.ErrExist if the name is
// taken, with another error if fd's file has no name left or lives on
// another file system).
func linkLock(fd int, path string) error {
	if !procFDs() {
		return errNoAnon
	}
	return linkProc(fd, "lock", path)
}

// dupFD returns a new descriptor of fd's file, -1 if it cannot.
func dupFD(fd int) int {
	if fd < 0 {
		return -1
	}
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return d
}

func closeFD(fd int) { unix.Close(fd) }

// holds reports whether the file at path holds exactly want (a lock's
// pid); false if it cannot be read.
func holds(path string, want []byte) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf := make([]byte, len(want)+1) // one byte more: a longer file is not want
	n := 0
	for n < len(buf) {
		k, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if k == 0 {
			break
		}
		n += k
	}
	return bytes.Equal(buf[:n], want)
}

// openDir opens a directory to fsync it.
func openDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// syncsNewName reports whether fd's file system is ext4 (or ext3, served
// by the same driver), where an fsync of a file that has just been given
// a name also makes the name durable (writeAnon says why); elsewhere the
// directory is fsynced as well. A device is looked up once: its type is
// the mount's in /proc/self/mountinfo (f_type cannot tell ext4 from the
// old ext2 driver, which syncs no parent); anything not found there
// counts as another file system.
func syncsNewName(fd *os.File) bool {
	var st unix.Stat_t
	if unix.Fstat(int(fd.Fd()), &st) != nil {
		return false
	}
	dev := uint64(st.Dev)
	devTypes.Lock()
	defer devTypes.Unlock()
	ext4, ok := devTypes.m[dev]
	if !ok {
		ext4 = mountIsExt4(unix.Major(dev), unix.Minor(dev))
		devTypes.m[dev] = ext4
	}
	return ext4
}

var devTypes = struct {
	sync.Mutex
	m map[uint64]bool
}{m: map[uint64]bool{}}

// mountIsExt4 reads /proc/self/mountinfo for a mount of the device
// major:minor and reports whether its type is ext4 or ext3.
func mountIsExt4(major, minor uint32) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	return mountinfoExt4(data, strconv.FormatUint(uint64(major), 10)+":"+strconv.FormatUint(uint64(minor), 10))
}

// mountinfoExt4 reports whether the mountinfo lines in data (proc(5): "36
// 35 98:0 /root /mnt rw,noatime master:1 - ext4 /dev/vda rw") have a mount
// of device dev ("major:minor") and every such mount is ext4 or ext3.
func mountinfoExt4(data []byte, dev string) bool {
	found := false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		f := bytes.Fields(line)
		if len(f) < 3 || string(f[2]) != dev {
			continue
		}
		sep := slices.IndexFunc(f, func(b []byte) bool { return string(b) == "-" })
		if sep < 0 || sep+1 >= len(f) {
			return false
		}
		if t := string(f[sep+1]); t != "ext4" && t != "ext3" {
			return false
		}
		found = true
	}
	return found
}

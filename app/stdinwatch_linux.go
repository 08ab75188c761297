package app

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// errStdinEnded is the cause of a startup context cancelled because stdin
// ended before the server started reading it.
var errStdinEnded = errors.New("stdin ended during startup")

// stdinWatch cancels a startup context when stdin, a pipe or a socket that
// nobody reads yet (the protocol server starts after the host adapter),
// has lost its writer with nothing left to read: the host went away, so a
// startup wait (the adapter's create(), its session_start handlers) must
// not hold the process. Input still buffered keeps the waits going: those
// commands deserve an answer, and the waits have deadlines of their own.
//
// Written with poll(2) rather than a read: reading stdin here would take
// bytes from the protocol's line reader.
type stdinWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	exited chan struct{}
}

// watchStdin starts watching in (only an *os.File pipe or socket; other
// inputs get a context that only ctx ends). stop ends the watch; the
// context stays as it is.
func watchStdin(ctx context.Context, in io.Reader) *stdinWatch {
	w := &stdinWatch{done: make(chan struct{}), exited: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	fd := -1
	if f, ok := in.(*os.File); ok {
		// Not f.Fd(): it would put a non-blocking stdin into blocking mode.
		// stdin stays open for the life of the process, so the number
		// stays valid after Control returns.
		if rc, err := f.SyscallConn(); err == nil {
			_ = rc.Control(func(d uintptr) { fd = int(d) })
		}
	}
	var st unix.Stat_t
	if fd < 0 || unix.Fstat(fd, &st) != nil ||
		(st.Mode&unix.S_IFMT != unix.S_IFIFO && st.Mode&unix.S_IFMT != unix.S_IFSOCK) {
		close(w.exited)
		return w
	}
	go func() {
		defer close(w.exited)
		for {
			select {
			case <-w.done:
				return
			default:
			}
			// No POLLIN: only a hang-up (pipe) or a read shutdown
			// (socket) wakes it. The timeout lets stop end the loop.
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			n, err := unix.Poll(fds, 100)
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if n == 0 || fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR) == 0 {
				continue
			}
			// TIOCINQ is FIONREAD: the bytes a read would return now.
			if left, err := unix.IoctlGetInt(fd, unix.TIOCINQ); err == nil && left == 0 {
				w.cancel(errStdinEnded)
			}
			return // input left to serve, or the end was seen: the watch is over
		}
	}()
	return w
}

// stop ends the watch (waiting for its goroutine).
func (w *stdinWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	<-w.exited
}

package stdio

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// iovMax is the most pieces one writev(2) takes (IOV_MAX on Linux).
const iovMax = 1024

// vecWriter writes vectors of pieces: with writev(2) (unix.Writev) when
// the output is a file (a pipe, a terminal, a regular file), through its
// RawConn so that a non-blocking output waits for room in the poller;
// else joined into one Write. It belongs to the writer goroutine.
type vecWriter struct {
	out  io.Writer
	raw  syscall.RawConn // nil: join and Write
	rest [][]byte
	join []byte
}

func newVecWriter(out io.Writer) *vecWriter {
	v := &vecWriter{out: out}
	if f, ok := out.(syscall.Conn); ok {
		if raw, err := f.SyscallConn(); err == nil {
			v.raw = raw
		}
	}
	return v
}

// write writes the n bytes of vec's pieces, in order: all of them, or an
// error.
func (v *vecWriter) write(vec [][]byte, n int) error {
	if v.raw == nil {
		return writeJoined(v.out, &v.join, vec, n)
	}
	v.rest = v.rest[:0]
	for _, p := range vec {
		if len(p) > 0 {
			v.rest = append(v.rest, p)
		}
	}
	rest := v.rest
	var werr error
	err := v.raw.Write(func(fd uintptr) bool {
		for len(rest) > 0 {
			k, err := unix.Writev(int(fd), rest[:min(len(rest), iovMax)])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN: // a non-blocking output is full: wait for room
				return false
			case err != nil:
				werr = err
				return true
			case k == 0:
				werr = io.ErrShortWrite
				return true
			}
			for k > 0 { // past what was written (a pipe may take part of it)
				if k < len(rest[0]) {
					rest[0] = rest[0][k:]
					break
				}
				k -= len(rest[0])
				rest = rest[1:]
			}
		}
		return true
	})
	clear(v.rest) // do not pin the pieces until the next vector
	if err == nil {
		err = werr
	}
	if err != nil {
		return &writevError{err}
	}
	return nil
}

// writevError names the call that failed, as os.File's errors do
// ("write /dev/stdout: broken pipe").
type writevError struct{ err error }

func (e *writevError) Error() string { return "writev: " + e.err.Error() }
func (e *writevError) Unwrap() error { return e.err }

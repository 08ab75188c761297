package tools

import (
	"errors"
	"io"
	"slices"
)

// errTooLarge reports a file that holds more than the bytes a reader was
// allowed (it grew after fstat, or fstat already said so).
var errTooLarge = errors.New("file larger than the limit")

// fillBuffer reads r to its end into buf's storage (grown when needed,
// reused otherwise) and returns the bytes read. size is what fstat said,
// so that the first read usually gets everything; a file with more than
// limit bytes ends with errTooLarge after reading limit+1 bytes (and the
// first limit bytes are returned).
func fillBuffer(r io.Reader, buf []byte, size, limit int64) ([]byte, error) {
	want := int(min(max(size, 0), limit) + 1) // one more to see EOF (or growth) at once
	if cap(buf) < want {
		buf = make([]byte, 0, max(want, 64<<10))
	}
	buf = buf[:0]
	for zero := 0; ; {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)) // grew since fstat
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), int(limit)+1)])
		buf = buf[:len(buf)+n]
		switch {
		case len(buf) > int(limit):
			return buf[:limit], errTooLarge
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return buf, err
		case n == 0:
			if zero++; zero > 100 {
				return buf, io.ErrNoProgress
			}
		}
	}
}

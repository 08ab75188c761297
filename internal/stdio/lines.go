package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/memlimit"
)

// MaxLineBytes bounds one input line (images travel inline as base64, so it
// is generous). A longer line is discarded and reported as ErrLineTooLong.
const MaxLineBytes = 64 << 20

// ErrLineTooLong is returned by LineReader.Next for an oversized line; the
// reader has skipped to the next line and can be used again.
var ErrLineTooLong = errors.New("line too long")

// LineReader splits a byte stream into protocol lines: lines end only at
// '\n' (never at U+2028/U+2029), one trailing '\r' is removed, blank lines
// (whitespace in the JavaScript sense, including U+FEFF) are skipped, and a
// final line without '\n' still counts at EOF. Splitting on the byte 0x0A
// never cuts a multi-byte UTF-8 sequence, so characters split across reads
// are reassembled by construction.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader returns a reader of lines of at most max bytes (0 means
// MaxLineBytes).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = MaxLineBytes
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line without its terminator. The slice is
// valid until the following call. At the end of input it returns io.EOF.
func (l *LineReader) Next() ([]byte, error) {
	for {
		line, err := l.readLine()
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			return nil, err // ErrLineTooLong, io.EOF or a read error
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if IsBlank(line) {
			if err != nil {
				return nil, io.EOF
			}
			continue
		}
		memlimit.Accepted(len(line)) // before it is handled
		return line, nil
	}
}

// keepBytes is the largest line buffer kept between lines: a bigger one
// (one huge prompt) is dropped, not pinned for the life of the process.
const keepBytes = 64 << 10

// Take returns line (from Next) for the caller to keep. A big line's
// buffer is handed over instead of copied (the reader starts a new one);
// a small line is copied so the reader's buffer is reused.
func (l *LineReader) Take(line []byte) []byte {
	if cap(l.buf) > keepBytes {
		l.buf = nil
		return line
	}
	return bytes.Clone(line)
}

// readLine reads up to and excluding '\n'. At EOF the partial line is
// returned with io.EOF.
func (l *LineReader) readLine() ([]byte, error) {
	if cap(l.buf) > keepBytes {
		l.buf = nil
	}
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+1 {
				// Skip the rest of the line; free what was read of it.
				tooLong = true
				l.buf = nil
				memlimit.Dropped()
			} else {
				if len(l.buf) < memlimit.HugeBytes && len(l.buf)+len(chunk) >= memlimit.HugeBytes {
					memlimit.Growing()
				}
				l.buf = grow(l.buf, len(chunk), l.max+1)
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrLineTooLong
			}
			return l.buf[:len(l.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if tooLong {
				return nil, ErrLineTooLong
			}
			return l.buf, err
		}
	}
}

// grow makes room for n more bytes in b, doubling its capacity (never
// beyond limit): append's growth of 1.25x for large slices would allocate
// about five times the line while reading it.
func grow(b []byte, n, limit int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	c := max(2*cap(b), len(b)+n, 4096)
	c = min(c, max(limit, len(b)+n))
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// IsBlank reports whether b holds only whitespace as JavaScript's
// String.prototype.trim understands it (Unicode White_Space plus U+FEFF).
func IsBlank(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if !unicode.IsSpace(r) && r != '\uFEFF' && !unicode.Is(unicode.Zs, r) && r != '\u2028' && r != '\u2029' {
			return false
		}
		b = b[n:]
	}
	return true
}

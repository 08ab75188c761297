package store

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// readChunk is the read size of the line reader. Lines longer than the
// buffer grow it (doubling); it never shrinks.
const readChunk = 1 << 20

// lineReader splits a byte stream into lines at '\n' only (U+2028/U+2029
// and lone '\r' are ordinary bytes). It removes the '\n' and one trailing
// '\r'. The returned slice is only valid until the next call.
type lineReader struct {
	r     io.Reader
	buf   []byte
	start int   // first unconsumed byte in buf
	end   int   // end of valid data in buf
	scan  int   // bytes buf[start:scan] are known to hold no '\n'
	off   int64 // file offset of buf[0]
	num   int   // physical number of the last returned line (1-based)
	eof   bool
	err   error
}

func newLineReader(r io.Reader, size int) *lineReader {
	if size <= 0 {
		size = readChunk
	}
	return &lineReader{r: r, buf: make([]byte, size)}
}

// line is one physical line.
type line struct {
	text   []byte // without '\n' and one trailing '\r'
	num    int    // physical line number, 1-based, blank lines counted
	offset int64  // file offset of the first byte of the line
	last   bool   // the line is not terminated by '\n' (end of file)
}

// next returns the next line. ok is false at the end of the input or on a
// read error (see err).
func (lr *lineReader) next() (l line, ok bool) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.end], '\n'); i >= 0 {
			nl := lr.scan + i
			l = line{text: stripCR(lr.buf[lr.start:nl]), offset: lr.off + int64(lr.start)}
			lr.start = nl + 1
			lr.scan = lr.start
			lr.num++
			l.num = lr.num
			return l, true
		}
		lr.scan = lr.end
		if lr.eof {
			if lr.end > lr.start {
				l = line{text: stripCR(lr.buf[lr.start:lr.end]), offset: lr.off + int64(lr.start), last: true}
				lr.start = lr.end
				lr.num++
				l.num = lr.num
				return l, true
			}
			return line{}, false
		}
		lr.fill()
	}
}

// fill reads more data, compacting or growing the buffer first.
func (lr *lineReader) fill() {
	if lr.start > 0 {
		n := copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.off += int64(lr.start)
		lr.scan -= lr.start
		lr.start, lr.end = 0, n
	}
	if lr.end == len(lr.buf) {
		grown := make([]byte, 2*len(lr.buf))
		copy(grown, lr.buf[:lr.end])
		lr.buf = grown
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	if err != nil {
		lr.eof = true
		if !errors.Is(err, io.EOF) {
			lr.err = err
		}
	}
}

func stripCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// isBlank reports whether b is empty after JavaScript String.prototype.trim,
// i.e. holds only WhiteSpace and LineTerminator code points (ASCII tab, LF,
// VT, FF, CR, space, plus U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000, U+FEFF). Note that U+0085 is not one of them.
// Invalid UTF-8 is not blank.
func isBlank(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch c {
			case ' ', '\t', '\n', '\v', '\f', '\r':
				i++
				continue
			}
			return false
		}
		r, size := utf8.DecodeRune(b[i:])
		if !isJSSpace(r) {
			return false
		}
		i += size
	}
	return true
}

func isJSSpace(r rune) bool {
	switch r {
	case 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

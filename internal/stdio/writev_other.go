//go:build !linux

package stdio

import "io"

// vecWriter writes vectors of pieces joined into one Write (writev is
// used on Linux only, writev_linux.go). It belongs to the writer goroutine.
type vecWriter struct {
	out  io.Writer
	join []byte
}

func newVecWriter(out io.Writer) *vecWriter { return &vecWriter{out: out} }

func (v *vecWriter) write(vec [][]byte, n int) error { return writeJoined(v.out, &v.join, vec, n) }

package stdio

import "io"

// writeJoined joins vec's n bytes into one buffer (*join, reused) and
// writes it with one Write: a vector to an output that is not a file.
func writeJoined(out io.Writer, join *[]byte, vec [][]byte, n int) error {
	buf := (*join)[:0]
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	for _, p := range vec {
		buf = append(buf, p...)
	}
	*join = buf[:0]
	if cap(buf) > 4<<20 {
		*join = nil // do not keep a huge vector's buffer
	}
	_, err := out.Write(buf)
	return err
}

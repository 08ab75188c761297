package jsonline_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/armadra/ama-rpc/internal/jsonline"
)

// lines reads r to its end: the lines and the error that ended it.
func lines(r io.Reader, max int) ([]string, error) {
	rd := jsonline.NewReader(r, max)
	var out []string
	for {
		l, err := rd.Next()
		if err != nil {
			return out, err
		}
		if bytes.IndexByte(l, '\n') >= 0 {
			return out, errors.New("a line holds a newline")
		}
		out = append(out, string(l))
	}
}

func TestReader(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		in   io.Reader
		max  int
		want []string
		err  error
	}{
		{"plain", strings.NewReader("{}\n[1]\n"), 64, []string{"{}", "[1]"}, io.EOF},
		{"crlf", strings.NewReader("{}\r\n1\r\r\n"), 64, []string{"{}", "1\r"}, io.EOF},
		{"blank lines skipped", strings.NewReader("\n \t\r\n{}\n\r\n"), 64, []string{"{}"}, io.EOF},
		{"non-blank kept", strings.NewReader("\u00a0\nnot json\n"), 64, []string{"\u00a0", "not json"}, io.EOF},
		{"last line without newline", strings.NewReader("1\n2"), 64, []string{"1", "2"}, io.EOF},
		{"split reads", iotest.OneByteReader(strings.NewReader("{\"a\":\"é\"}\n2\n")), 64, []string{`{"a":"é"}`, "2"}, io.EOF},
		{"longest line", strings.NewReader("1234567\nx\n"), 8, []string{"1234567", "x"}, io.EOF},
		{"too long ends the input", strings.NewReader("1\n12345678\nx\n"), 8, []string{"1"}, bufio.ErrTooLong},
		{"too long blank ends too", strings.NewReader("1\n          \nx\n"), 8, []string{"1"}, bufio.ErrTooLong},
		{"read error", io.MultiReader(strings.NewReader("1\n"), iotest.ErrReader(boom)), 64, []string{"1"}, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lines(tc.in, tc.max)
			if !slices.Equal(got, tc.want) || !errors.Is(err, tc.err) {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// reference splits in as the protocol says: at '\n', one trailing '\r'
// dropped, blank lines skipped; long reports whether a raw line (with its
// '\r') has max bytes or more.
func reference(in []byte, max int) (out []string, long bool) {
	for len(in) > 0 {
		l, rest, _ := bytes.Cut(in, []byte{'\n'})
		in = rest
		long = long || len(l) >= max
		if l = bytes.TrimSuffix(l, []byte{'\r'}); len(bytes.Trim(l, " \t\r")) > 0 {
			out = append(out, string(l))
		}
	}
	return out, long
}

// The reader returns exactly the reference's lines, however the input is
// cut into reads, and stops early only at a line of max bytes or more
// (what it returned by then is a prefix of the reference).
func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "{}\n", "a\r\n\n b\r\r\n", "\n\n\n", "1234567\n", "12345678", "x\ny\rz\n\t\n"} {
		f.Add([]byte(s), uint8(8), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8, oneByte bool) {
		m := int(max%32) + 2
		var r io.Reader = bytes.NewReader(in)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		got, err := lines(r, m)
		want, long := reference(in, m)
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			if !long || len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("too long on %q (max %d): got %q, reference %q", in, m, got, want)
			}
		case err != io.EOF:
			t.Fatalf("%q: %v", in, err)
		case long || !slices.Equal(got, want):
			t.Fatalf("%q (max %d): got %q, want %q (a line of max bytes or more: %v)", in, m, got, want, long)
		}
	})
}

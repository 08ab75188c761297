package stdio_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/armadra/ama-rpc/internal/stdio"
)

func readAll(t testing.TB, r io.Reader, max int) ([]string, int) {
	lr := stdio.NewLineReader(r, max)
	var out []string
	tooLong := 0
	for {
		line, err := lr.Next()
		if errors.Is(err, stdio.ErrLineTooLong) {
			tooLong++
			continue
		}
		if err == io.EOF {
			return out, tooLong
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, string(line))
	}
}

func TestLineReader(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"only one cr stripped", "a\r\r\n", []string{"a\r"}},
		{"final line without newline", "a\nb", []string{"a", "b"}},
		{"blank lines skipped", "\n  \n\t\r\na\n\n", []string{"a"}},
		{"unicode blanks skipped", "\ufeff\n\u3000\n\u00a0\nx\n", []string{"x"}},
		{"u2028 is not a separator", "a\u2028b\u2029c\n", []string{"a\u2028b\u2029c"}},
		{"cr alone is not a separator", "a\rb\n", []string{"a\rb"}},
		{"empty input", "", nil},
		{"only blanks", "  \n\n", nil},
		{"multibyte", "héllo→世界\n", []string{"héllo→世界"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := readAll(t, strings.NewReader(c.in), 0)
			if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			// The same input delivered one byte at a time (multi-byte
			// characters split across reads) gives the same lines.
			got1, _ := readAll(t, iotest.OneByteReader(strings.NewReader(c.in)), 0)
			if strings.Join(got1, "|") != strings.Join(c.want, "|") || len(got1) != len(c.want) {
				t.Fatalf("byte at a time: got %q, want %q", got1, c.want)
			}
		})
	}
}

func TestLineReaderTooLong(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 5000) + "\nafter\n" + strings.Repeat("y", 5000)
	got, tooLong := readAll(t, strings.NewReader(in), 100)
	if tooLong != 2 || strings.Join(got, "|") != "short|after" {
		t.Fatalf("got %q, %d too long", got, tooLong)
	}
}

// splitReference is the specification of framing, written the obvious way.
func splitReference(in []byte) []string {
	var out []string
	parts := bytes.Split(in, []byte("\n"))
	for _, p := range parts {
		p = bytes.TrimSuffix(p, []byte("\r"))
		if stdio.IsBlank(p) {
			continue
		}
		out = append(out, string(p))
	}
	return out
}

func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"a\nb", "a\r\n\r\n", "\u2028\n\ufeff", "x\ry\rz", "{\"type\":\"prompt\"}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, tooLong := readAll(t, iotest.OneByteReader(bytes.NewReader(in)), 0)
		want := splitReference(in)
		if tooLong != 0 || strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

package stdio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/internal/stdio"
)

// vectorLine sends, between two ordinary lines, one line of three
// vectors: more pieces than one writev takes, empty pieces, and a piece
// larger than a pipe holds; it returns what must come out.
func vectorLine(w *stdio.Writer) string {
	big := bytes.Repeat([]byte("b"), 300<<10)
	var vecs [][][]byte
	var want strings.Builder
	want.WriteString(`{"before":1}` + "\n")
	var vec [][]byte
	add := func(p []byte) { vec = append(vec, p); want.Write(p) }
	add([]byte(`{"v":[`))
	for i := range 2500 {
		if i > 0 {
			add([]byte(","))
		}
		add(nil)
		add(fmt.Appendf(nil, `"p%d"`, i))
	}
	vecs, vec = append(vecs, vec), nil
	add([]byte(`],"big":"`))
	add(big)
	add([]byte(`"`))
	vecs, vec = append(vecs, vec), nil
	add([]byte("}\n"))
	vecs = append(vecs, vec)
	want.WriteString(`{"after":2}` + "\n")

	w.SendLine([]byte(`{"before":1}` + "\n"))
	w.SendVector(want.Len(), func(emit func([][]byte)) {
		for _, v := range vecs {
			emit(v)
		}
	})
	w.SendLine([]byte(`{"after":2}` + "\n"))
	return want.String()
}

// TestWriterSendVector: a vector line comes out whole and in order, to a
// plain io.Writer (joined), a non-blocking pipe (os.Pipe: writev, partial
// writes and waits for room) and a blocking one (writev that blocks).
func TestWriterSendVector(t *testing.T) {
	t.Run("writer", func(t *testing.T) {
		rec := &recorder{}
		w := stdio.NewWriter(rec, stdio.WriterOptions{})
		want := vectorLine(w)
		w.Close()
		if got := rec.buf.String(); got != want {
			t.Fatalf("got %d bytes, want %d", len(got), len(want))
		}
		if st := w.Stats(); st.Lines != 3 || st.Bytes != int64(len(want)) {
			t.Fatalf("stats %+v, want 3 lines of %d bytes", st, len(want))
		}
	})
	pipe := func(t *testing.T, r, wf *os.File) {
		got := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(r)
			got <- b
		}()
		w := stdio.NewWriter(wf, stdio.WriterOptions{})
		want := vectorLine(w)
		w.Close()
		wf.Close()
		if g := <-got; string(g) != want {
			t.Fatalf("got %d bytes, want %d (first difference at %d)", len(g), len(want), firstDiff(g, []byte(want)))
		}
	}
	t.Run("pipe", func(t *testing.T) {
		r, wf, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		pipe(t, r, wf)
	})
	t.Run("blocking-pipe", func(t *testing.T) {
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil {
			t.Fatal(err)
		}
		r, wf := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
		defer r.Close()
		pipe(t, r, wf)
	})
}

// TestWriterSendVectorBroken: a vector to a pipe nobody reads any more
// fails like a write (EPIPE): Broken is closed, later output discarded.
func TestWriterSendVectorBroken(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer wf.Close()
	w := stdio.NewWriter(wf, stdio.WriterOptions{})
	w.SendVector(10, func(emit func([][]byte)) { emit([][]byte{[]byte("{}"), []byte("\n")}) })
	<-w.Broken()
	w.SendLine([]byte("{}\n"))
	w.Close()
}

// TestVecWriterError: the error of a failed vector wraps the cause.
func TestVecWriterError(t *testing.T) {
	w := stdio.NewWriter(failing{}, stdio.WriterOptions{})
	w.SendVector(10, func(emit func([][]byte)) { emit([][]byte{[]byte("{}\n")}) })
	<-w.Broken()
	w.Close()
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("no room") }

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

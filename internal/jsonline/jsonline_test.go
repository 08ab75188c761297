package jsonline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A call gets its answer; an answer nobody awaits is dropped without
// blocking the reader; once the input ends, calls and writes fail with
// the closed error and Done is closed after end ran.
func TestConn(t *testing.T) {
	closed := errors.New("closed")
	pr, pw := io.Pipe()
	var out bytes.Buffer
	c := New[int, string](&out, "test", closed)
	ended := false
	go c.Read(pr, 1<<10, func(l []byte) { c.Deliver(len(l), string(l)) }, func() { ended = true })
	got, err := c.Await(context.Background(), 3, func() error {
		_, _ = io.WriteString(pw, "xxxxx\nabc\n") // 5 is awaited by nobody
		return c.Write(map[string]int{"id": 3})
	})
	if err != nil || got != "abc" || out.String() != `{"id":3}`+"\n" {
		t.Fatalf("got %q, %v; wrote %q", got, err, out.String())
	}
	_ = pw.Close()
	<-c.Done()
	if !ended {
		t.Fatal("end did not run before Done")
	}
	if _, err := c.Await(context.Background(), 1, func() error { return nil }); err != closed {
		t.Fatalf("Await after the end: %v", err)
	}
	if err := c.Write(strings.Repeat("x", 3)); err != closed {
		t.Fatalf("Write after the end: %v", err)
	}
}

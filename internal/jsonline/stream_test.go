package jsonline_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/jsonline"
)

var _ jsonrpc2.ObjectStream = (*jsonline.Stream)(nil)

// tee records what one end writes, line by line.
type tee struct {
	io.WriteCloser
	lines chan string
}

func (t tee) Write(b []byte) (int, error) {
	t.lines <- string(b)
	return t.WriteCloser.Write(b)
}

// Two jsonrpc2 connections on Streams: a call and a notification cross,
// each message is one line of valid JSON (U+2028 escaped), and closing
// one end's input ends the other's connection.
func TestStreamJSONRPC(t *testing.T) {
	aIn, bOut := io.Pipe()
	bIn, aOut := io.Pipe()
	sent := make(chan string, 8)
	notified := make(chan string, 1)
	a := jsonrpc2.NewConn(context.Background(), jsonline.NewStream(aIn, tee{aOut, sent}, 1<<10), jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	b := jsonrpc2.NewConn(context.Background(), jsonline.NewStream(bIn, bOut, 1<<10), jsonrpc2.HandlerWithError(
		func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			var p string
			_ = json.Unmarshal(*req.Params, &p)
			if req.Notif {
				notified <- p
				return nil, nil
			}
			return "echo " + p, nil
		}))
	var got string
	if err := a.Call(context.Background(), "echo", "x\u2028y", &got); err != nil || got != "echo x\u2028y" {
		t.Fatalf("call: %q, %v", got, err)
	}
	if err := a.Notify(context.Background(), "note", "n"); err != nil || <-notified != "n" {
		t.Fatalf("notify: %v", err)
	}
	for range 2 {
		l := <-sent
		if strings.Count(l, "\n") != 1 || !strings.HasSuffix(l, "\n") || !json.Valid([]byte(l)) || strings.Contains(l, "\u2028") {
			t.Fatalf("not one JSON line: %q", l)
		}
	}
	_ = a.Close() // closes aOut: b's input ends
	<-b.DisconnectNotify()
}

// A line that is not a message, or is too long, ends the connection
// (as the old stream's decode error did).
func TestStreamBadLine(t *testing.T) {
	for _, in := range []string{"\n\nnot json\n", `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 1<<10) + `"}` + "\n"} {
		// The input stays open: only the bad line can end the connection.
		open, keep := io.Pipe()
		c := jsonrpc2.NewConn(context.Background(), jsonline.NewStream(io.MultiReader(strings.NewReader(in), open), keep, 1<<10),
			jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
		<-c.DisconnectNotify()
		_ = keep.Close()
	}
}

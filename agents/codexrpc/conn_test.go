package codexrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

type handler struct{ notes chan string }

func (h *handler) Notification(method string, _ json.RawMessage) { h.notes <- method }

func (h *handler) Request(_ context.Context, method string, _ json.RawMessage) (any, error) {
	if method == "item/tool/requestUserInput" {
		return nil, &Error{Code: -32601, Message: "no"}
	}
	return map[string]any{"decision": "decline"}, nil
}

// No "jsonrpc" member is written; responses match by id, server requests
// are answered with their id, errors are *Error.
func TestConnWire(t *testing.T) {
	srvOut, ourIn := io.Pipe()
	srvIn, ourOut := io.Pipe()
	h := &handler{notes: make(chan string, 4)}
	c := New(srvOut, ourOut, h)
	lines := bufio.NewScanner(srvIn)
	read := func() string {
		if !lines.Scan() {
			t.Fatal("no line")
		}
		return lines.Text()
	}
	write := func(s string) { io.WriteString(ourIn, s+"\n") }
	errc := make(chan error, 1)
	var res struct {
		Thread struct{ ID string } `json:"thread"`
	}
	go func() { errc <- c.Call(context.Background(), "thread/start", map[string]any{"cwd": "/w"}, &res) }()
	line := read()
	if strings.Contains(line, "jsonrpc") || !strings.Contains(line, `"method":"thread/start"`) {
		t.Fatalf("request %s", line)
	}
	write(`{"method":"turn/started","params":{}}`)
	write(`{"id":1,"result":{"thread":{"id":"thr"}}}`)
	if err := <-errc; err != nil || res.Thread.ID != "thr" {
		t.Fatalf("%v %+v", err, res)
	}
	if m := <-h.notes; m != "turn/started" {
		t.Fatal(m)
	}
	write(`{"id":7,"method":"item/commandExecution/requestApproval","params":{}}`)
	if l := read(); l != `{"id":7,"result":{"decision":"decline"}}` {
		t.Fatalf("answer %s", l)
	}
	write(`{"id":"x","method":"item/tool/requestUserInput","params":{}}`)
	if l := read(); l != `{"error":{"code":-32601,"message":"no"},"id":"x"}` {
		t.Fatalf("error answer %s", l)
	}
	go func() { errc <- c.Call(context.Background(), "thread/resume", nil, nil) }()
	read()
	write(`{"id":2,"error":{"code":-32600,"message":"no such thread"}}`)
	var rpcErr *Error
	if err := <-errc; !errors.As(err, &rpcErr) || rpcErr.Code != -32600 {
		t.Fatalf("error %v", err)
	}
	ourIn.Close()
	<-c.Done()
}

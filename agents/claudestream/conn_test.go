package claudestream

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

type handler struct {
	msgs    chan string
	granted chan struct{}
}

func (h *handler) Message(typ string, _ json.RawMessage) { h.msgs <- typ }

func (h *handler) ControlRequest(ctx context.Context, req json.RawMessage) (any, error) {
	if strings.Contains(string(req), "wait") {
		<-ctx.Done() // withdrawn by control_cancel_request
		close(h.granted)
		return nil, ErrNoReply
	}
	return map[string]any{"behavior": "allow"}, nil
}

// The envelope: a control request of ours is matched to its response; the
// CLI's control requests are answered with their request_id; a cancelled
// one gets no answer; other lines reach Message in order.
func TestConnEnvelope(t *testing.T) {
	cliOut, ourIn := io.Pipe() // what the CLI writes, we read
	cliIn, ourOut := io.Pipe() // what we write, the CLI reads
	h := &handler{msgs: make(chan string, 8), granted: make(chan struct{})}
	c := New(cliOut, ourOut, h)
	lines := bufio.NewScanner(cliIn)
	read := func() map[string]any {
		if !lines.Scan() {
			t.Fatal("no line")
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	write := func(s string) {
		if _, err := io.WriteString(ourIn, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan json.RawMessage, 1)
	go func() {
		r, err := c.Control(context.Background(), map[string]any{"subtype": "initialize"})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	req := read()
	if req["type"] != "control_request" || req["request"].(map[string]any)["subtype"] != "initialize" {
		t.Fatalf("request %v", req)
	}
	write(`{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":{"ok":true}}}`)
	if r := <-got; string(r) != `{"ok":true}` {
		t.Fatalf("response %s", r)
	}
	write(`{"type":"system","subtype":"init"}`)
	write(`{"type":"control_request","request_id":"w","request":{"subtype":"can_use_tool","tool_name":"wait"}}`)
	write(`{"type":"control_cancel_request","request_id":"w"}`)
	<-h.granted
	write(`{"type":"control_request","request_id":"c1","request":{"subtype":"can_use_tool","tool_name":"Bash"}}`)
	resp := read() // only c1 is answered
	body := resp["response"].(map[string]any)
	if resp["type"] != "control_response" || body["request_id"] != "c1" || body["response"].(map[string]any)["behavior"] != "allow" {
		t.Fatalf("answer %v", resp)
	}
	write(`{"type":"result","subtype":"success"}`)
	if a, b := <-h.msgs, <-h.msgs; a != "system" || b != "result" {
		t.Fatalf("messages %s %s", a, b)
	}
	ourIn.Close()
	<-c.Done()
	if err := c.Send(map[string]any{"type": "user"}); err != ErrClosed {
		t.Fatalf("send after close: %v", err)
	}
}

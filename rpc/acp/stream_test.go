package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/rpc/acp"
)

// echoHandler answers every request with its params.
type echoHandler struct{}

func (echoHandler) Handle(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) {
	if r.Notif {
		return
	}
	var v any = map[string]any{}
	if r.Params != nil {
		_ = json.Unmarshal(*r.Params, &v)
	}
	_ = c.Reply(ctx, r.ID, v)
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// streamPeer is a jsonrpc2.Conn over a Stream with piped stdio.
type streamPeer struct {
	in     *io.PipeWriter
	out    *bufio.Reader
	stream *acp.Stream
	conn   *jsonrpc2.Conn
	w      *stdio.Writer
	outW   *io.PipeWriter
}

func newStreamPeer(t testing.TB, max int) *streamPeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := stdio.NewWriter(outW, stdio.WriterOptions{})
	s := acp.NewStream(inR, w, max, nil)
	p := &streamPeer{in: inW, out: bufio.NewReader(outR), stream: s, w: w, outW: outW}
	p.conn = jsonrpc2.NewConn(context.Background(), s, echoHandler{}, jsonrpc2.SetLogger(quietLogger{}))
	t.Cleanup(func() {
		_ = inW.Close()
		_ = p.conn.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		w.Close()
		_ = outW.Close()
	})
	return p
}

func (p *streamPeer) send(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(p.in, s); err != nil {
		t.Fatal(err)
	}
}

// next returns the next output line (without the newline).
func (p *streamPeer) next(t testing.TB) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := p.out.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read output: %v", r.err)
		}
		return strings.TrimSuffix(r.s, "\n")
	case <-time.After(10 * time.Second):
		t.Fatal("no output line")
		return ""
	}
}

func TestStreamBadLinesKeepTheConnection(t *testing.T) {
	p := newStreamPeer(t, 256)
	cases := []struct {
		name, in, want string
	}{
		{"not JSON", "{not json}\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"two values", "{} {}\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"neither request nor response", `{"foo":1}` + "\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`},
		{"bad id keeps the id", `{"jsonrpc":"2.0","id":5,"method":7}` + "\n", `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request"}}`},
		{"fractional id round-trips", `{"jsonrpc":"2.0","id":1.5,"method":"m"}` + "\n", `{"jsonrpc":"2.0","id":1.5,"result":{}}`},
		{"object id is null", `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}` + "\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}]` + "\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 400) + `"}` + "\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`},
		{"crlf, blank lines and html", "\r\n  \n" + `{"jsonrpc":"2.0","id":"a","method":"echo","params":{"t":"<b>&"}}` + "\r\n", `{"jsonrpc":"2.0","id":"a","result":{"t":"<b>&"}}`},
	}
	for _, c := range cases {
		p.send(t, c.in)
		if got := p.next(t); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, got, c.want)
		}
		// The connection lives on.
		p.send(t, `{"jsonrpc":"2.0","id":99,"method":"echo","params":[1]}`+"\n")
		if got := p.next(t); got != `{"jsonrpc":"2.0","id":99,"result":[1]}` {
			t.Fatalf("after %s: %s", c.name, got)
		}
	}
	if n := p.stream.BadLines(); n != 7 {
		t.Errorf("BadLines = %d, want 7", n)
	}
}

func TestStreamEOFParksUntilClose(t *testing.T) {
	p := newStreamPeer(t, 0)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"echo"}`) // no trailing newline
	_ = p.in.Close()
	if got := p.next(t); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("final unterminated line: %s", got)
	}
	select {
	case <-p.stream.EOF():
	case <-time.After(10 * time.Second):
		t.Fatal("EOF not reported")
	}
	// The connection is still open: replies owed can still be written.
	select {
	case <-p.conn.DisconnectNotify():
		t.Fatal("the connection closed at the end of input")
	default:
	}
	if err := p.conn.Notify(context.Background(), "late", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if got := p.next(t); got != `{"jsonrpc":"2.0","method":"late","params":{"n":1}}` {
		t.Fatalf("late notification: %s", got)
	}
	_ = p.conn.Close()
	select {
	case <-p.conn.DisconnectNotify():
	case <-time.After(10 * time.Second):
		t.Fatal("not closed")
	}
}

// FuzzStream: whatever a line holds, the stream never panics and the
// connection keeps answering the next request.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		"{not json}", `{"foo":1}`, `[]`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","method":"n"}`,
		`{"id":null,"method":"x"}`, `{"id":{},"method":"x"}`, `{"id":-1,"method":"x"}`, "\r", "\xff\xfe", `"str"`, `{"method":"m","params":nul}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}`, strings.Repeat("[", 1000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		p := newStreamPeer(t, 4096)
		p.send(t, line+"\n"+`{"jsonrpc":"2.0","id":"sentinel","method":"echo","params":{"ok":true}}`+"\n")
		want := `{"jsonrpc":"2.0","id":"sentinel","result":{"ok":true}}`
		for i := 0; i < 64; i++ {
			got := p.next(t)
			if !json.Valid([]byte(got)) {
				t.Fatalf("output line is not JSON: %q", got)
			}
			if got == want {
				return
			}
		}
		t.Fatal("the sentinel request was not answered")
	})
}

// parkHandler answers with what the library decoded as params and what
// the stream parked for the request.
type parkHandler struct{ s **acp.Stream }

func (h parkHandler) Handle(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) {
	parked := (*h.s).TakeParams()
	lib := ""
	if r.Params != nil {
		lib = string(*r.Params)
	}
	if !r.Notif {
		_ = c.Reply(ctx, r.ID, map[string]any{"lib": lib, "parked": len(parked), "head": string(parked[:min(len(parked), 12)])})
	}
}

// A huge request's params are parked for its handler (the library sees
// {}); small requests, huge params that are not an object or array, and
// the request after a parked one get nothing parked.
func TestHugeParamsAreParkedForTheirRequest(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := stdio.NewWriter(outW, stdio.WriterOptions{})
	var s *acp.Stream
	s = acp.NewStream(inR, w, 0, nil)
	conn := jsonrpc2.NewConn(context.Background(), s, parkHandler{&s}, jsonrpc2.SetLogger(quietLogger{}))
	t.Cleanup(func() {
		_ = inW.Close()
		_ = conn.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		w.Close()
		_ = outW.Close()
	})
	out := bufio.NewReader(outR)
	huge := strings.Repeat("x", 2<<20)
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"text":"`+huge+`"}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"m","params":{"a":1}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":3,"method":"m","params":["`+huge+`"],"params":{"b":2}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":4,"method":"m","params":"`+huge+`"}`+"\n")
	}()
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"head":"{\"text\":\"xxx","lib":"{}","parked":2097163}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"head":"","lib":"{\"a\":1}","parked":0}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"head":"{\"b\":2}","lib":"{}","parked":7}}`, // the last params wins
		`{"jsonrpc":"2.0","id":4,"result":{"head":"","lib":"\"` + huge + `\"","parked":0}}`,
	}
	for i, wl := range want {
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got = strings.TrimSuffix(got, "\n"); got != wl {
			t.Fatalf("reply %d: %.200s, want %.200s", i+1, got, wl)
		}
	}
}

// Request ids come back exactly as sent: every number JSON allows (sign,
// size, fraction, exponent), every string (escapes, lone surrogates;
// U+2028 as the writer escapes it on every line), and null, which
// JSON-RPC 2.0 allows on a request.
// jsonrpc2.ID alone answered -1 as 18446744073709551615, refused numbers
// past int64 and fractions, and took id null for a notification.
func TestStreamIDsRoundTrip(t *testing.T) {
	p := newStreamPeer(t, 0)
	ids := []string{
		`0`, `1`, `42`, `9223372036854775807`,
		`-1`, `-0`, `-9223372036854775808`, `-18446744073709551616`,
		`9223372036854775808`, `18446744073709551615`, `18446744073709551616`, `100000000000000000000000000000`,
		`1.5`, `-0.25`, `1.0`, `1e3`, `1E+2`, `-2.5e-7`, `0.0`,
		`""`, `"a"`, `"p-1"`, `"é"`, `"\u0041"`, `"a\"b"`, `"\ud800"`, "\"\u2028\"", `"<&>"`,
		`null`,
	}
	for _, id := range ids {
		p.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"echo","params":[1]}`+"\n")
		want := `{"jsonrpc":"2.0","id":` + strings.ReplaceAll(id, "\u2028", `\u2028`) + `,"result":[1]}`
		if got := p.next(t); got != want {
			t.Errorf("id %s:\n got  %s\n want %s", id, got, want)
		}
	}
	if n := p.stream.BadLines(); n != 0 {
		t.Errorf("BadLines = %d, want 0", n)
	}
}

// An internal id never leaks: a client whose own ids look like the
// internal ones (2^64-n, the way jsonrpc2 holds -n) still gets its ids.
func TestStreamIDsDoNotCollide(t *testing.T) {
	p := newStreamPeer(t, 0)
	for _, id := range []string{`-1`, `18446744073709551615`, `-1`, `9223372036854775807`} {
		p.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"echo","params":{}}`+"\n")
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
		if got := p.next(t); got != want {
			t.Errorf("id %s:\n got  %s\n want %s", id, got, want)
		}
	}
}

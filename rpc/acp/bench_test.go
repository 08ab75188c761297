package acp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/stdio"
)

// benchRead runs the read path of the connection over in (a stream of n
// requests): the Stream's framing and validation, jsonrpc2's decode, and
// handle for each request, on the library's read goroutine, as
// Server.Handle is called.
func benchRead(b *testing.B, in []byte, n int, handle func(s *Stream, req *jsonrpc2.Request)) {
	w := stdio.NewWriter(io.Discard, stdio.WriterOptions{})
	defer w.Close()
	s := NewStream(bytes.NewReader(in), w, 0, nil)
	done := make(chan struct{})
	seen := 0
	conn := jsonrpc2.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		handle(s, req)
		if seen++; seen == n {
			close(done)
		}
		return nil, nil
	}))
	<-done
	_ = conn.Close()
}

// BenchmarkSmallRequests measures the input path of small requests: 10k
// session/set_mode requests read, validated, decoded by the library and
// their params decoded. Reported per request.
func BenchmarkSmallRequests(b *testing.B) {
	const n = 10_000
	var in []byte
	for i := 0; i < n; i++ {
		in = fmt.Appendf(in, `{"jsonrpc":"2.0","id":%d,"method":"session/set_mode","params":{"sessionId":"0194f3a2-7c1e-7d3b-9a5f-2b8c4e6d1f0a","modeId":"default"}}`+"\n", i)
	}
	b.SetBytes(int64(len(in) / n))
	b.ReportAllocs()
	for b.Loop() {
		benchRead(b, in, n, func(s *Stream, req *jsonrpc2.Request) {
			var p setModeParams
			if err := decode(&call{req: req, params: s.TakeParams()}, &p); err != nil || p.ModeID == "" {
				b.Fatal(err)
			}
		})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/request")
}

// BenchmarkPromptRequest40MiB measures the input path of one
// session/prompt of a 40 MiB text block: read, validated, parked, decoded
// by the library, its params and block decoded, the message made.
func BenchmarkPromptRequest40MiB(b *testing.B) {
	line := append([]byte(`{"jsonrpc":"2.0","id":"p0","method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"`), bytes.Repeat([]byte("a"), 40<<20)...)
	line = append(line, "\"}]}}\n"...)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		benchRead(b, line, 1, func(s *Stream, req *jsonrpc2.Request) {
			var p promptParams
			if err := decode(&call{req: req, params: s.TakeParams()}, &p); err != nil {
				b.Fatal(err)
			}
			if in, err := promptInputOf(&p); err != nil || len(in.Message) != 40<<20 {
				b.Fatal(err)
			}
		})
	}
}

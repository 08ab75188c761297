package openai_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// tenK is a recorded-style reply of 10,000 text deltas.
func tenK() (body string, want string) {
	var sb, txt strings.Builder
	for i := range 10_000 {
		d := "tok" + string(rune('a'+i%26)) + " "
		txt.WriteString(d)
		sb.WriteString("data: ")
		sb.WriteString(text(d))
		sb.WriteString("\n\n")
	}
	sb.WriteString(sse(finish("stop"), usage(1000, 0, 10_000), "[DONE]"))
	return sb.String(), txt.String()
}

func TestStream10kDeltas(t *testing.T) {
	body, want := tenK()
	s := newServer(t, replay(body))
	n := 0
	start := time.Now()
	msg, err := provider(s, nil).Stream(context.Background(), request(), func(ev llm.StreamEvent, _ *llm.AssistantMessage) {
		if ev.Type == llm.EvTextDelta {
			n++
		}
	})
	t.Logf("10,000 deltas in %v", time.Since(start))
	if err != nil {
		t.Fatal(err)
	}
	if n != 10_000 || msg.Text("") != want || msg.Usage.Output != 10_000 {
		t.Errorf("deltas %d, text %d bytes (want %d)", n, len(msg.Text("")), len(want))
	}
}

// BenchmarkStream10k measures one whole 10,000-delta reply: HTTP request,
// SSE parsing, chunk decoding and Builder events.
func BenchmarkStream10k(b *testing.B) {
	body, _ := tenK()
	s := newServer(b, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
	})
	p := provider(s, nil)
	req := request()
	emit := func(llm.StreamEvent, *llm.AssistantMessage) {}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Stream(context.Background(), req, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/delta")
}

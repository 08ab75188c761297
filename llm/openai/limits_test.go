package openai_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

// withLimits sets the provider's stream limits.
func withLimits(l openai.Limits) func(*openai.Options) {
	return func(o *openai.Options) { o.Limits = l }
}

// A line longer than the bound fails the reply with a too_large error
// that is not retryable, and nothing more of the body is read: the server
// cannot write much past the bound (the sockets' buffers), although it
// offers 64 MiB.
func TestStreamLineTooLong(t *testing.T) {
	const bound = 1 << 20
	for _, tc := range []struct{ name, head string }{
		{"data line", `data: {"choices":[{"index":0,"delta":{"content":"`},
		{"comment", `: `},
		{"after a delta", text("a") + `data: {"choices":[{"index":0,"delta":{"content":"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.head)
				block := bytes.Repeat([]byte("x"), 64<<10)
				for i := 0; i < 1024 && r.Context().Err() == nil; i++ {
					n, err := w.Write(block)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			})
			msg, err, _ := run(t, provider(s, withLimits(openai.Limits{MaxLineBytes: bound})), request())
			e := kindOf(t, err)
			if e.Kind != llm.ErrTooLarge || e.Retryable() {
				t.Fatalf("kind %s retryable %v: %v", e.Kind, e.Retryable(), err)
			}
			if !strings.Contains(e.Message, "1 MiB") || !strings.Contains(e.Message, "maxLineBytes") {
				t.Errorf("message %q does not name the bound and its key", e.Message)
			}
			if msg.StopReason != llm.StopError {
				t.Errorf("stop reason %q", msg.StopReason)
			}
			s.CloseClientConnections()
			if w := written.Load(); w > 32<<20 {
				t.Errorf("the server wrote %d MiB: the body was read past the bound", w>>20)
			}
		})
	}
}

// A line just under the bound is read as before.
func TestStreamLineAtTheBound(t *testing.T) {
	big := strings.Repeat("y", 200<<10)
	s := newServer(t, replay(sse(text(big), finish("stop"), "[DONE]")))
	msg, err, _ := run(t, provider(s, withLimits(openai.Limits{MaxLineBytes: 256 << 10})), request())
	if err != nil {
		t.Fatal(err)
	}
	if msg.Text("") != big {
		t.Errorf("text of %d bytes, want %d", len(msg.Text("")), len(big))
	}
}

// An endless reply ends at the reply bound with a too_large error, not
// retryable, its content kept up to about the bound.
func TestStreamReplyTooLarge(t *testing.T) {
	const bound = 1 << 20
	for _, tc := range []struct {
		name  string
		event string
	}{
		{"text", text(strings.Repeat("t", 1000))},
		{"thinking", reasoning(strings.Repeat("r", 1000))},
		{"tool arguments", toolDelta(call(0, "c1", "write", strings.Repeat("a", 1000)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				ev := "data: " + tc.event + "\n\n"
				for r.Context().Err() == nil {
					if _, err := io.WriteString(w, ev); err != nil {
						return
					}
				}
			})
			msg, err, _ := run(t, provider(s, withLimits(openai.Limits{MaxReplyBytes: bound})), request())
			s.CloseClientConnections()
			e := kindOf(t, err)
			if e.Kind != llm.ErrTooLarge || e.Retryable() {
				t.Fatalf("kind %s retryable %v: %v", e.Kind, e.Retryable(), err)
			}
			if !strings.Contains(e.Message, "maxReplyBytes") {
				t.Errorf("message %q does not name the key", e.Message)
			}
			size := 0
			for _, c := range msg.Content {
				switch c := c.(type) {
				case *llm.TextContent:
					size += len(c.Text)
				case *llm.ThinkingContent:
					size += len(c.Thinking)
				case *llm.ToolCall:
					size += len(c.RawArguments)
				}
			}
			if size > bound+2000 {
				t.Errorf("the failed reply kept %d bytes, bound %d", size, bound)
			}
		})
	}
}

// A silent endpoint ends the attempt with a retryable network error
// (disconnect once the reply started) after the idle timeout; activity,
// keep-alive comments included, keeps it going.
func TestStreamIdleTimeout(t *testing.T) {
	const idle = 150 * time.Millisecond
	silent := func(head string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, head)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		kind llm.ErrorKind
	}{
		{"headers then nothing", silent(""), llm.ErrNetwork},
		{"no headers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, llm.ErrNetwork},
		{"one delta then nothing", silent(sse(text("a"))), llm.ErrDisconnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.h)
			t0 := time.Now()
			msg, err, _ := run(t, provider(s, withLimits(openai.Limits{IdleTimeout: idle})), request())
			took := time.Since(t0)
			s.CloseClientConnections()
			e := kindOf(t, err)
			if e.Kind != tc.kind || !e.Retryable() {
				t.Fatalf("kind %s retryable %v, want %s retryable: %v", e.Kind, e.Retryable(), tc.kind, err)
			}
			if !strings.Contains(e.Message, "idleTimeoutMs") {
				t.Errorf("message %q does not name the key", e.Message)
			}
			if msg.StopReason != llm.StopError {
				t.Errorf("stop reason %q, want error (not aborted)", msg.StopReason)
			}
			if took < idle {
				t.Errorf("ended after %s, before the idle timeout %s", took, idle)
			}
		})
	}
	t.Run("keep-alives are activity", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			// Four idle periods of comments, each well inside the timeout.
			for end := time.Now().Add(4 * idle); time.Now().Before(end); {
				io.WriteString(w, ": keep-alive\n\n")
				f.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(idle / 5):
				}
			}
			io.WriteString(w, sse(text("done"), finish("stop"), "[DONE]"))
		})
		msg, err, _ := run(t, provider(s, withLimits(openai.Limits{IdleTimeout: idle})), request())
		if err != nil {
			t.Fatal(err)
		}
		if msg.Text("") != "done" {
			t.Errorf("text %q", msg.Text(""))
		}
	})
}

// An abort of the run is still an abort, not an idle timeout.
func TestStreamAbortIsNotIdle(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	msg, err := provider(s, withLimits(openai.Limits{IdleTimeout: time.Hour})).Stream(ctx, request(), func(llm.StreamEvent, *llm.AssistantMessage) {})
	s.CloseClientConnections()
	if kindOf(t, err).Kind != llm.ErrAborted || msg.StopReason != llm.StopAborted {
		t.Fatalf("err %v stop %q", err, msg.StopReason)
	}
}

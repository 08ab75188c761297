package openai_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
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
// keep-alive comments included, keeps it going. The timeout runs on a
// manual clock that the test moves, so that the machine's load cannot
// fire it (or hold it back) between the reads the test makes.
func TestStreamIdleTimeout(t *testing.T) {
	const idle = 150 * time.Millisecond
	silent := func(head string, got chan<- struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, head)
			w.(http.Flusher).Flush()
			got <- struct{}{}
			<-r.Context().Done()
		}
	}
	// untilIdle moves the clock to just before the timeout (it must not
	// fire yet), then to it.
	untilIdle := func(t *testing.T, clk *openai.ManualClock) {
		clk.Advance(idle - time.Nanosecond)
		if n := clk.Pending(); n != 1 {
			t.Errorf("%d timers pending just before the idle timeout, want 1 (it fired early)", n)
		}
		clk.Advance(time.Nanosecond)
	}
	for _, tc := range []struct {
		name string
		head string
		hold bool // no headers either
	}{
		{"headers then nothing", "", false},
		{"no headers", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan struct{}, 1)
			h := silent(tc.head, got)
			if tc.hold {
				h = func(w http.ResponseWriter, r *http.Request) { got <- struct{}{}; <-r.Context().Done() }
			}
			s := newServer(t, h)
			clk := &openai.ManualClock{}
			p := provider(s, withLimits(openai.Limits{IdleTimeout: idle}))
			openai.SetClock(p, clk)
			// The request is in flight (the timer armed before it was
			// sent); whether the client has seen the headers or not, the
			// reply has not started: a network error. Seeing the headers
			// is activity: when the client saw them while the clock moved,
			// the timer is still pending, and nothing else comes.
			go func() {
				<-got
				untilIdle(t, clk)
				if clk.Pending() > 0 {
					clk.Advance(idle)
				}
			}()
			msg, err, _ := run(t, p, request())
			s.CloseClientConnections()
			checkIdle(t, msg, err, llm.ErrNetwork)
		})
	}
	t.Run("one delta then nothing", func(t *testing.T) {
		got := make(chan struct{}, 1)
		s := newServer(t, silent(sse(text("a")), got))
		clk := &openai.ManualClock{}
		// The clock moves inside the read that returns the delta, before
		// the client sees it: the delta has arrived when the timeout fires.
		var once sync.Once
		p := provider(s, func(o *openai.Options) {
			o.Limits.IdleTimeout = idle
			o.HTTPClient = onBodyRead(s, func() { once.Do(func() { untilIdle(t, clk) }) })
		})
		openai.SetClock(p, clk)
		msg, err, _ := run(t, p, request())
		s.CloseClientConnections()
		checkIdle(t, msg, err, llm.ErrDisconnect)
		if msg.Text("") != "a" {
			t.Errorf("text %q, want the delta", msg.Text(""))
		}
	})
	t.Run("keep-alives are activity", func(t *testing.T) {
		// Each keep-alive comment is read on its own, and every read
		// moves the clock by 4/5 of the timeout before the client sees
		// its bytes: the timeout passes several times over while the
		// comments keep the attempt alive.
		const comments = 5
		read := make(chan struct{}, 64)
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for range comments {
				io.WriteString(w, ": keep-alive\n\n")
				f.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-read:
				}
			}
			io.WriteString(w, sse(text("done"), finish("stop"), "[DONE]"))
		})
		clk := &openai.ManualClock{}
		p := provider(s, func(o *openai.Options) {
			o.Limits.IdleTimeout = idle
			o.HTTPClient = onBodyRead(s, func() {
				clk.Advance(idle * 4 / 5)
				select {
				case read <- struct{}{}:
				default: // the server no longer waits (the last events)
				}
			})
		})
		openai.SetClock(p, clk)
		msg, err, _ := run(t, p, request())
		if err != nil {
			t.Fatal(err)
		}
		if msg.Text("") != "done" {
			t.Errorf("text %q", msg.Text(""))
		}
		if now := clk.Now(); now < comments*idle*4/5 {
			t.Errorf("the clock moved %s, want at least %s (a read per comment)", now, comments*idle*4/5)
		}
	})
}

// checkIdle checks the failure of an attempt the idle timeout ended.
func checkIdle(t *testing.T, msg *llm.AssistantMessage, err error, kind llm.ErrorKind) {
	t.Helper()
	e := kindOf(t, err)
	if e.Kind != kind || !e.Retryable() {
		t.Fatalf("kind %s retryable %v, want %s retryable: %v", e.Kind, e.Retryable(), kind, err)
	}
	if !strings.Contains(e.Message, "idleTimeoutMs") {
		t.Errorf("message %q does not name the key", e.Message)
	}
	if msg.StopReason != llm.StopError {
		t.Errorf("stop reason %q, want error (not aborted)", msg.StopReason)
	}
}

// onBodyRead is s's client with f called in every read of a response body
// that returns bytes, after the read and before the caller gets them.
func onBodyRead(s *server, f func()) *http.Client {
	c := *s.Client()
	c.Transport = hookTransport{c.Transport, f}
	return &c
}

type hookTransport struct {
	inner  http.RoundTripper
	onRead func()
}

func (h hookTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.inner.RoundTrip(r)
	if err == nil {
		resp.Body = hookBody{resp.Body, h.onRead}
	}
	return resp, err
}

type hookBody struct {
	io.ReadCloser
	onRead func()
}

func (b hookBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.onRead()
	}
	return n, err
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

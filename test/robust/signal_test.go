package robust_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal in the middle of a streaming run always exits 128+n: the
// signal wins over every shutdown path it races with (issue 12), also
// when the host closes stdin right after signalling (the stdin-EOF
// shutdown path, which exits 0 on its own).
//
// The four cases run beside each other (t.Parallel): each run's wall is
// mostly the child's start-up and the harness waiting for its lines (6.5 s
// wall for 3.7 CPU-s one after the other); their children are their own.
func TestSignalMidRunExitCode(t *testing.T) {
	const runs = 10
	script := `[{"steps":[{"text":"a"},{"delayMs":5000},{"text":"b"}]}]`
	for _, closeStdin := range []bool{false, true} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(fmt.Sprintf("%s/close-stdin-%v", sig, closeStdin), func(t *testing.T) {
				t.Parallel()
				var codes []int
				for i := 0; i < runs; i++ {
					p := start(t, procConfig{script: script})
					p.send(`{"id":"p","type":"prompt","message":"hi"}`)
					p.waitFor("message_update", 20*time.Second, event("message_update"))
					p.signal(sig)
					if closeStdin {
						_ = p.stdin.Close()
					}
					code, took := p.wait(10 * time.Second)
					codes = append(codes, code)
					if code != 128+int(sig) {
						t.Errorf("%s (close stdin %v) run %d: exit %d after %s, want %d; stderr:\n%s", sig, closeStdin, i, code, took, 128+int(sig), p.stderrText())
					}
				}
				t.Logf("%s, stdin closed after the signal %v: exit codes over %d runs: %v", sig, closeStdin, runs, codes)
			})
		}
	}
}

// A signal while the host has stopped reading a streaming run exits within
// the README's 5 s shutdown grace (plus start-up slack).
func TestSignalWhileHostNotReadingExits(t *testing.T) {
	t.Parallel() // waits out the grace (see waiters)
	script := fmt.Sprintf(`[{"steps":[{"text":%q,"chunkSize":1},{"delayMs":10000}]}]`, strings.Repeat("x", 20000))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			p := start(t, procConfig{script: script, stallAfter: func(l line) bool { return l.Event.Type == "text_delta" }})
			p.send(`{"id":"p","type":"prompt","message":"hi"}`)
			p.waitFor("the host to stop reading", 20*time.Second, func(line) bool { return p.stalled })
			waitBlocked(t, p) // every delta sent, the pipe full, the stream in its delay
			p.signal(sig)
			code, took := p.wait(20 * time.Second)
			t.Logf("%s while not reading: exit %d after %s", sig, code, took.Round(time.Millisecond))
			if code != 128+int(sig) || took > 7*time.Second {
				t.Errorf("%s: exit %d after %s, want %d within the 5 s grace; stderr:\n%s", sig, code, took, 128+int(sig), p.stderrText())
			}
		})
	}
}

// The same with a reply of many content blocks: their start and end events
// are not merged, so the run itself blocks on the full output queue.
func TestSignalWhileRunBlockedOnOutputExits(t *testing.T) {
	t.Parallel() // waits out the grace (see waiters)
	var steps []string
	for i := 0; i < 3000; i++ {
		steps = append(steps, `{"thinking":"t"}`, `{"text":"x"}`)
	}
	script := `[{"steps":[` + strings.Join(steps, ",") + `,{"delayMs":10000}]}]`
	p := start(t, procConfig{script: script, stallAfter: event("hello")})
	p.send(`{"id":"p","type":"prompt","message":"hi"}`)
	// The host reads nothing after hello; the run fills the 64 KiB pipe
	// and the 1024-line queue within a moment. There is no event to wait
	// for, since nothing is read: poll the child's state instead.
	waitBlocked(t, p)
	p.signal(syscall.SIGTERM)
	code, took := p.wait(30 * time.Second)
	t.Logf("SIGTERM with the run blocked on output: exit %d after %s", code, took.Round(time.Millisecond))
	if code != 143 || took > 7*time.Second {
		t.Errorf("exit %d after %s, want 143 within the 5 s grace; stderr:\n%s", code, took, p.stderrText())
	}
}

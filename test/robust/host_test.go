package robust_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stuckHost is an adapter whose session_start handler never settles.
const stuckHost = `module.exports = { hostApi: 1, create(api) {
  api.events.on("session_start", () => {
    process.stderr.write("session_start reached\n");
    return new Promise(() => {});
  });
  return { id: "stuck" };
} };
`

// slowHost is an adapter whose session_start handler takes a while but
// settles.
const slowHost = `module.exports = { hostApi: 1, create(api) {
  api.events.on("session_start", () => new Promise((r) => setTimeout(r, 300)));
  return { id: "slow" };
} };
`

// startHostProc starts ama-rpc with the adapter source as --host.
func startHostProc(t *testing.T, adapter string, env ...string) *proc {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the host adapter needs it")
	}
	path := filepath.Join(t.TempDir(), "adapter.cjs")
	if err := os.WriteFile(path, []byte(adapter), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, procConfig{args: []string{"--model", "fake/echo", "--host", path}, script: okScript, env: env})
}

// A session_start handler that never settles fails the startup after the
// startup bound (10 s; shortened here by the test-only variable, which
// leaves create() its 10 s: the adapter's start, node included, took over
// 1.5 s on a loaded machine, and a shared bound then ended create()
// first): exit 6, no hello, stderr says why. It held the process forever.
func TestHostStuckSessionStartExits6(t *testing.T) {
	t.Parallel() // waits out the startup bound (see waiters)
	p := startHostProc(t, stuckHost, "AMA_HOST_STARTUP_TIMEOUT_MS=1500")
	code, took := p.wait(60 * time.Second)
	t.Logf("exit %d after %s", code, took.Round(time.Millisecond))
	if code != 6 {
		t.Fatalf("exit %d, want 6; stderr:\n%s", code, p.stderrText())
	}
	if !strings.Contains(p.stderrText(), "session_start handlers did not settle within 1.5s") {
		t.Errorf("stderr does not say why:\n%s", p.stderrText())
	}
	if n := p.mark(); n != 0 {
		t.Errorf("%d lines on stdout, want none (no hello)", n)
	}
}

// stdin ending while the startup waits for a stuck adapter ends the
// process at once, long before the startup bound (60 s here): during
// create() (stdin closed right away) and during the session_start
// handlers.
func TestHostStuckSessionStartEndsAtStdinEOF(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after string // stderr text to wait for before closing stdin
	}{
		{"during create", ""},
		{"during session_start", "session_start reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startHostProc(t, stuckHost, "AMA_HOST_CREATE_TIMEOUT_MS=60000")
			if tc.after != "" {
				p.waitStderr(tc.after, 30*time.Second)
			}
			_ = p.stdin.Close()
			code, took := p.wait(30 * time.Second)
			t.Logf("exit %d %s after stdin closed", code, took.Round(time.Millisecond))
			if code != 6 {
				t.Fatalf("exit %d, want 6; stderr:\n%s", code, p.stderrText())
			}
			if !strings.Contains(p.stderrText(), "stdin ended") {
				t.Errorf("stderr does not say why:\n%s", p.stderrText())
			}
			if n := p.mark(); n != 0 {
				t.Errorf("%d lines on stdout, want none (no hello)", n)
			}
		})
	}
}

// Commands sent before stdin ends are still served when the adapter's
// session_start is slow but settles: the end of stdin only cuts the wait
// when nothing is left to read.
func TestHostSlowSessionStartServesBufferedCommands(t *testing.T) {
	p := startHostProc(t, slowHost)
	p.send(`{"id":"s","type":"get_state"}`)
	_ = p.stdin.Close()
	p.waitFor("the get_state response", 30*time.Second, response("s"))
	if code, _ := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderrText())
	}
}

package robust_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The host closing its end of stdout is a disconnect, not a SIGPIPE death
// (exit 141): the server logs it on stderr, lets the started run finish
// (like stdin EOF) and exits 0 even though stdin stays open.
func TestClosedStdoutIsADisconnect(t *testing.T) {
	// More output than the pipe holds (deltas merge into few lines), so
	// that a write after the close is certain even when the reply is
	// complete before the host closes (it was not on a loaded machine:
	// all output fitted in the pipe, no write failed, the server waited
	// for stdin).
	script := `[{"steps":[{"text":"` + strings.Repeat("y", 200000) + `","chunkSize":10}]}]`
	p := start(t, procConfig{script: script, stallAfter: response("p")})
	p.send(`{"id":"p","type":"prompt","message":"hi"}`)
	p.waitFor("the prompt's response", 20*time.Second, response("p"))
	_ = p.stdout.Close() // the host closes its read end mid-run
	checkDisconnect(t, p, "run")
}

// checkDisconnect waits for a server whose host closed stdout mid-run: it
// exits 0, says so on stderr, and the run's reply (a text of at least
// 5,000 "y") is in a session file.
func checkDisconnect(t *testing.T, p *proc, what string) {
	t.Helper()
	code, took := p.wait(20 * time.Second)
	t.Logf("%s: closed stdout, stdin open: exit %d after %s", what, code, took.Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderrText())
	}
	if !strings.Contains(p.stderrText(), "stdout is closed") {
		t.Errorf("stderr does not report the disconnect:\n%s", p.stderrText())
	}
	files, _ := filepath.Glob(filepath.Join(p.home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
	found := false
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), strings.Repeat("y", 5000)) {
			found = true
		}
	}
	if !found {
		t.Errorf("the %s's reply is not in any session file (%v)", what, files)
	}
}

// The pipeline of the issue: printf … | ama-rpc | head -c 10.
func TestPipelineIntoHead(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`[{"steps":[{"text":"`+strings.Repeat("z", 3000)+`","chunkSize":1}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	head := exec.Command("head", "-c", "10")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	head.Stdin = r
	if err := head.Start(); err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, "--model", "fake/echo")
	srv.Dir = dir
	srv.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "AMA_FAKE_SCRIPT=" + script, "AMA_LANG=en"}
	srv.Stdin = strings.NewReader(`{"type":"prompt","message":"hi"}` + "\n")
	srv.Stdout = w
	var stderr strings.Builder
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	_ = w.Close()
	_ = head.Wait() // head exits after 10 bytes, closing the pipe
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = srv.Process.Kill()
		t.Fatal("the server did not exit after head closed the pipe")
	}
	if code := exitCode(srv.ProcessState); code != 0 {
		t.Fatalf("… | ama-rpc | head -c 10: exit %d, want 0; stderr:\n%s", code, stderr.String())
	}
}

package robust_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The shutdown guarantees of the rpc mode (signal_test.go, pipe_test.go)
// hold for --mode acp too.

func startACP(t *testing.T, cfg procConfig) *proc {
	t.Helper()
	cfg.args = []string{"--mode", "acp", "--model", "fake/echo"}
	return start(t, cfg)
}

func answer(id string) func(line) bool {
	return func(l line) bool { return l.Method == "" && l.ID == id }
}

func chunk(l line) bool {
	return l.Method == "session/update" && l.Params.Update.SessionUpdate == "agent_message_chunk"
}

// acpPrompt opens a session and sends a prompt (answered "p").
func acpPrompt(t *testing.T, p *proc) {
	t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, p.work))
	sid := p.waitFor("session/new", 20*time.Second, answer("new")).Result.SessionID
	if sid == "" {
		t.Fatalf("session/new failed; stderr:\n%s", p.stderrText())
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, sid))
}

// A signal in the middle of a turn exits 128+n, also when the host closes
// stdin right after signalling (the end-of-input shutdown then races it).
func TestACPSignalMidRunExitCode(t *testing.T) {
	const runs = 3
	script := `[{"steps":[{"text":"a"},{"delayMs":5000},{"text":"b"}]}]`
	for _, closeStdin := range []bool{false, true} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			var codes []int
			for i := 0; i < runs; i++ {
				p := startACP(t, procConfig{script: script})
				acpPrompt(t, p)
				p.waitFor("agent_message_chunk", 20*time.Second, chunk)
				p.signal(sig)
				if closeStdin {
					_ = p.stdin.Close()
				}
				code, took := p.wait(10 * time.Second)
				codes = append(codes, code)
				if code != 128+int(sig) || took > 7*time.Second {
					t.Errorf("%s (close stdin %v) run %d: exit %d after %s, want %d; stderr:\n%s", sig, closeStdin, i, code, took, 128+int(sig), p.stderrText())
				}
			}
			t.Logf("acp: %s, stdin closed after the signal %v: exit codes over %d runs: %v", sig, closeStdin, runs, codes)
		}
	}
}

// A signal while the host has stopped reading a streaming turn exits within
// the 5 s shutdown grace: the turn's updates block on the full output
// queue, and the sessions cannot close until the output is abandoned.
func TestACPSignalWhileHostNotReadingExits(t *testing.T) {
	t.Parallel() // waits for the blocked output (see waiters)
	script := fmt.Sprintf(`[{"steps":[{"text":%q,"chunkSize":1},{"delayMs":10000}]}]`, strings.Repeat("x", 20000))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := startACP(t, procConfig{script: script, stallAfter: chunk})
		acpPrompt(t, p)
		p.waitFor("the host to stop reading", 20*time.Second, func(line) bool { return p.stalled })
		waitBlocked(t, p)
		p.signal(sig)
		code, took := p.wait(20 * time.Second)
		t.Logf("acp: %s while not reading: exit %d after %s", sig, code, took.Round(time.Millisecond))
		if code != 128+int(sig) || took > 7*time.Second {
			t.Errorf("%s: exit %d after %s, want %d within the 5 s grace; stderr:\n%s", sig, code, took, 128+int(sig), p.stderrText())
		}
	}
}

// The host closing its end of stdout is a disconnect: logged on stderr,
// the started turn finishes (its reply kept in the session file), exit 0
// although stdin stays open, never SIGPIPE (141).
func TestACPClosedStdoutIsADisconnect(t *testing.T) {
	// More output than the pipe holds even when chunks join into few
	// lines while the host does not read (as in TestClosedStdoutIsADisconnect),
	// so a write after the close is certain.
	script := `[{"steps":[{"text":"` + strings.Repeat("y", 200000) + `","chunkSize":10}]}]`
	p := startACP(t, procConfig{script: script, stallAfter: chunk})
	acpPrompt(t, p)
	p.waitFor("the first chunk", 20*time.Second, chunk)
	_ = p.stdout.Close() // the host closes its read end mid-turn
	checkDisconnect(t, p, "acp turn")
}

// Huge prompts over ACP meet the same target as over rpc (mem_test.go):
// peak RSS under 4x the largest line plus 30 MB for three 40 MiB prompts
// in a row, the first of them alone included (their entries leave the
// heap once on disk, store/spill.go).
func TestACPMemoryOfHugePrompts(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 360 MiB through the server")
	}
	t.Parallel() // see memParallel
	// Three 40 MiB embedded image resources (issue 28 §2, 10 runs, load
	// 24-37): 137-155 MB, median 154, once their blobs stayed the line's
	// bytes (internal/jsonlit); 197-221 MB, median 218, before (a copy).
	// Measured (three 40 MiB prompts, a loaded 2-core machine, issue 28):
	// plain 178-189 MB, escaped 170-180, images 175-180 (10 runs); images
	// 138-156 MB once their data stayed the line's bytes (was 182-183 in
	// the same runs: a copy of the data beside the line); they varied
	// 174-201 / 179-206 / 187-189 while the reader's doubled-through
	// buffers stayed resident beside the handling (memlimit.Reserve now
	// returns them) and the text was held as line, block text and joined
	// message at once (rpc/acp joinParts). Earlier: one 50 MiB prompt
	// 181-190 MB, four 40 MiB prompts 185 MB
	// (plain) and 162 MB (escaped); before: 623 MB and 405-430 MB (the
	// library decoded each request through a json.Decoder and copied its
	// params twice; the session title split the first prompt into lines
	// every turn).
	const text, image = `{"type":"text","text":"`, `{"type":"image","mimeType":"image/png","data":"`
	const resource = `{"type":"resource","resource":{"uri":"file:///w/a.png","mimeType":"image/png","blob":"`
	for _, tc := range []struct {
		name   string
		count  int
		size   int
		block  string
		filler string
		end    string
	}{
		{"three 40 MiB prompts", 3, 40 * mib, text, "a", `"}`},
		{"three 40 MiB prompts with escapes", 3, 40 * mib, text, `abc\n`, `"}`},
		{"three 40 MiB images", 3, 40 * mib, image, "QUJD", `"}`},
		{"three 40 MiB image resources", 3, 40 * mib, resource, "QUJD", `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startACP(t, procConfig{script: okScript, env: []string{os.Getenv("AMA_ROBUST_CHILD_ENV")}, dropHuge: true})
			p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, p.work))
			sid := p.waitFor("session/new", 20*time.Second, answer("new")).Result.SessionID
			prompt := numbered(fillLine(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p0","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"look"},`, sid)+tc.block, tc.filler, tc.size, tc.end+`]}}`))
			var size int
			for i := 0; i < tc.count; i++ {
				id := fmt.Sprintf("p%d", i)
				line := prompt(i)
				size = len(line)
				p.sendBytes(line)
				if l := p.waitFor("the prompt's answer", 60*time.Second, answer(id)); l.Result.StopReason != "end_turn" {
					t.Fatalf("prompt %d: stop reason %q; stderr:\n%s", i, l.Result.StopReason, p.stderrText())
				}
				t.Logf("after prompt %d: RSS %.0f MB (file pages %.0f MB)", i+1, float64(p.vmRSS())/1e6, float64(p.procStatus("RssFile"))/1e6)
			}
			peak := finish(t, p)
			if os.Getenv("AMA_ROBUST_CHILD_ENV") != "" {
				t.Log(p.stderrText())
			}
			limit := rssLimit(size) * 11 / 10
			t.Logf("acp, %s: peak RSS %.0f MB (guard %.0f MB; issue target %.0f MB)", tc.name, float64(peak)/1e6, float64(limit)/1e6, float64(rssLimit(size))/1e6)
			if peak > limit {
				t.Errorf("peak RSS %d > %d", peak, limit)
			}
		})
	}
}

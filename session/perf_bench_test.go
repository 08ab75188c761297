package session

// Benchmarks of the costs that grow with a session's life (issue 19):
// resuming a long session, get_state on it, and a trivial turn, each next
// to its floor where there is one (reading the same file and counting its
// lines). The session files are generated once per test binary run, in a
// temporary directory that TestMain removes.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/telemetry"
)

// perfFiles caches the generated session files by name.
var perfFiles struct {
	mu    sync.Mutex
	dir   string
	paths map[string]string
}

// perfFile returns the path of a generated session of n entries; with
// compacted, a compaction sits 50 entries before the end (keeping the
// last turn before it).
func perfFile(tb testing.TB, n int, compacted bool) string {
	tb.Helper()
	perfFiles.mu.Lock()
	defer perfFiles.mu.Unlock()
	key := fmt.Sprintf("%d-%v", n, compacted)
	if p, ok := perfFiles.paths[key]; ok {
		return p
	}
	if perfFiles.dir == "" {
		dir, err := os.MkdirTemp("", "ama-session-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		perfFiles.dir, perfFiles.paths = dir, map[string]string{}
	}
	path := filepath.Join(perfFiles.dir, key+".jsonl")
	if err := writePerfSession(path, n, compacted); err != nil {
		tb.Fatal(err)
	}
	perfFiles.paths[key] = path
	return path
}

func cleanupPerfFiles() {
	if perfFiles.dir != "" {
		os.RemoveAll(perfFiles.dir)
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv("AMA_RESUME_RSS_CHILD"); path != "" {
		os.Exit(resumeRSSChild(path))
	}
	code := m.Run()
	cleanupPerfFiles()
	os.Exit(code)
}

// writePerfSession writes a session of n entries: the session's opening
// (model, thinking level, system prompt), then turns of a user prompt, a
// checkpoint, an assistant reply with thinking and a tool call (usage),
// a trace step, a tool result with a page of file content and a final
// assistant text, with occasional labels, names and thinking changes.
// Lines are formatted directly (generating 1M entries through the
// encoder would take longer than the benchmark).
func writePerfSession(path string, n int, compacted bool) error {
	h := store.NewHeader("bench-session", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), "/work/proj", "0.0.0-bench")
	f, err := store.Create(path, h, nil)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer out.Close()
	var page strings.Builder
	for i := 0; page.Len() < 600; i++ {
		fmt.Fprintf(&page, `%4d\tfunc handler%d(w http.ResponseWriter, r *http.Request) { /* \"quoted\" */ }\n`, i, i)
	}
	buf := make([]byte, 0, 1<<20)
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	compactAt := -1
	if compacted {
		compactAt = n - 50
	}
	parent := ""
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("%08x", i)
		ts := t0.Add(time.Duration(i) * time.Second)
		iso, ms := store.FormatTime(ts), ts.UnixMilli()
		var body string
		switch {
		case i == 1:
			body = `"type":"model_change","provider":"fake","modelId":"echo"`
		case i == 2:
			body = `"type":"thinking_level_change","thinkingLevel":"medium"`
		case i == 3:
			body = fmt.Sprintf(`"type":"message","message":{"role":"system","sections":{"preamble":"You are a coding agent.","cwd":"/work/proj"},"toolsAdded":[],"timestamp":%d}`, ms)
		case i == compactAt:
			body = fmt.Sprintf(`"type":"compaction","summary":"The user fixed %d handlers.","firstKeptEntryId":"%08x","tokensBefore":150000`, i/7, i-7)
		default:
			switch i % 7 {
			case 0:
				body = fmt.Sprintf(`"type":"message","message":{"role":"user","content":"Please look at handler %d and explain why the request fails with a 500 when the body is empty; then fix it.","timestamp":%d}`, i, ms)
			case 1:
				body = fmt.Sprintf(`"type":"custom","customType":"ama.checkpoint","data":{"v":1,"userEntryId":"%s","files":{}}`, parent)
			case 2:
				body = fmt.Sprintf(`"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"I should read the file first.","thinkingSignature":"sig-0123"},{"type":"text","text":"Let me read the handler first."},{"type":"toolCall","id":"call_%08d","name":"read","arguments":{"path":"internal/server/handler.go"}}],"api":"fake","provider":"fake","model":"echo","usage":{"input":%d,"output":60,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":%d}`, i, 1000+i%500, 1060+i%500, ms)
			case 3:
				body = fmt.Sprintf(`"type":"custom","customType":"ama.trace","data":{"kind":"step","attempt":1,"assistantEntryId":"%s","requestAt":%d,"doneAt":%d,"outputTokens":60}`, parent, ms-900, ms)
			case 4:
				body = fmt.Sprintf(`"type":"message","message":{"role":"toolResult","toolCallId":"call_%08d","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":%d}`, i-2, page.String(), ms)
			case 5:
				body = fmt.Sprintf(`"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"The handler dereferences the body without checking io.EOF; fixed."}],"api":"fake","provider":"fake","model":"echo","usage":{"input":%d,"output":30,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":%d}`, 1100+i%500, 1130+i%500, ms)
			default:
				switch (i / 7) % 3 {
				case 0:
					body = fmt.Sprintf(`"type":"label","targetId":"%s","label":"checkpoint %d"`, parent, i)
				case 1:
					body = fmt.Sprintf(`"type":"session_info","name":"session %d"`, i)
				default:
					body = `"type":"thinking_level_change","thinkingLevel":"high"`
				}
			}
		}
		buf = append(buf, '{')
		buf = append(buf, body...)
		buf = append(buf, `,"id":"`...)
		buf = append(buf, id...)
		if parent == "" {
			buf = append(buf, `","parentId":null`...)
		} else {
			buf = append(buf, `","parentId":"`...)
			buf = append(buf, parent...)
			buf = append(buf, '"')
		}
		buf = append(buf, `,"timestamp":"`...)
		buf = append(buf, iso...)
		buf = append(buf, "\"}\n"...)
		parent = id
		if len(buf) > 1<<20-4096 {
			if _, err := out.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err = out.Write(buf)
	return err
}

// perfDeps are the dependencies of a benchmark session: the fake provider
// answering "ok" with fixed usage (so that the provider itself does not
// weigh the context), no auto-compaction, nothing persisted but the
// resumed file.
func perfDeps(tb testing.TB) *Deps {
	input := 1000
	fp := fake.New(fake.Options{Script: &fake.Script{
		Responses:     []fake.Response{{Text: text("ok"), Usage: &fake.UsageSpec{Input: &input}}},
		WhenExhausted: "repeat-last",
	}})
	var n, u atomic.Int64
	return &Deps{
		Models:     llm.NewRegistry(fp.Entry()),
		NewEntryID: func() string { return fmt.Sprintf("b%07x", n.Add(1)) },
		NewUUID:    func() string { return fmt.Sprintf("uuid-%d", u.Add(1)) },
		Dirs:       Dirs{Data: tb.TempDir(), Home: tb.TempDir()},
		Settings:   Settings{NoAutoCompaction: true},
		Tools:      &testTools{},
		Policy:     &approvals.Policy{Mode: approvals.ModeDefault, PlanBash: approvals.PlanBashReadonly},
		Reporting:  telemetry.NewReporting(),
	}
}

// readFloor reads path and counts its lines: the floor of a resume.
func readFloor(tb testing.TB, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Count(data, []byte{'\n'})
}

func benchResume(b *testing.B, n int) {
	path := perfFile(b, n, false)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	deps := perfDeps(b)
	b.Run("floor", func(b *testing.B) {
		b.SetBytes(fi.Size())
		cpu := cpuMeter(b)
		for b.Loop() {
			if readFloor(b, path) != n+1 {
				b.Fatal("line count")
			}
		}
		cpu()
	})
	b.Run("resume", func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		cpu := cpuMeter(b)
		for b.Loop() {
			s, err := Open(deps, path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			st, err := s.State()
			if err != nil || st.Model == nil || st.Model.ID != "echo" || st.ThinkingLevel != "high" {
				b.Fatalf("state after resume: %+v %v", st, err)
			}
			s.Close()
		}
		cpu()
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	})
	if n >= 1_000_000 {
		b.Run("peak-rss", func(b *testing.B) {
			for b.Loop() {
				rss := resumeRSS(b, path)
				b.ReportMetric(float64(rss)/1e6, "peak-RSS-MB")
				b.ReportMetric(float64(rss)/float64(fi.Size()), "RSS/file")
				if rss >= 2*fi.Size() { // the budget of issue 19
					b.Errorf("peak RSS of the resume %.0f MB, budget 2x the file (%.0f MB)", float64(rss)/1e6, 2*float64(fi.Size())/1e6)
				}
			}
		})
	}
}

// cpuMeter starts measuring the process CPU time; the returned function
// reports it per iteration as cpu-ms/op (on a shared machine wall time
// mostly measures the neighbours; the GC's CPU is included).
func cpuMeter(b *testing.B) func() {
	start, ok := cpuTime()
	return func() {
		if end, ok2 := cpuTime(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64((end-start).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		}
	}
}

// BenchmarkResume100k opens a session of 100,000 entries and reads its
// state (model, thinking level, message count), next to the floor: reading
// the file and counting its lines.
func BenchmarkResume100k(b *testing.B) { benchResume(b, 100_000) }

// BenchmarkResume1M is the same at 1,000,000 entries, plus the peak RSS of
// a process that does only the resume.
func BenchmarkResume1M(b *testing.B) { benchResume(b, 1_000_000) }

// resumeRSS runs the test binary as a child that resumes path and reports
// its peak RSS (VmHWM) in bytes.
func resumeRSS(tb testing.TB, path string) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AMA_RESUME_RSS_CHILD="+path)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("resume child: %v", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		tb.Fatalf("resume child said %q", out)
	}
	return v
}

// resumeRSSChild resumes path, reads its state and prints VmHWM in bytes.
func resumeRSSChild(path string) int {
	deps := perfDeps(&testing.B{})
	s, err := Open(deps, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := s.State(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s.Close()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			fmt.Println(kb * 1024)
			return 0
		}
	}
	return 1
}

// openPerf resumes a generated session for a benchmark; the session is
// closed at cleanup.
func openPerf(b *testing.B, n int, compacted bool) *Session {
	// Each benchmark appends to its file: work on a copy.
	src := perfFile(b, n, compacted)
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	s, err := Open(perfDeps(b), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

// BenchmarkGetState100k is get_state on a resumed session of 100,000
// entries (after a first call).
func BenchmarkGetState100k(b *testing.B) {
	s := openPerf(b, 100_000, false)
	if _, err := s.State(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		st, err := s.State()
		if err != nil || st.MessageCount == 0 {
			b.Fatalf("state: %+v %v", st, err)
		}
	}
}

// BenchmarkTurn100k is a trivial turn (prompt, reply "ok", settle) on a
// resumed session of 100,000 entries, without and with a compaction near
// the end of the branch.
func BenchmarkTurn100k(b *testing.B) {
	for _, compacted := range []bool{false, true} {
		name := "plain"
		if compacted {
			name = "compacted"
		}
		b.Run(name, func(b *testing.B) {
			s := openPerf(b, 100_000, compacted)
			turn := func() {
				done := make(chan error, 1)
				s.Prompt("prompt", PromptInput{Message: "hi"}, func(_ Disposition, err error) { done <- err })
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				if err := s.WaitIdle(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			turn() // the first turn after a resume builds what later turns reuse
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				turn()
			}
		})
	}
}

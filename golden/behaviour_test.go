package golden_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/internal/stdio"
)

func isType(typ string) func(*golden.Object) bool {
	return func(o *golden.Object) bool { return o.String("type") == typ }
}

func isResponse(id string) func(*golden.Object) bool {
	return func(o *golden.Object) bool { return o.String("type") == "response" && o.String("id") == id }
}

// A host that stops reading while a long reply streams: the writer's queue
// stays bounded, deltas merge, and the host rebuilds exactly the reply.
func TestStalledReaderBoundedMemory(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50000; i++ {
		b.WriteByte(byte('a' + i%26))
	}
	text := b.String()
	script, _ := json.Marshal([]any{map[string]any{"steps": []any{map[string]any{"text": text, "chunkSize": 1}}}})
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo", "--no-session"}, Script: script,
		Writer: stdio.WriterOptions{MaxItems: 16, MaxBytes: 64 << 10}})
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Stall()
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.Poll("merged deltas", func() bool {
		s := r.Server()
		return s != nil && s.Writer().Stats().MergedDeltas > 10000
	})
	r.Resume()
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	st := r.Server().Writer().Stats()
	if st.PeakItems > 16 {
		t.Errorf("queue held %d items, bound is 16", st.PeakItems)
	}
	if st.PeakQueueBytes > len(text)+64<<10 {
		t.Errorf("queue held %d bytes for a %d-byte reply", st.PeakQueueBytes, len(text))
	}
	var rebuilt strings.Builder
	deltas := 0
	for _, l := range r.Lines() {
		var v struct {
			Type string
			E    struct {
				Type  string
				Delta string
			} `json:"assistantMessageEvent"`
		}
		if json.Unmarshal(l, &v) == nil && v.Type == "message_update" && v.E.Type == "text_delta" {
			rebuilt.WriteString(v.E.Delta)
			deltas++
		}
	}
	if rebuilt.String() != text {
		t.Fatalf("rebuilt %d characters from %d delta lines; want the exact %d-character reply", rebuilt.Len(), deltas, len(text))
	}
	if deltas >= 50000 {
		t.Errorf("no delta was merged while the host was not reading")
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// The interrupt golden's side conditions: three model calls, and the
// second request keeps every message of the first as its prefix and ends
// with the combined steer text.
func TestInterruptKeepsCachePrefix(t *testing.T) {
	script := []byte(`[{"steps":[{"text":"working"},{"delayMs":5000},{"text":" never"}]},{"text":"switched"},{"text":"idle"}]`)
	record := filepath.Join(t.TempDir(), "record.jsonl")
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: script,
		Env: map[string]string{"AMA_FAKE_RECORD": record}})
	r.Send(`{"id":"p","type":"prompt","message":"start"}`)
	r.WaitFor("message_update", 1, isType("message_update"))
	r.Send(`{"id":"s","type":"steer","message":"note first"}`)
	r.WaitFor("steer response", 1, isResponse("s"))
	r.Send(`{"id":"i","type":"steer","message":"do B now","interrupt":true}`)
	r.WaitFor("second settle", 2, isType("agent_settled"))
	r.Send(`{"id":"idle","type":"prompt","message":"hello","interrupt":true}`)
	r.WaitFor("third settle", 3, isType("agent_settled"))
	r.CloseStdin()
	r.Wait()
	calls := readRecord(t, record)
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	first, second := calls[0].Messages, calls[1].Messages
	if len(second) <= len(first) {
		t.Fatalf("second request has %d messages, first %d", len(second), len(first))
	}
	for i := range first {
		if string(first[i]) != string(second[i]) {
			t.Fatalf("message %d differs between the requests:\n%s\n%s", i, first[i], second[i])
		}
	}
	var last struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Origin  string `json:"origin"`
	}
	_ = json.Unmarshal(second[len(second)-1], &last)
	if last.Role != "user" || last.Content != "note first\n\ndo B now" || last.Origin != "interrupt" {
		t.Fatalf("second request ends with %+v", last)
	}
}

type recordLine struct {
	Index    int               `json:"index"`
	Purpose  string            `json:"purpose"`
	Messages []json.RawMessage `json:"messages"`
}

func readRecord(t *testing.T, path string) []recordLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recordLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var l recordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// Background bash jobs report their lifecycle as background_job events
// (checked on the one play of the fixture rpc/background).
var _ = afterFixture("rpc/background", "background job events", func(t *testing.T, r *golden.Run, _ *golden.Case) {
	var phases []string
	ids := map[string]bool{}
	for _, l := range r.Lines() {
		var v struct {
			Type, JobID, Phase, Command, OutputPath string
			PID                                     int
		}
		if json.Unmarshal(l, &v) == nil && v.Type == "background_job" {
			phases = append(phases, v.Phase)
			ids[v.JobID] = true
			if v.PID == 0 || v.OutputPath == "" || !strings.Contains(v.Command, "sleep 30") {
				t.Errorf("incomplete event %s", l)
			}
		}
	}
	if strings.Join(phases, ",") != "started,stopped" || len(ids) != 1 || !ids["j1"] {
		t.Fatalf("phases %v ids %v", phases, ids)
	}
})

// A signal while the host has stopped reading (the dispatcher is blocked on
// a full output queue): the server still exits, after the shutdown grace.
func TestSignalWithStalledHostExits(t *testing.T) {
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo", "--no-session"},
		Writer: stdio.WriterOptions{MaxItems: 4, MaxBytes: 64 << 10}, ShutdownGrace: 100 * time.Millisecond})
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Stall()
	for i := 0; i < 32; i++ {
		r.Send(`{"type":"get_state"}`)
	}
	// The queue full now, not only once: with the reader stalled the
	// writer cannot drain it, so the shutdown's flush is stuck (a peak
	// alone could be drained by the write the reader took just before
	// stalling, and a dispatcher between commands would then shut down in
	// order, which failed this test once in 200 runs under load).
	r.Poll("full output queue", func() bool {
		s := r.Server()
		return s != nil && s.Writer().Stats().Queued >= 4
	})
	r.Interrupt(app.SignalError{Signal: syscall.SIGTERM})
	if code := r.Wait(); code != 143 {
		t.Fatalf("exit code %d, want 143", code)
	}
	if !strings.Contains(r.Stderr(), "shutdown did not finish in time") {
		t.Errorf("stderr does not explain the forced exit:\n%s", r.Stderr())
	}
}

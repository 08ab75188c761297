package golden_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/test/testbin"
)

// buildBinary compiles ama-rpc once per test binary run (eight tests
// spawn it; each link used to cost seconds of CPU); TestMain removes it.
// make test builds it once for every package that spawns it and names it
// in AMA_TEST_BIN.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "ama-golden-"); built.err == nil {
			built.bin, built.err = testbin.Path(built.dir, "../cmd/ama-rpc")
		}
	})
	if built.err != nil {
		t.Fatalf("build: %v", built.err)
	}
	return built.bin
}

var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

func TestMain(m *testing.M) {
	golden.ScrubLocale() // the goldens are the same on a machine with a Chinese locale
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// A session killed with SIGKILL in the middle of a stream reopens with
// every entry that was reported in entry_appended.
func TestSigkillKeepsReportedEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home := t.TempDir()
	work := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`[{"text":"done","usage":{"input":1,"output":1}},
		{"steps":[{"text":"streaming forever","chunkSize":1},{"delayMs":60000}],"usage":{"input":1,"output":1}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--model", "fake/echo")
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AMA_FAKE_SCRIPT=" + script, "AMA_LANG=en"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var reported []string
	file := ""
	settled := 0
	send(`{"id":"p1","type":"prompt","message":"first"}`)
	for sc.Scan() {
		var v struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Entry struct {
				ID string `json:"id"`
			} `json:"entry"`
			Data struct {
				SessionFile string `json:"sessionFile"`
			} `json:"data"`
			Event struct {
				Type string `json:"type"`
			} `json:"assistantMessageEvent"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		switch {
		case v.Type == "entry_appended":
			reported = append(reported, v.Entry.ID)
		case v.Type == "agent_settled":
			settled++
			send(`{"id":"st","type":"get_state"}`)
		case v.Type == "response" && v.ID == "st":
			file = v.Data.SessionFile
			send(`{"id":"p2","type":"prompt","message":"second"}`)
		}
		if settled == 1 && v.Type == "message_update" && v.Event.Type == "text_delta" {
			break // mid-stream of the second reply
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if file == "" || len(reported) < 8 {
		t.Fatalf("session file %q, %d entries reported", file, len(reported))
	}
	snap, err := store.ReadSnapshot(file)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	have := map[string]bool{}
	for _, e := range snap.Entries {
		have[e.ID] = true
	}
	for _, id := range reported {
		if !have[id] {
			t.Errorf("entry %s was reported in entry_appended but is not in the file", id)
		}
	}
	// The file can be opened for writing again (the lock of the killed
	// process is stale and taken over).
	f, _, err := store.Open(file, store.OpenOptions{})
	if err != nil {
		t.Fatalf("open for writing: %v", err)
	}
	_ = f.Close()
}

package golden_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// kproc is one ama-rpc process driven line by line.
type kproc struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	sc    *bufio.Scanner
	// stderr collects the process's stderr (read it after Wait).
	stderr *bytes.Buffer
}

func startKproc(t *testing.T, bin, home, work string, env []string, args ...string) *kproc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = work
	cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AMA_LANG=en"}, env...) // English whatever the machine's locale
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &kproc{t: t, cmd: cmd, stdin: stdin, sc: sc, stderr: &stderr}
}

func (p *kproc) send(line string) {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// until reads lines until stop returns true; it returns every line read.
func (p *kproc) until(stop func(map[string]any) bool) []map[string]any {
	var got []map[string]any
	for p.sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(p.sc.Bytes(), &v); err != nil {
			p.t.Fatalf("bad line %q", p.sc.Text())
		}
		got = append(got, v)
		if stop(v) {
			return got
		}
	}
	p.t.Fatalf("stdout ended; read %d lines", len(got))
	return nil
}

// Issue 12: an entry announced in entry_appended is on disk. SIGKILL right
// after the startup entries are announced, then --resume <id> opens the
// session with them; a process that never ran announces nothing.
func TestSigkillAfterStartupEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`[{"delayMs":60000,"text":"never"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"AMA_FAKE_SCRIPT=" + script}

	// 1. Commands that append entries before any run: nothing is
	// announced, as nothing is on disk yet.
	const idle = "6f0c2a4e-1b3d-4c5e-8f70-9a1b2c3d4e5f"
	p := startKproc(t, bin, home, work, env, "--model", "fake/echo", "--session-id", idle)
	p.send(`{"id":"n","type":"set_session_name","name":"x"}`)
	p.send(`{"id":"s","type":"get_state"}`)
	for _, l := range p.until(func(v map[string]any) bool { return v["id"] == "s" }) {
		if l["type"] == "entry_appended" {
			t.Fatalf("entry announced before the session file exists: %v", l)
		}
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()

	// 2. A prompt: the file is created and then the startup entries are
	// announced; SIGKILL right after them.
	const id = "0b5e6f3a-3c1d-4e2f-9a7b-1c2d3e4f5a6b"
	p = startKproc(t, bin, home, work, env, "--model", "fake/echo", "--session-id", id)
	p.send(`{"id":"p","type":"prompt","message":"hi"}`)
	var announced []string
	p.until(func(v map[string]any) bool {
		if v["type"] == "entry_appended" {
			e := v["entry"].(map[string]any)
			announced = append(announced, e["id"].(string))
			if m, ok := e["message"].(map[string]any); ok && m["role"] == "system" {
				return true
			}
		}
		if v["type"] == "before_agent_start" {
			t.Fatal("before_agent_start came before the startup entries")
		}
		return false
	})
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	if len(announced) != 3 {
		t.Fatalf("announced %v, want the three startup entries", announced)
	}

	r := startKproc(t, bin, home, work, env, "--model", "fake/echo", "--resume", id)
	r.send(`{"id":"e","type":"get_entries"}`)
	lines := r.until(func(v map[string]any) bool { return v["id"] == "e" })
	resp := lines[len(lines)-1]
	if resp["success"] != true {
		t.Fatalf("get_entries after resume: %v", resp)
	}
	b, _ := json.Marshal(resp["data"])
	for _, eid := range announced {
		if !strings.Contains(string(b), `"id":"`+eid+`"`) {
			t.Errorf("announced entry %s is not in the resumed session", eid)
		}
	}
	_ = r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("resumed process: %v", err)
	}
}

// While the disk refuses writes nothing is announced; the entries are
// announced, in order, by the write that finally stores them.
func TestNoAnnouncementWhileTheDiskRefuses(t *testing.T) {
	var fault atomic.Pointer[error]
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"},
		WriteFault: func() error {
			if e := fault.Load(); e != nil {
				return *e
			}
			return nil
		}})
	r.Send(`{"id":"p1","type":"prompt","message":"one"}`)
	r.WaitFor("settled 1", 1, isType("agent_settled"))
	before := len(r.Lines())
	full := error(&fs.PathError{Op: "write", Path: "session", Err: syscall.ENOSPC})
	fault.Store(&full)
	r.Send(`{"id":"p2","type":"prompt","message":"two"}`)
	r.WaitFor("settled 2", 2, isType("agent_settled"))
	during := r.Lines()[before:]
	for _, l := range during {
		if strings.Contains(string(l), `"type":"entry_appended"`) {
			t.Fatalf("announced while the disk refused: %s", l)
		}
	}
	fault.Store(nil)
	r.Send(`{"id":"p3","type":"prompt","message":"three"}`)
	r.WaitFor("settled 3", 3, isType("agent_settled"))
	r.Send(`{"id":"st","type":"get_state"}`)
	idx := r.WaitFor("state", 1, isResponse("st"))
	var st struct {
		Data struct{ SessionFile string } `json:"data"`
	}
	_ = json.Unmarshal(r.Lines()[idx], &st)
	r.CloseStdin()
	r.Wait()
	var reported []string
	for _, l := range r.Lines() {
		var v struct {
			Type  string
			Entry struct{ ID string }
		}
		if json.Unmarshal(l, &v) == nil && v.Type == "entry_appended" {
			reported = append(reported, v.Entry.ID)
		}
	}
	_, inFile := readEntryIDs(t, st.Data.SessionFile)
	if strings.Join(inFile, ",") != strings.Join(reported, ",") {
		t.Fatalf("file %v\nreported %v", inFile, reported)
	}
}

package robust_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/test/testbin"
)

// bin is the ama-rpc binary built once by TestMain.
var bin string

// Three kinds of tests here call t.Parallel; the rest run one at a time.
//
// TestSignalMidRunExitCode's four cases: forty short runs whose wall is
// mostly child start-up and the harness waiting for lines; two at a time
// they took 5.2-6.4 s of the package's wall instead of 6.8-8.4.
//
// waiters: tests that spend their time waiting for a bound of the server
// (the 5 s shutdown grace, the startup bound, idle timeouts) with the
// child idle; run one after the other they kept the package's slot of
// make test busy for some 20 s of an idle core. Parallel top-level tests
// start after the sequential ones, so they wait beside each other, two at
// a time (-parallel is GOMAXPROCS), not beside the busy tests.
//
// memParallel: the huge-prompt memory tests (mem_test.go,
// TestACPMemoryOfHugePrompts), run without -race in make test's memory
// line, two at a time: each measures the peak of its own child (VmHWM),
// which its forced collections (internal/memlimit) pace, not the load;
// their peaks were the same, to the MB, one at a time and two at a time
// beside two busy-looping processes on the 2 shared cores.

func TestMain(m *testing.M) {
	if bin = os.Getenv("AMA_ROBUST_BIN"); bin != "" {
		os.Exit(m.Run()) // measure another build (e.g. the one before a fix)
	}
	dir, err := os.MkdirTemp("", "ama-robust-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bin, err = testbin.Path(dir, "../../cmd/ama-rpc"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one ama-rpc child process talking over pipes, as a host sees it.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr bytes.Buffer
	home   string
	work   string

	mu      sync.Mutex
	cond    *sync.Cond
	lines   [][]byte // nil for a huge line that is not a response (dropHuge)
	decoded []line   // the envelope of each line
	bad     []string // lines that are not valid UTF-8 JSON
	eof     bool
	// stalled is set when the collector stopped reading (stallAfter).
	stalled bool
	// paused holds the collector before its next read (pause/resume).
	paused bool
	// approve answers every permission_request (allow, deny, allow, …).
	approve   bool
	dropHuge  bool // procConfig.dropHuge
	approvals int
	wmu       sync.Mutex // serialises writes to stdin
	sent      []string   // ids of the commands sent with sendID

	exited chan struct{}
	state  *os.ProcessState
}

type procConfig struct {
	args   []string
	script string // fake script JSON ("" = none)
	home   string // reuse a home (resume); "" = fresh
	// noRead leaves stdout to the test (it reads p.stdout itself or not at all).
	noRead bool
	// stallAfter stops reading stdout after the first line it accepts
	// (the host stops reading mid-stream).
	stallAfter func(line) bool
	// approve answers permission requests (see proc.approve).
	approve bool
	env     []string
	// dropHuge keeps a line over hugeLine only when it is a response
	// (get_entries): the memory tests' huge events, four 40 MiB lines a
	// prompt, would cost the harness a copy each.
	dropHuge bool
}

func start(t testing.TB, cfg procConfig) *proc {
	t.Helper()
	p := &proc{t: t, home: cfg.home, work: t.TempDir(), exited: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	if p.home == "" {
		p.home = t.TempDir()
	}
	args := cfg.args
	if len(args) == 0 {
		args = []string{"--model", "fake/echo"}
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = p.work
	p.cmd.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(p.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(p.home, ".local", "share"), "AMA_LANG=en"}
	if cfg.script != "" {
		path := filepath.Join(t.TempDir(), "script.json")
		if err := os.WriteFile(path, []byte(cfg.script), 0o644); err != nil {
			t.Fatal(err)
		}
		p.cmd.Env = append(p.cmd.Env, "AMA_FAKE_SCRIPT="+path)
	}
	p.cmd.Env = append(p.cmd.Env, cfg.env...)
	p.approve = cfg.approve
	p.dropHuge = cfg.dropHuge
	// stderr is a pipe we own, so that the exit waits for what the child
	// wrote before it ended (exec's own copy is not waited for by
	// Process.Wait).
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = errW
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	err = p.cmd.Start()
	errW.Close()
	if err != nil {
		errR.Close()
		t.Fatal(err)
	}
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = io.Copy(&lockedBuf{p: p}, errR)
		errR.Close()
	}()
	if !cfg.noRead {
		go p.collect(cfg.stallAfter)
	}
	go func() {
		// cmd.Wait closes stdout: only the collector may still be reading it,
		// and Wait waits for nothing else (stdout is a pipe we own).
		st, _ := p.cmd.Process.Wait()
		// Everything the child wrote to stderr is in the buffer before the
		// exit is seen (bounded: a program it started may hold stderr).
		grace := time.NewTimer(2 * time.Second)
		select {
		case <-errDone:
		case <-grace.C:
		}
		grace.Stop()
		p.mu.Lock()
		p.state = st
		p.mu.Unlock()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

type lockedBuf struct{ p *proc }

func (b *lockedBuf) Write(x []byte) (int, error) {
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	defer b.p.cond.Broadcast() // waitStderr
	return b.p.stderr.Write(x)
}

// waitStderr blocks until stderr contains s (or fails the test after
// timeout).
func (p *proc) waitStderr(s string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("stderr has no %q within %s:\n%s", s, timeout, p.stderr.String())
		}
		p.cond.Wait()
	}
}

func (p *proc) collect(stallAfter func(line) bool) {
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	var big []byte // the buffer of lines longer than r's, reused
	for {
		p.mu.Lock()
		for p.paused {
			p.cond.Wait()
		}
		p.mu.Unlock()
		raw, shared, err := readLine(r, &big)
		if len(raw) > 0 {
			// Checked and decoded once, outside the lock (a 50 MiB line
			// takes a while under -race).
			l := bytes.TrimSuffix(raw, []byte("\n"))
			var bad bool
			var d line
			if len(l) > hugeLine {
				// Huge lines (the memory tests) are only checked for UTF-8
				// and their envelope read from the front: fully decoding
				// 50 MiB under -race takes many seconds per line.
				bad, d = !isUTF8(l), envelope(l)
				if p.dropHuge && d.Type != "response" && (d.Method != "" || d.ID == "") {
					l = nil
				}
			} else {
				bad, d = (!json.Valid(l) && !tooDeep(l)) || !isUTF8(l), decode(l)
			}
			if shared && l != nil {
				l = bytes.Clone(l) // big is read into again
			}
			p.mu.Lock()
			if bad {
				p.bad = append(p.bad, clip(l))
			}
			p.lines = append(p.lines, l)
			p.decoded = append(p.decoded, d)
			p.cond.Broadcast()
			if d.Type == "permission_request" && p.approve {
				p.approvals++
				decision := "allow"
				if p.approvals%2 == 0 {
					decision = "deny"
				}
				id := fmt.Sprintf("perm-%d", p.approvals)
				// Not from this goroutine: a write to a full stdin pipe must
				// not stop the reading of stdout.
				go p.sendID(id, fmt.Sprintf(`{"id":%q,"type":"permission_response","requestId":%q,"decision":%q}`, id, d.RequestID, decision))
			}
			stall := stallAfter != nil && stallAfter(d)
			if stall {
				p.stalled = true
			}
			p.mu.Unlock()
			if stall {
				return // the host reads no more
			}
		}
		if err != nil {
			p.mu.Lock()
			p.eof = true
			p.cond.Broadcast()
			p.mu.Unlock()
			return
		}
	}
}

// readLine reads one line with its '\n' (without at the end of input). A
// line that fits r's buffer is a copy of its own; a longer one is read
// into *big (shared), which the next long line overwrites (ReadBytes
// would gather it in pieces and copy it once more, into fresh memory
// every time).
func readLine(r *bufio.Reader, big *[]byte) (line []byte, shared bool, err error) {
	frag, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return bytes.Clone(frag), false, err
	}
	b := append((*big)[:0], frag...)
	for err == bufio.ErrBufferFull {
		frag, err = r.ReadSlice('\n')
		b = append(b, frag...)
	}
	*big = b
	return b, true, err
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func (p *proc) send(line string) {
	p.t.Helper()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write stdin: %v", err)
	}
}

// sendID sends a command whose id the test expects to be answered once.
// Safe from any goroutine (it does not fail the test: the answer check does).
func (p *proc) sendID(id, line string) {
	p.mu.Lock()
	p.sent = append(p.sent, id)
	p.mu.Unlock()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = io.WriteString(p.stdin, line+"\n")
}

// pause stops reading stdout (a host that is busy); resume reads again.
func (p *proc) pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

func (p *proc) resume() {
	p.mu.Lock()
	p.paused = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// line is the envelope the tests look at.
type line struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Command string `json:"command"`
	Success bool   `json:"success"`
	Code    string `json:"code"`
	Error   string `json:"error"`
	Event   struct {
		Type string `json:"type"`
	} `json:"assistantMessageEvent"`
	RequestID string `json:"requestId"`
	// JSON-RPC (--mode acp): use string ids in requests, so that ID holds
	// the id of their answers.
	Method string `json:"method"`
	Result struct {
		SessionID  string `json:"sessionId"`
		StopReason string `json:"stopReason"`
	} `json:"result"`
	Params struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
		} `json:"update"`
	} `json:"params"`
}

func decode(b []byte) line {
	var l line
	if err := json.Unmarshal(b, &l); err != nil && tooDeep(b) {
		// A response nested deeper than encoding/json decodes (get_tree of a
		// long session): its envelope keys come before "data".
		if i := strings.Index(string(b), `,"data":`); i > 0 {
			_ = json.Unmarshal(append(append([]byte(nil), b[:i]...), '}'), &l)
		}
	}
	return l
}

const hugeLine = 1 << 20

// envelope reads type, id, command and success of a huge line from its
// front: events start with "type", responses with "id"/"type", and the
// envelope keys come before "data".
func envelope(b []byte) line {
	var l line
	head := string(b[:min(len(b), 4096)])
	if i := strings.Index(head, `,"data":`); i > 0 {
		_ = json.Unmarshal([]byte(head[:i]+"}"), &l)
		return l
	}
	if strings.HasPrefix(head, `{"type":"`) {
		if end := strings.IndexByte(head[9:], '"'); end >= 0 {
			l.Type = head[9 : 9+end]
		}
	}
	return l
}

// tooDeep reports whether b fails to decode only because of
// encoding/json's nesting limit.
func tooDeep(b []byte) bool {
	var v any
	err := json.Unmarshal(b, &v)
	return err != nil && strings.Contains(err.Error(), "exceeded max depth")
}

// waitFor blocks until a line satisfying pred arrives (or fails the test
// after timeout) and returns it.
func (p *proc) waitFor(desc string, timeout time.Duration, pred func(line) bool) line {
	p.t.Helper()
	return p.waitAfter(0, desc, timeout, pred)
}

// waitEOF waits until the collector has read stdout to its end.
func (p *proc) waitEOF(timeout time.Duration) {
	p.t.Helper()
	timer := time.AfterFunc(timeout, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.eof {
		if time.Now().After(deadline) {
			p.t.Fatalf("stdout not at EOF within %s", timeout)
		}
		p.cond.Wait()
	}
}

// mark is the number of lines read so far (for waitAfter).
func (p *proc) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

// waitAfter is waitFor over the lines from index from on.
func (p *proc) waitAfter(from int, desc string, timeout time.Duration, pred func(line) bool) line {
	p.t.Helper()
	return p.waitRaw(from, desc, timeout, func(_ []byte, l line) bool { return pred(l) })
}

// waitRaw is waitAfter with a predicate that also sees the line's bytes
// (nil for a huge line dropped by dropHuge).
func (p *proc) waitRaw(from int, desc string, timeout time.Duration, pred func([]byte, line) bool) line {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := from
	for {
		for ; seen < len(p.lines); seen++ {
			if l := p.decoded[seen]; pred(p.lines[seen], l) {
				return l
			}
		}
		if p.eof || time.Now().After(deadline) {
			p.t.Fatalf("no %s within %s (eof %v); stderr:\n%s", desc, timeout, p.eof, p.stderr.String())
		}
		p.cond.Wait()
	}
}

func response(id string) func(line) bool {
	return func(l line) bool { return l.Type == "response" && l.ID == id }
}

func event(typ string) func(line) bool {
	return func(l line) bool { return l.Type == typ }
}

// wait waits at most timeout for the exit and returns the exit code
// (128+n for a death by signal) and how long it took; -1 on timeout (the
// process is then killed).
func (p *proc) wait(timeout time.Duration) (int, time.Duration) {
	t0 := time.Now()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return -1, time.Since(t0)
	}
	return exitCode(p.state), time.Since(t0)
}

func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// procStatus reads one "kB" field of the child's /proc status (VmRSS,
// VmHWM) in bytes; -1 once it has exited. The rusage of wait4 is no use
// here: ru_maxrss of a child forked by Go (CLONE_VM) starts at the test
// process's own resident set.
func (p *proc) procStatus(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return kb * 1024
		}
	}
	return -1
}

// peakRSS is the child's peak resident set so far (VmHWM), in bytes.
func (p *proc) peakRSS() int64 { return p.procStatus("VmHWM") }

// vmRSS is the child's current resident set in bytes.
func (p *proc) vmRSS() int64 { return p.procStatus("VmRSS") }

func (p *proc) signal(s syscall.Signal) {
	if err := p.cmd.Process.Signal(s); err != nil {
		p.t.Fatalf("signal: %v", err)
	}
}

func (p *proc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) badLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bad...)
}

func isUTF8(b []byte) bool { return utf8.Valid(b) }

// waitBlocked waits until the child has been idle (no CPU time used) for a
// while: a server blocked on a full stdout pipe. It reads /proc.
func waitBlocked(t testing.TB, p *proc) {
	t.Helper()
	stat := filepath.Join("/proc", fmt.Sprint(p.cmd.Process.Pid), "stat")
	var last string
	still := 0
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatalf("read %s: %v", stat, err)
		}
		f := strings.Fields(string(b))
		cpu := f[13] + "/" + f[14] // utime/stime
		if cpu == last {
			still++
		} else {
			still, last = 0, cpu
		}
		if still >= 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never settled")
		}
	}
}

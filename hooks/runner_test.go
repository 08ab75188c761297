package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func run(t *testing.T, command string, stdin []byte, timeout time.Duration) Proc {
	t.Helper()
	return Run(context.Background(), Spec{Command: command, Dir: t.TempDir(), Env: os.Environ(), Stdin: stdin, Timeout: timeout})
}

func TestRunExitAndOutput(t *testing.T) {
	p := run(t, `read line; echo "got $line"; echo err >&2; exit 3`, []byte("hello\n"), 5*time.Second)
	if p.ExitCode == nil || *p.ExitCode != 3 || p.Stdout != "got hello\n" || p.Stderr != "err\n" {
		t.Fatalf("%+v", p)
	}
	p = run(t, `pwd`, nil, 5*time.Second)
	if p.ExitCode == nil || *p.ExitCode != 0 {
		t.Fatalf("%+v", p)
	}
}

// A hook that reads no stdin: the EPIPE of a large input is ignored.
func TestRunIgnoresEPIPE(t *testing.T) {
	p := run(t, `exit 0`, make([]byte, 4<<20), 5*time.Second)
	if p.ExitCode == nil || *p.ExitCode != 0 || p.Stderr != "" {
		t.Fatalf("%+v", p)
	}
}

// A hook printing 5 MiB: each stream is capped at 1 MiB, and the hook
// still finishes (the excess is drained, not blocking the pipe).
func TestRunCapsOutput(t *testing.T) {
	p := run(t, `head -c 5242880 /dev/zero | tr '\0' x; head -c 5242880 /dev/zero | tr '\0' y >&2`, nil, 30*time.Second)
	if p.ExitCode == nil || *p.ExitCode != 0 || len(p.Stdout) != OutputCap || len(p.Stderr) != OutputCap {
		t.Fatalf("exit %v, stdout %d, stderr %d", p.ExitCode, len(p.Stdout), len(p.Stderr))
	}
}

// A hook that hangs: the timeout kills the whole group (the background
// child too), and nothing of it is left, not even a zombie.
func TestRunTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The check needs the background child started before the timeout:
	// on a loaded machine the shell may not get to write its pid within
	// 200 ms; the timeout then doubles (the run is repeated), up to 6.4 s.
	var data []byte
	for timeout := 200 * time.Millisecond; ; timeout *= 2 {
		start := time.Now()
		p := Run(context.Background(), Spec{Command: `trap '' TERM; sleep 60 & echo $! > pid; wait; sleep 60`, Dir: dir, Env: os.Environ(), Timeout: timeout})
		if !p.TimedOut || p.ExitCode != nil {
			t.Fatalf("%+v", p)
		}
		if d := time.Since(start); d > timeout+5*time.Second {
			t.Fatalf("took %v (timeout %v)", d, timeout)
		}
		var err error
		if data, err = os.ReadFile(pidFile); err == nil && len(data) > 0 {
			break
		}
		if timeout >= 6400*time.Millisecond {
			t.Fatalf("the background child was not started within %v: %v", timeout, err)
		}
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	// Gone, or a zombie that is not ours: orphans are re-parented to init,
	// whose job reaping them is (the init of some containers never does).
	// SIGKILL went to the whole group when Run returned, but a loaded
	// machine may take a moment to let the child die: it may be seen
	// running only within that bound (the process is not ours, so there is
	// no event to wait for).
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if f[0] == "Z" {
			if f[1] == strconv.Itoa(os.Getpid()) {
				t.Fatalf("background child %d is a zombie of ours", pid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %d still runs 5 s after the group was killed: %s", pid, stat)
		}
		runtime.Gosched()
	}
}

func TestRunAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Run(ctx, Spec{Command: `sleep 60`, Dir: t.TempDir(), Timeout: time.Minute})
	if !p.Aborted || p.ExitCode != nil {
		t.Fatalf("%+v", p)
	}
}

func TestRunSpawnFailure(t *testing.T) {
	p := Run(context.Background(), Spec{Command: `true`, Dir: filepath.Join(t.TempDir(), "missing"), Timeout: time.Second})
	if p.ExitCode == nil || *p.ExitCode != 127 || p.Stderr == "" {
		t.Fatalf("%+v", p)
	}
}

func dispatcher(t *testing.T, doc string) *Dispatcher {
	t.Helper()
	set, err := Parse([]byte(doc), "test.json", "user")
	if err != nil {
		t.Fatal(err)
	}
	return NewDispatcher(set, Options{})
}

// Parallel hooks: the first waits for a file the second creates (so they
// must run at the same time), yet the merge follows configuration order.
func TestDispatcherParallelConfigurationOrder(t *testing.T) {
	dir := t.TempDir()
	d := dispatcher(t, `{"version":1,"hooks":{"PreToolUse":[
		{"matcher":"bash","hooks":[{"type":"command","timeoutMs":10000,"command":"while [ ! -f flag ]; do sleep 0.01; done; echo '{\"decision\":\"ask\",\"reason\":\"first\"}'"}]},
		{"hooks":[{"type":"command","command":"touch flag; echo '{\"decision\":\"ask\",\"reason\":\"second\"}'"}]},
		{"matcher":"edit","hooks":[{"type":"command","command":"echo never"}]}]}}`)
	r := d.Run(context.Background(), Call{Event: PreToolUse, Common: Common{SessionID: "s", Cwd: dir}, Tool: "bash", Input: json.RawMessage(`{"command":"ls"}`),
		Payload: ToolInput{ToolName: "bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}})
	if r == nil || r.Decision != Ask || r.Reason != "first" || len(r.Outcomes) != 2 {
		t.Fatalf("%+v", r)
	}
	if r.Outcomes[0].Command.Command[:5] != "while" {
		t.Fatal("outcomes must be in configuration order")
	}
}

// The stdin a hook sees (checklist 7): hookEventName last, depth 0.
func TestDispatcherStdin(t *testing.T) {
	dir := t.TempDir()
	d := dispatcher(t, `{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"cat > in.json; echo \"$AMA_HOOK_EVENT\" > env"}]}]}}`)
	if d.Has(PreToolUse) || !d.Has(Stop) {
		t.Fatal("Has")
	}
	d.Run(context.Background(), Call{Event: Stop, Common: Common{SessionID: "s", Cwd: dir}, Payload: StopInput{}})
	in, _ := os.ReadFile(filepath.Join(dir, "in.json"))
	if !strings.HasSuffix(string(in), `"depth":0,"stopHookActive":false,"hookEventName":"Stop"}`+"\n") {
		t.Fatalf("stdin %s", in)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	if string(env) != "Stop\n" {
		t.Fatalf("env %q", env)
	}
}

func TestNilDispatcher(t *testing.T) {
	var d *Dispatcher
	if d.Has(PreToolUse) || d.MayMatch(PreToolUse, "bash") || d.Run(context.Background(), Call{}) != nil {
		t.Fatal("nil dispatcher has no hooks")
	}
	if NewDispatcher(&Set{}, Options{}) != nil {
		t.Fatal("an empty set gives a nil dispatcher")
	}
	if n := testing.AllocsPerRun(100, func() { _ = d.MayMatch(PreToolUse, "bash") }); n != 0 {
		t.Fatalf("allocs %v", n)
	}
}

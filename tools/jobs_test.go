//go:build unix

package tools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/armadra/ama-rpc/tools"
)

type eventLog struct {
	mu     sync.Mutex
	events []tools.JobEvent
}

func (l *eventLog) add(ev tools.JobEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

func (l *eventLog) phases() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, ev := range l.events {
		s := ev.JobID + ":" + ev.Phase
		if ev.ExitCode != nil {
			s += fmt.Sprintf("(%d)", *ev.ExitCode)
		}
		out = append(out, s)
	}
	return out
}

func (l *eventLog) last() tools.JobEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events[len(l.events)-1]
}

func TestBackgroundJobs(t *testing.T) {
	defer goleak.VerifyNone(t)
	env := newEnv(t)
	var log eventLog
	env.Jobs = tools.NewJobs(env.OutputDir, log.add)
	defer env.Jobs.StopAll()

	fifo := filepath.Join(env.Cwd, "ready.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// j1 prints, then blocks on the fifo until the test opens it.
	r := run(t, env, "bash", map[string]any{"command": "echo hi; read x < ready.fifo; sleep 30", "background": true})
	got := mustOK(t, r)
	d := r.Details.(tools.BashDetails)
	if d.Job == nil || d.Job.ID != "j1" || d.Job.PID == 0 || d.Job.Status != tools.JobRunning {
		t.Fatalf("details %+v", d.Job)
	}
	contains(t, got, "Started job j1", fmt.Sprintf("pid %d", d.Job.PID), d.Job.OutputPath)
	if filepath.Dir(d.Job.OutputPath) != env.OutputDir {
		t.Errorf("output path %s", d.Job.OutputPath)
	}
	started := log.last()
	if started.Phase != tools.JobStarted || started.Command != "echo hi; read x < ready.fifo; sleep 30" || started.PID != d.Job.PID || started.OutputPath != d.Job.OutputPath {
		t.Errorf("started event %+v", started)
	}

	// Opening the fifo for writing returns once the job reads from it,
	// i.e. after "hi" was written.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	got = mustOK(t, run(t, env, "bash", map[string]any{"job": "j1", "action": "output"}))
	contains(t, got, "Job j1", "is running", "hi")
	w.WriteString("go\n")
	w.Close()

	// j2 ends on its own; wait reports its exit code.
	mustOK(t, run(t, env, "bash", map[string]any{"command": "echo done; exit 4", "background": true}))
	r = run(t, env, "bash", map[string]any{"job": "j2", "action": "wait"})
	got = text(r)
	contains(t, got, "Job j2", "exited with code 4", "done")
	if jd := r.Details.(tools.BashDetails); jd.ExitCode == nil || *jd.ExitCode != 4 {
		t.Errorf("wait details %+v", jd)
	}

	// A bounded wait on a job that keeps running.
	mustOK(t, run(t, env, "bash", map[string]any{"command": "sleep 30", "background": true}))
	got = mustOK(t, run(t, env, "bash", map[string]any{"job": "j3", "action": "wait", "timeoutMs": 50}))
	contains(t, got, "Still running after waiting 50 ms", "Job j3")

	// stop ends j1's whole group.
	got = mustOK(t, run(t, env, "bash", map[string]any{"job": "j1", "action": "stop"}))
	contains(t, got, "Job j1", "was stopped")
	if info, _ := env.Jobs.Get("j1"); info.Status != tools.JobStopped {
		t.Errorf("j1 %+v", info)
	}
	mustErr(t, run(t, env, "bash", map[string]any{"job": "j9", "action": "output"}), `No background job "j9"`)

	env.Jobs.StopAll()
	want := []string{"j1:started", "j2:started", "j2:exited(4)", "j3:started", "j1:stopped", "j3:stopped"}
	if got := strings.Join(log.phases(), " "); got != strings.Join(want, " ") {
		t.Errorf("events %s, want %s", got, strings.Join(want, " "))
	}
	if list := env.Jobs.List(); len(list) != 3 || list[2].Status != tools.JobStopped {
		t.Errorf("list %+v", list)
	}
	mustErr(t, run(t, env, "bash", map[string]any{"command": "true", "background": true}), "shut down")
	if _, err := env.Jobs.Start(tools.JobSpec{Command: "true"}); !errors.Is(err, tools.ErrJobsClosed) {
		t.Errorf("Start after StopAll: %v", err)
	}
}

func TestJobsWaitHonoursContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	jobs := tools.NewJobs(t.TempDir(), nil)
	defer jobs.StopAll()
	info, err := jobs.Start(tools.JobSpec{Command: "sleep 30", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := jobs.Wait(ctx, info.ID, 0x7fffffff); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := jobs.Wait(context.Background(), "j7", 1); !errors.Is(err, tools.ErrUnknownJob) {
		t.Fatalf("Wait unknown: %v", err)
	}
	stopped, err := jobs.Stop(info.ID)
	if err != nil || stopped.Status != tools.JobStopped {
		t.Fatalf("Stop: %+v %v", stopped, err)
	}
	if err := syscall.Kill(-info.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("group still there: %v", err)
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// Job phases, as in the background_job event.
const (
	JobStarted = "started"
	JobExited  = "exited"
	JobStopped = "stopped"
)

// Job statuses (JobInfo.Status).
const (
	JobRunning = "running"
	// A finished job has status JobExited or JobStopped.
)

// Errors of Jobs.
var (
	ErrUnknownJob = errors.New("unknown job")
	ErrJobsClosed = errors.New("background jobs are shut down")
)

// JobEvent is a lifecycle change of a background job; the session turns it
// into a background_job event (same field names and order).
type JobEvent struct {
	JobID      string `json:"jobId"`
	Phase      string `json:"phase"` // started, exited, stopped
	Command    string `json:"command"`
	PID        int    `json:"pid,omitempty"`
	OutputPath string `json:"outputPath,omitempty"`
	ExitCode   *int   `json:"exitCode,omitempty"`
}

// JobInfo is the state of a background job.
type JobInfo struct {
	ID         string `json:"jobId"`
	Command    string `json:"command"`
	PID        int    `json:"pid"`
	OutputPath string `json:"outputPath"`
	Status     string `json:"status"` // running, exited, stopped
	// ExitCode is set once the job exited on its own; a job killed by a
	// signal it did not get from Stop reports 128+signal, as shells do.
	ExitCode *int `json:"exitCode,omitempty"`
	// Sandboxed is set when the job runs in the OS sandbox.
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// JobSpec describes a command to start in the background.
type JobSpec struct {
	Command string
	Dir     string
	Shell   string   // default: bash from PATH, else sh
	Env     []string // the complete environment (nil: CommandEnv of this process's)
	// Sandbox, when set, wraps the command (the job runs sandboxed; its
	// output file is opened here, outside the sandbox).
	Sandbox CommandSandbox
}

// Jobs is the registry of a session's background commands. Each job runs
// `<shell> -c command` in its own process group with stdin from the null
// device and stdout+stderr written to a file; ids are j1, j2, … in start
// order. Jobs is safe for concurrent use.
//
// onEvent (may be nil) is called once per phase: "started" on the goroutine
// calling Start, before Start returns; "exited" or "stopped" on the job's
// monitor goroutine, before Wait and Stop observe the end. It is called
// without locks held, must return promptly and must not wait for a
// goroutine that is itself blocked in a Jobs method (queue the event).
type Jobs struct {
	dir     string
	onEvent func(JobEvent)
	grace   time.Duration

	mu     sync.Mutex
	seq    int
	jobs   map[string]*job
	order  []string
	closed bool
	wg     sync.WaitGroup // monitor goroutines
}

type job struct {
	info     JobInfo // guarded by Jobs.mu
	stopping bool    // guarded by Jobs.mu
	done     chan struct{}
	// log is the output file as created here, kept open: its tail is read
	// through this descriptor, never by reopening OutputPath, which a
	// command could have swapped for a link (issue 24). Closed by StopAll.
	log  *os.File
	proc jobProc // set before the job is registered, then read only
}

// NewJobs returns an empty registry writing output files to dir (created
// with mode 0700 when the first job starts; the system temp directory when
// dir is empty).
func NewJobs(dir string, onEvent func(JobEvent)) *Jobs {
	if dir == "" {
		dir = os.TempDir()
	}
	return &Jobs{dir: dir, onEvent: onEvent, grace: DefaultKillGrace, jobs: map[string]*job{}}
}

func (j *Jobs) emit(ev JobEvent) {
	if j.onEvent != nil {
		j.onEvent(ev)
	}
}

// Start launches spec in the background and returns at once.
func (j *Jobs) Start(spec JobSpec) (JobInfo, error) {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return JobInfo{}, ErrJobsClosed
	}
	j.seq++
	id := fmt.Sprintf("j%d", j.seq)
	j.mu.Unlock()

	out, outPath, err := ownfs.CreateTemp(j.dir, "job-"+id+"-*.log")
	if err != nil {
		return JobInfo{}, fmt.Errorf("start job: %w", err)
	}
	shell := spec.Shell
	if shell == "" {
		shell = defaultShell(spec.Dir)
	}
	cmd := newShellCmd(shell, spec.Command, spec.Dir, spec.Env)
	pr, err := startJobProc(spec.Sandbox, cmd, out)
	if err != nil {
		out.Close()
		return JobInfo{}, fmt.Errorf("start job: %w", err)
	}
	jb := &job{
		info: JobInfo{ID: id, Command: spec.Command, PID: pr.pid, OutputPath: outPath, Status: JobRunning,
			Sandboxed: spec.Sandbox != nil},
		done: make(chan struct{}),
		log:  out,
		proc: pr,
	}
	j.mu.Lock()
	if j.closed { // StopAll ran while we were starting
		j.mu.Unlock()
		pr.signal(syscall.SIGKILL)
		_, _ = pr.wait()
		out.Close()
		return JobInfo{}, ErrJobsClosed
	}
	j.jobs[id] = jb
	j.order = append(j.order, id)
	j.wg.Add(1)
	info := jb.info
	j.mu.Unlock()

	j.emit(JobEvent{JobID: id, Phase: JobStarted, Command: spec.Command, PID: info.PID, OutputPath: info.OutputPath})
	go j.monitor(jb)
	return info, nil
}

// jobProc is a started job, whichever way it was started.
type jobProc struct {
	pid int
	// signal reaches its process group.
	signal func(syscall.Signal)
	// wait waits for it: its exit code (128+n when signal n ended it),
	// nil and why when it is unknown.
	wait func() (*int, string)
}

// startJobProc starts cmd with its output to out: through the sandbox's
// pre-started launcher when it has one (the same jail as a foreground
// command, in a PID namespace and session of its own), else wrapped by the
// sandbox (a launcher of its own) or bare.
func startJobProc(sb CommandSandbox, cmd *exec.Cmd, out *os.File) (jobProc, error) {
	if st, ok := sb.(CommandStarter); ok {
		if pr, ok := startJobInLauncher(st, cmd, out); ok {
			return pr, nil
		}
	}
	_, release, err := wrapWith(sb, cmd)
	if err != nil {
		return jobProc{}, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Start()
	release()
	if err != nil {
		return jobProc{}, err
	}
	pid := cmd.Process.Pid
	return jobProc{
		pid: pid,
		signal: func(s syscall.Signal) {
			if s == syscall.SIGKILL {
				killGroup(pid)
			} else {
				terminateGroup(pid)
			}
		},
		wait: func() (*int, string) {
			_ = cmd.Wait()
			ps := cmd.ProcessState
			switch {
			case ps == nil:
				return nil, ""
			case ps.Exited():
				c := ps.ExitCode()
				return &c, ""
			}
			if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				c := 128 + int(ws.Signal())
				return &c, ""
			}
			return nil, ""
		},
	}, nil
}

// monitor waits for the job's shell, records the outcome and reports it.
func (j *Jobs) monitor(jb *job) {
	defer j.wg.Done()
	code, why := jb.proc.wait()
	if why != "" {
		// The log is ours and the job has ended: the note is its last line.
		_, _ = jb.log.WriteString("\n[" + why + "]\n")
	}
	j.mu.Lock()
	phase := JobExited
	if jb.stopping {
		phase, code = JobStopped, nil
	}
	jb.info.Status, jb.info.ExitCode = phase, code
	info := jb.info
	j.mu.Unlock()
	j.emit(JobEvent{JobID: info.ID, Phase: phase, Command: info.Command, PID: info.PID, OutputPath: info.OutputPath, ExitCode: code})
	close(jb.done)
}

func (j *Jobs) get(id string) (*job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	jb, ok := j.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	return jb, nil
}

func (j *Jobs) infoOf(jb *job) JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	return jb.info
}

// Get returns the state of a job.
func (j *Jobs) Get(id string) (JobInfo, bool) {
	jb, err := j.get(id)
	if err != nil {
		return JobInfo{}, false
	}
	return j.infoOf(jb), true
}

// List returns all jobs in start order.
func (j *Jobs) List() []JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JobInfo, 0, len(j.order))
	for _, id := range j.order {
		out = append(out, j.jobs[id].info)
	}
	return out
}

// Wait waits until the job ends, at most max, and returns its state
// (status running when max passed first). It returns ctx's error when ctx
// ends first.
func (j *Jobs) Wait(ctx context.Context, id string, max time.Duration) (JobInfo, error) {
	jb, err := j.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-jb.done:
	case <-t.C:
	case <-ctx.Done():
		return j.infoOf(jb), ctx.Err()
	}
	return j.infoOf(jb), nil
}

// Output returns the job's state and the tail of its output (cleaned, at
// most MaxOutputLines lines and chars characters, with a note when cut).
func (j *Jobs) Output(id string, chars int) (JobInfo, string, error) {
	jb, err := j.get(id)
	if err != nil {
		return JobInfo{}, "", err
	}
	j.mu.Lock()
	info, closed := jb.info, jb.log == nil
	var text string
	if !closed {
		text, err = fileTail(jb.log, info.OutputPath, chars) // under mu: StopAll closes log
	}
	j.mu.Unlock()
	if closed {
		return info, "", fmt.Errorf("job %s output: %w", id, ErrJobsClosed)
	}
	if err != nil {
		return info, "", fmt.Errorf("job %s output: %w", id, err)
	}
	return info, text, nil
}

// fileTail reads the cleaned tail of the job's log through the descriptor
// Start created; path only names it in the note.
func fileTail(f *os.File, path string, chars int) (string, error) {
	b, size, err := ownfs.ReadTail(f, int64(max(sinkTailKeep, chars)))
	if err != nil {
		return "", err
	}
	from := size - int64(len(b))
	clean := cleanOutput(string(b))
	tail, more := lastLines(clean, MaxOutputLines)
	cutTail := tailRunes(tail, chars-300)
	if from == 0 && !more && cutTail == tail {
		return clean, nil
	}
	return fmt.Sprintf("[output cut: showing its end; %s in all, full output in %s]\n", formatBytes(size), path) + cutTail, nil
}

// Stop ends a running job's process group (SIGTERM, SIGKILL after a grace
// period) and waits for it; a finished job is left alone. It returns the
// job's final state.
func (j *Jobs) Stop(id string) (JobInfo, error) {
	jb, err := j.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	j.mu.Lock()
	running := jb.info.Status == JobRunning
	if running {
		jb.stopping = true
	}
	j.mu.Unlock()
	if running {
		stopWith(jb.proc.signal, jb.done, j.grace)
		<-jb.done
	}
	return j.infoOf(jb), nil
}

// StopAll stops every running job (all at once, one shared grace period),
// waits until every job has ended and refuses new jobs afterwards. Jobs
// stay queryable. It is for session shutdown.
func (j *Jobs) StopAll() {
	j.mu.Lock()
	j.closed = true
	var running []*job
	for _, id := range j.order {
		jb := j.jobs[id]
		if jb.info.Status == JobRunning {
			jb.stopping = true
			running = append(running, jb)
		}
	}
	j.mu.Unlock()
	for _, jb := range running {
		jb.proc.signal(syscall.SIGTERM)
	}
	t := time.NewTimer(j.grace)
	defer t.Stop()
	expired := false
	for _, jb := range running {
		if !expired {
			select {
			case <-jb.done:
			case <-t.C:
				expired = true
			}
		}
		jb.proc.signal(syscall.SIGKILL)
	}
	j.wg.Wait()
	j.mu.Lock()
	for _, id := range j.order {
		if jb := j.jobs[id]; jb.log != nil {
			jb.log.Close()
			jb.log = nil
		}
	}
	j.mu.Unlock()
}

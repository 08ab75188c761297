package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// Limits of the bash tool.
const (
	BashDefaultTimeout = 120 * time.Second
	BashMaxTimeout     = 600 * time.Second
	// bashUpdateEvery throttles Call.Update.
	bashUpdateEvery = 100 * time.Millisecond
	// bashPipeGrace is how long the result waits for output after the
	// shell exited while background children keep the output open.
	bashPipeGrace = 500 * time.Millisecond
)

// ShellInspector analyses a command for an approval preview: danger holds
// short phrases describing what is risky ("deletes files recursively"),
// affected the paths the command would change (absolute or relative to
// cwd). It must be read-only. Without one the preview shows the analysis
// of the call's Resolved (the one the verdict used); an inspector replaces
// it (tests, other front ends).
type ShellInspector func(command, cwd string) (danger []string, affected []string)

// BashTool runs shell commands, in the foreground or as background jobs.
type BashTool struct {
	// Inspect analyses commands for previews; nil means the Resolved's.
	Inspect ShellInspector
	// KillGrace is the time between SIGTERM and SIGKILL when a command is
	// stopped; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// Sandbox is set when bash runs in an OS sandbox (bash_sandbox.go).
	Sandbox *BashSandboxDecl
}

// NewBash returns the bash tool with the given danger analysis (may be
// nil).
func NewBash(inspect ShellInspector) *BashTool { return &BashTool{Inspect: inspect} }

// BashDetails is the Details of a bash result.
type BashDetails struct {
	// ExitCode is nil when the command was killed (timeout) or died from a
	// signal (see Signal).
	ExitCode       *int     `json:"exitCode"`
	Signal         string   `json:"signal,omitempty"`
	TimedOut       bool     `json:"timedOut,omitempty"`
	Truncated      bool     `json:"truncated,omitempty"`
	FullOutputPath string   `json:"fullOutputPath,omitempty"`
	Job            *JobInfo `json:"job,omitempty"`
	Sandboxed      bool     `json:"sandboxed,omitempty"`
}

func (b *BashTool) Decl() llm.ToolDecl { return b.Sandbox.decl() }
func (*BashTool) Permission() string   { return PermExecute }

// PermissionFor implements ArgsPermission: a call that only queries a
// background job ({job, action}, no command) is a read.
func (*BashTool) PermissionFor(args json.RawMessage) string {
	var a bashArgs
	if json.Unmarshal(args, &a) == nil && a.Command == "" && a.Job != "" {
		return PermRead
	}
	return PermExecute
}

type bashArgs struct {
	Command     string `json:"command"`
	TimeoutMs   intArg `json:"timeoutMs"`
	Cwd         string `json:"cwd"`
	Description string `json:"description"`
	Background  bool   `json:"background"`
	Job         string `json:"job"`
	Action      string `json:"action"`
	Sandbox     *bool  `json:"sandbox"`
}

func (a bashArgs) timeout() time.Duration {
	d := time.Duration(a.TimeoutMs) * time.Millisecond
	switch {
	case d <= 0:
		return BashDefaultTimeout
	case d > BashMaxTimeout:
		return BashMaxTimeout
	}
	return d
}

func (b *BashTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a bashArgs
	if r := decodeArgs(NameBash, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case a.Job != "" && a.Command != "":
		return ErrorResult("Give either command (to run one) or job with action (to query one), not both."), nil
	case a.Job != "":
		return b.jobAction(ctx, env, a, call.Limit())
	case a.Action != "":
		return ErrorResult("action needs job: the id of a background job (j1, j2, …)."), nil
	case strings.TrimSpace(a.Command) == "":
		return ErrorResult("command is empty. Give command to run, or job and action to query a background job."), nil
	}
	dir := env.cwd()
	if a.Cwd != "" {
		// The directory the verdict judged the command in: the cwd
		// argument with its symlinks resolved.
		r := call.resolution(NameBash)
		dir = r.Dir
		if fi, err := os.Stat(dir); dir == "" || err != nil || !fi.IsDir() {
			return errorf("Working directory not found: %s", env.Rel(r.DirPath)), nil
		}
	}
	if r := call.Resolved; r != nil && r.Tool == NameBash {
		if why := changedSince(r, call, env); why != "" {
			return errorf("Not run: %s since the command was checked (a symlink or directory was swapped, maybe by an earlier call of this reply). Run it again to have it checked anew.", why), nil
		}
	}
	extra := env.CommandEnviron()
	if a.Background {
		return b.startJob(env, a, dir, extra)
	}
	return b.run(ctx, call, a, dir, extra)
}

// run executes a foreground command.
func (b *BashTool) run(ctx context.Context, call *Call, a bashArgs, dir string, extra []string) (*Result, error) {
	env := call.env()
	sink := newOutputSink(env, NameBash, call.Limit())
	cmd := newShellCmd(shellOf(env), a.Command, dir, extra)
	sb := callSandbox(env, a)
	var pr proc
	started := false
	if st, ok := sb.(CommandStarter); ok {
		// The session's pre-started launcher; Wrap when it cannot.
		pr, started = startInLauncher(st, cmd, sink)
	}
	if !started {
		var release func()
		var err error
		sb, release, err = wrapSandbox(env, a, cmd)
		if err != nil {
			sink.finish()
			return errorf("%v", err), nil
		}
		cmd.Stdout, cmd.Stderr = sink, sink
		cmd.WaitDelay = bashPipeGrace
		err = cmd.Start()
		release()
		if err != nil {
			sink.finish()
			return errorf("Cannot start %s: %v", shellOf(env), err), nil
		}
		pr = cmdProc(cmd)
	}
	timeout := a.timeout()

	done := make(chan struct{})
	var (
		wg       sync.WaitGroup
		aborted  bool // set by the watcher, read after wg.Wait
		timedOut bool
		ticked   bool // an update went out from the ticker; read after wg.Wait
	)
	wg.Add(1)
	go func() { // stops the group on abort or timeout
		defer wg.Done()
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-ctx.Done():
			aborted = true
		case <-t.C:
			timedOut = true
		}
		pr.stop(done, b.KillGrace)
	}()
	if call.Update != nil {
		wg.Add(1)
		go func() { // throttled progress
			defer wg.Done()
			tick := time.NewTicker(bashUpdateEvery)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					if sink.takeDirty() {
						call.Update(sink.snapshot())
						ticked = true
					}
				}
			}
		}()
	}
	ps, waitDelay := pr.wait()
	close(done)
	wg.Wait()
	// The final update, unless a tick already sent everything: the events
	// of a command do not depend on whether it outlived one tick.
	if call.Update != nil && (sink.takeDirty() || !ticked) {
		call.Update(sink.snapshot())
	}
	text, cut, full := sink.finish()
	if aborted {
		return nil, fmt.Errorf("bash: %w", context.Cause(ctx))
	}

	d := BashDetails{Truncated: cut, FullOutputPath: full, TimedOut: timedOut, Sandboxed: sb != nil}
	var notes []string
	if !timedOut {
		d.ExitCode, d.Signal = ps.code, ps.signal
	}
	switch {
	case timedOut:
		notes = append(notes, fmt.Sprintf("Timed out after %s; the command and its child processes were stopped.", formatDuration(timeout)))
	case d.Signal != "":
		notes = append(notes, "Killed by signal: "+d.Signal)
	case d.ExitCode != nil && *d.ExitCode != 0:
		notes = append(notes, fmt.Sprintf("Exit code %d", *d.ExitCode))
	case ps.note != "":
		notes = append(notes, ps.note)
	}
	if waitDelay {
		notes = append(notes, "Processes started in the background still hold the output; use background:true for long-running processes.")
	}
	body := strings.TrimRight(text, "\n")
	if body == "" {
		body = "(no output)"
	}
	if len(notes) > 0 {
		body += "\n\n[" + strings.Join(notes, " ") + "]"
	}
	failed := timedOut || d.Signal != "" || d.ExitCode == nil || *d.ExitCode != 0
	if sb != nil && failed {
		if h := sb.DenialHint(text); h != "" {
			body += "\n" + h
		}
	}
	return &Result{
		Content: []llm.Content{llm.Text(body)},
		IsError: failed,
		Details: d,
	}, nil
}

func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", int(d/time.Second))
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func (b *BashTool) startJob(env *Env, a bashArgs, dir string, extra []string) (*Result, error) {
	if env == nil || env.Jobs == nil {
		return ErrorResult("Background jobs are not available in this session; run the command without background."), nil
	}
	info, err := env.Jobs.Start(JobSpec{Command: a.Command, Dir: dir, Shell: shellOf(env), Env: extra, Sandbox: callSandbox(env, a)})
	if err != nil {
		return errorf("Cannot start the job: %v", err), nil
	}
	text := fmt.Sprintf("Started job %s (pid %d); output goes to %s.\nCheck it with {\"job\":%q,\"action\":\"output\"}, wait for it with action \"wait\", end it with action \"stop\".",
		info.ID, info.PID, info.OutputPath, info.ID)
	return &Result{Content: []llm.Content{llm.Text(text)}, Details: BashDetails{Job: &info, Sandboxed: callSandbox(env, a) != nil}}, nil
}

// jobAction answers {job, action}; the default action is output.
// chars is the call's Limit.
func (b *BashTool) jobAction(ctx context.Context, env *Env, a bashArgs, chars int) (*Result, error) {
	if env == nil || env.Jobs == nil {
		return ErrorResult("Background jobs are not available in this session."), nil
	}
	jobs := env.Jobs
	if _, ok := jobs.Get(a.Job); !ok {
		return errorf("No background job %q in this session.", a.Job), nil
	}
	var head string
	switch a.Action {
	case "", "output":
	case "wait":
		wait := a.timeout()
		info, err := jobs.Wait(ctx, a.Job, wait)
		if err != nil {
			return nil, fmt.Errorf("bash: wait for %s: %w", a.Job, err)
		}
		if info.Status == JobRunning {
			head = fmt.Sprintf("Still running after waiting %s.\n", formatDuration(wait))
		}
	case "stop":
		if _, err := jobs.Stop(a.Job); err != nil {
			return errorf("Cannot stop %s: %v", a.Job, err), nil
		}
	default:
		return errorf("Unknown action %q; use output, wait or stop.", a.Action), nil
	}
	info, out, err := jobs.Output(a.Job, chars)
	if err != nil {
		return errorf("%v", err), nil
	}
	out = strings.TrimRight(out, "\n")
	if out == "" {
		out = "(no output yet)"
		if info.Status != JobRunning {
			out = "(no output)"
		}
	}
	text := head + jobStatusLine(info) + "\n" + out
	if info.Sandboxed && env.Sandbox != nil && info.ExitCode != nil && *info.ExitCode != 0 {
		if h := env.Sandbox.DenialHint(out); h != "" {
			text += "\n" + h
		}
	}
	return &Result{Content: []llm.Content{llm.Text(text)}, Details: BashDetails{ExitCode: info.ExitCode, Job: &info}}, nil
}

func jobStatusLine(info JobInfo) string {
	s := fmt.Sprintf("Job %s (pid %d) ", info.ID, info.PID)
	switch info.Status {
	case JobRunning:
		s += "is running."
	case JobStopped:
		s += "was stopped."
	default:
		if info.ExitCode != nil {
			s += fmt.Sprintf("exited with code %d.", *info.ExitCode)
		} else {
			s += "exited."
		}
	}
	return s + " Output file: " + info.OutputPath
}

// changedSince resolves the command again and reports whether what the
// verdict judged (its directory, the files it writes or deletes, the paths
// it reads and the links its globs and walks meet) resolves
// differently now: earlier calls of the same reply ran in between. It cannot
// see what changes while the command runs (that is the sandbox's job).
func changedSince(r *Resolved, call *Call, env *Env) string {
	now := Resolve(NameBash, call.Args, env)
	switch {
	case now.Dir != r.Dir:
		return fmt.Sprintf("its working directory now resolves to %s, not %s", now.Dir, r.Dir)
	case !slices.Equal(now.Changes, r.Changes):
		for i, p := range now.Changes {
			if i >= len(r.Changes) || r.Changes[i] != p {
				return "a file it writes now resolves to " + p
			}
		}
		return "the files it writes resolve differently"
	case !r.Shell.SameView(now.Shell):
		return "a path it reads, or a link in a tree it walks, now leads elsewhere"
	}
	return ""
}

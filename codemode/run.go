package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/armadra/ama-rpc/internal/jsonline"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

const (
	// maxInFlight is how many tools.<name>() calls of one script run at
	// once; later ones queue in arrival order.
	maxInFlight = 8
	// maxKeptOutput is the most output the parent keeps of one script.
	maxKeptOutput = 16 << 20
	// partialChars is the tail of the output a tool_execution_update shows.
	partialChars = 4000
	// startupTimeout bounds the child's start (before the script's own
	// deadline applies).
	startupTimeout = 30 * time.Second
	// stderrTail is how much of the child's stderr is kept for diagnostics.
	stderrTail = 4000
)

// outcome is what one script run produced.
type outcome struct {
	ok        bool
	err       string
	elapsedMs int64
	items     []string
	kept      int // characters of output kept
	discarded int // characters of output dropped past maxKeptOutput
	toolCalls int
	timedOut  bool
	aborted   bool
	store     map[string]json.RawMessage // the changed store (success only)
}

// nestedCaller runs one nested call through the session's pipeline.
type nestedCaller func(ctx context.Context, name string, args json.RawMessage) *tools.Result

// execute runs the script in a child process and serves its tool calls.
// It returns when the child is gone and every nested call it started has
// ended, so all nested events precede the caller's tool_execution_end.
func (t *Tool) execute(ctx context.Context, run *runMsg, opts options, callable map[string]bool, nested nestedCaller, update func(string)) *outcome {
	o := &outcome{}
	start := time.Now()
	cmd := exec.Command(t.exe, ChildArg)
	// Nothing of ama-rpc's environment (keys, tokens) reaches the script
	// process; a runtime crash (the memory wall) prints one line.
	cmd.Env = []string{"GOTRACEBACK=none"}
	cmd.Dir = "/"
	cmd.SysProcAttr = scriptProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return failStart(o, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return failStart(o, err)
	}
	errTail := &tailBuffer{max: stderrTail}
	cmd.Stderr = errTail
	if err := cmd.Start(); err != nil {
		return failStart(o, err)
	}
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	lines := jsonline.NewWriter(stdin)
	send := func(v any) { _ = lines.Write(v) } // a dead child's pipe fails; its end is seen on stdout
	send(run)

	msgs := make(chan childMsg, 16)
	go func() {
		defer close(msgs)
		rd := jsonline.NewReader(stdout, maxKeptOutput+1024)
		for line, err := rd.Next(); err == nil; line, err = rd.Next() {
			var m childMsg
			if json.Unmarshal(line, &m) == nil {
				msgs <- m
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()

	callCtx, cancelCalls := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var queue []childMsg
	inFlight := 0
	finished := make(chan struct{}, maxInFlight)
	startCall := func(m childMsg) {
		inFlight++
		o.toolCalls++
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			res := nested(callCtx, m.Name, m.Input)
			send(toResult(m.ID, m.Name, res, time.Since(began).Milliseconds()))
			finished <- struct{}{}
		}()
	}
	// The deadline counts from the child's ready message, so a loaded
	// machine's process start does not eat a short timeout; the start
	// itself is bounded by startupTimeout.
	timer := time.NewTimer(startupTimeout)
	defer timer.Stop()
	gotDone, ready := false, false
loop:
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				break loop
			}
			switch m.Type {
			case "ready":
				ready = true
				timer.Reset(time.Duration(opts.timeoutMs) * time.Millisecond)
			case "tool_call":
				if !callable[m.Name] {
					send(resultMsg{Type: "tool_result", ID: m.ID, Error: "Tool " + m.Name + " is not available in codemode"})
					continue
				}
				if inFlight < maxInFlight {
					startCall(m)
				} else {
					queue = append(queue, m)
				}
			case "output":
				n := len([]rune(m.Text))
				if o.discarded > 0 || o.kept+n > maxKeptOutput {
					o.discarded += n
					continue
				}
				o.kept += n
				o.items = append(o.items, m.Text)
				if update != nil {
					update(partial(o.items))
				}
			case "store":
				o.store = m.Entries
			case "done":
				gotDone = true
				o.ok, o.err, o.elapsedMs = m.OK, m.Error, m.ElapsedMs
				break loop
			}
		case <-finished:
			inFlight--
			if len(queue) > 0 && callCtx.Err() == nil {
				m := queue[0]
				queue = queue[1:]
				startCall(m)
			}
		case <-timer.C:
			o.timedOut = true
			o.err = fmt.Sprintf("Script timed out after %d ms", opts.timeoutMs)
			if !ready {
				o.err = fmt.Sprintf("codemode sandbox did not start within %v", startupTimeout)
			}
			break loop
		case <-ctx.Done():
			o.aborted = true
			o.err = "Script aborted"
			break loop
		}
	}
	kill()
	cancelCalls() // nested calls still running end as aborted
	for inFlight > 0 {
		<-finished
		inFlight--
	}
	wg.Wait()
	_ = stdin.Close()
	werr := cmd.Wait()
	if o.elapsedMs == 0 {
		o.elapsedMs = time.Since(start).Milliseconds()
	}
	if !gotDone && !o.timedOut && !o.aborted {
		o.ok = false
		o.err = crashText(werr, errTail, t.cfg.MaxHeapMB)
	}
	if !o.ok {
		o.store = nil
	}
	return o
}

func failStart(o *outcome, err error) *outcome {
	o.err = "Failed to start codemode sandbox: " + err.Error()
	return o
}

// crashText explains a child that ended without done: the memory cap
// (RLIMIT_DATA makes the Go runtime die "out of memory") or anything else.
func crashText(err error, tail *tailBuffer, heapMB int) string {
	tail.mu.Lock()
	oom := tail.oom
	tail.mu.Unlock()
	if oom {
		return memoryText(heapMB)
	}
	stderr := tail.String()
	how := "code 0"
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = ws.Signal().String()
		} else {
			how = fmt.Sprintf("code %d", ee.ExitCode())
		}
	}
	text := "codemode sandbox exited unexpectedly (" + how + ")"
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	if s := strings.Join(lines, " | "); s != "" {
		text += ": " + s
	}
	return text
}

// toResult turns a nested call's result into what the script's promise
// settles with (README "Codemode", values of tools.<name>()).
func toResult(id int, name string, res *tools.Result, wallMs int64) resultMsg {
	out := resultMsg{Type: "tool_result", ID: id}
	if bd, ok := bashData(name, res, wallMs); ok {
		out.OK, out.Value = true, bd
		return out
	}
	if res.IsError {
		text := llm.JoinText(res.Content, "")
		if text == "" {
			text = "Tool " + name + " failed"
		}
		out.Error = text
		return out
	}
	out.OK = true
	if len(res.Structured) > 0 && string(res.Structured) != "null" {
		out.Value = res.Structured
		return out
	}
	b, _ := json.Marshal(llm.JoinText(res.Content, ""))
	out.Value = b
	return out
}

// bashData is the BashResult of a foreground bash call that ran (any exit
// code); background starts and denials are not.
func bashData(name string, res *tools.Result, wallMs int64) (json.RawMessage, bool) {
	if name != tools.NameBash {
		return nil, false
	}
	d, ok := res.Details.(tools.BashDetails)
	if !ok || d.Job != nil {
		return nil, false
	}
	v := struct {
		Output         string `json:"output"`
		Truncated      bool   `json:"truncated"`
		FullOutputPath string `json:"fullOutputPath,omitempty"`
		ExitCode       *int   `json:"exitCode"`
		WallTimeMs     int64  `json:"wallTimeMs"`
	}{llm.JoinText(res.Content, ""), d.Truncated, d.FullOutputPath, d.ExitCode, wallMs}
	b, err := json.Marshal(v)
	return b, err == nil
}

// tailBuffer keeps the last max bytes written to it.
// It notes a Go runtime memory failure wherever it appears.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
	oom bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(p)
	t.oom = t.oom || strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate memory") ||
		strings.Contains(s, "errno: 12") // ENOMEM as the race runtime (ThreadSanitizer) reports it
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// partial is the last partialChars runes of the items joined by "\n",
// built from the end so long outputs cost no more than the tail.
func partial(items []string) string {
	i, n := len(items), 0
	for i > 0 && n < partialChars {
		i--
		n += len([]rune(items[i])) + 1
	}
	return tailRunes(strings.Join(items[i:], "\n"), partialChars)
}

// tailRunes is the last n runes of s.
func tailRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

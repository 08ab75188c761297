package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// sandboxRows prints what the bash sandbox costs end to end, as a host
// sees it: a session whose fake model makes `calls` bash calls of `true`
// (full-auto, so no approval either way), run with the sandbox on
// (sandbox.bash auto in the user config) and off (AMA_SANDBOX=off), the
// two alternated in each of `runs` rounds so both see the same load.
// Per call: the wall time of a step, from one tool_execution_end to the
// next (the fake model's reply and one bash call; ama-rpc may write a
// call's start and end together, so the call alone is not seen from
// outside: the difference between on and off is the sandbox's), median
// over every step but each session's first call (from its
// tool_execution_start; it starts the pre-started launcher and is reported
// apart), and the CPU time the
// session's process tree spent (ama-rpc, the launcher, the commands)
// divided by the calls (a mean: the launcher's start included). Then the
// time to hello, on and off, paired: the sandbox's probe must not delay
// it. The background self-test is skipped in the call rows
// (AMA_NO_SANDBOX_SELFTEST: its CPU is no call's) and runs in the hello
// rows. With load > 0 it all runs again with that many busy loops.
func sandboxRows(bin, dir string, calls, runs, load int) {
	proj := filepath.Join(dir, "proj")
	cfg := filepath.Join(dir, "home", ".config", "ama")
	for _, d := range []string{proj, cfg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fail(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"sandbox":{"bash":"auto","network":"deny"}}`), 0o644); err != nil {
		fail(err)
	}
	var resp []any
	for i := range calls {
		// `true N`: the same call repeated is refused after a few.
		resp = append(resp, map[string]any{"steps": []any{map[string]any{"toolCall": map[string]any{"name": "bash", "arguments": map[string]string{"command": fmt.Sprintf("true %d", i)}}}}})
	}
	resp = append(resp, map[string]any{"text": "done"})
	b, _ := json.Marshal(map[string]any{"version": 1, "responses": resp})
	script := filepath.Join(dir, "script-sandbox.json")
	if err := os.WriteFile(script, b, 0o644); err != nil {
		fail(err)
	}
	if _, ok := hello(bin, dir, true); !ok {
		fmt.Printf("%-28s %10s   (hello lists no sandbox capability here)\n", "bash sandbox rows", "skipped")
		return
	}
	pass := func(label string) {
		var on, off, firstOn, firstOff, ratio, diff, cpuOn, cpuOff, extra []time.Duration
		for range runs {
			a := bashSession(bin, dir, proj, script, calls, true)
			z := bashSession(bin, dir, proj, script, calls, false)
			on, off = append(on, a.steps...), append(off, z.steps...)
			firstOn, firstOff = append(firstOn, a.first), append(firstOff, z.first)
			ratio = append(ratio, time.Duration(1000*float64(median(a.steps))/float64(median(z.steps))))
			diff = append(diff, median(a.steps)-median(z.steps))
			cpuOn, cpuOff = append(cpuOn, a.cpu/time.Duration(calls)), append(cpuOff, z.cpu/time.Duration(calls))
			extra = append(extra, (a.cpu-z.cpu)/time.Duration(calls))
		}
		r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
		fmt.Printf("%-28s %10s   step (n=%d, min %s, max %s); first call %s; cpu/call %s\n", "bash true, sandbox on"+label, r(median(on)),
			len(on), r(minOf(on)), r(maxOf(on)), r(median(firstOn)), r(median(cpuOn)))
		fmt.Printf("%-28s %10s   step (n=%d, min %s, max %s); first call %s; cpu/call %s\n", "bash true, sandbox off"+label, r(median(off)),
			len(off), r(minOf(off)), r(maxOf(off)), r(median(firstOff)), r(median(cpuOff)))
		fmt.Printf("%-28s %10s   step %.2fx (median of %d paired sessions of %d calls, wall +min %s, max %s); cpu +%s/call (min %s, max %s)\n",
			"  on - off"+label, r(median(diff)), float64(median(ratio))/1000, runs, calls, r(minOf(diff)), r(maxOf(diff)),
			r(median(extra)), r(minOf(extra)), r(maxOf(extra)))
		var hOn, hOff []time.Duration
		for range runs * 4 {
			hOn = append(hOn, helloTime(bin, dir, true))
			hOff = append(hOff, helloTime(bin, dir, false))
		}
		fmt.Printf("%-28s %10s   (off %s; n=%d, min %s/%s, max %s/%s on/off)\n", "time to hello, sandbox on"+label, r(median(hOn)), r(median(hOff)),
			len(hOn), r(minOf(hOn)), r(minOf(hOff)), r(maxOf(hOn)), r(maxOf(hOff)))
	}
	pass("")
	if load > 0 {
		stop := burn(load)
		defer stop()
		pass(fmt.Sprintf(", load %d", load))
	}
}

// session is one bash session's result: each call's wall time and the
// CPU time of the whole process tree.
type session struct {
	first time.Duration   // the first call
	steps []time.Duration // the others, each with its model step
	cpu   time.Duration
}

func bashSession(bin, dir, proj, script string, calls int, sandboxed bool) session {
	cmd := exec.Command(bin, "--model", "fake/echo", "--no-session", "--permission-mode", "full-auto")
	cmd.Env = append(env(dir), "AMA_FAKE_SCRIPT="+script, "AMA_NO_SANDBOX_SELFTEST=1")
	if !sandboxed {
		cmd.Env = append(cmd.Env, "AMA_SANDBOX=off")
	}
	cmd.Dir = proj
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	if _, err := io.WriteString(stdin, `{"id":"1","type":"prompt","message":"bench"}`+"\n"); err != nil {
		fail(err)
	}
	var s session
	var t0 time.Time
	n := 0
	br := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			fail(fmt.Errorf("stdout ended before agent_settled: %v", err))
		}
		switch {
		case strings.HasPrefix(line, `{"type":"tool_execution_start"`) && n == 0:
			t0 = time.Now()
		case strings.HasPrefix(line, `{"type":"tool_execution_end"`):
			now := time.Now()
			if n++; n == 1 {
				s.first = now.Sub(t0)
			} else {
				s.steps = append(s.steps, now.Sub(t0))
			}
			t0 = now
			if strings.Contains(line, `"sandboxed":true`) != sandboxed || !strings.Contains(line, `"exitCode":0`) {
				fail(fmt.Errorf("bash true (sandboxed %v): %s", sandboxed, line))
			}
		case strings.HasPrefix(line, `{"type":"agent_settled"`):
			stdin.Close()
			_, _ = io.Copy(io.Discard, br)
			if err := cmd.Wait(); err != nil {
				fail(err)
			}
			if n != calls {
				fail(fmt.Errorf("%d bash calls, want %d", n, calls))
			}
			s.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			return s
		}
	}
}

// helloTime is timeToHello with the sandbox configured (on) or turned
// off by AMA_SANDBOX=off; the self-test runs (behind hello).
func helloTime(bin, dir string, sandboxed bool) time.Duration {
	d, ok := hello(bin, dir, sandboxed)
	if ok != sandboxed {
		fail(fmt.Errorf("hello with the sandbox %v lists the sandbox capability: %v", sandboxed, ok))
	}
	return d
}

// hello is the time from spawn to hello and whether hello lists the
// sandbox capability.
func hello(bin, dir string, sandboxed bool) (time.Duration, bool) {
	e := env(dir)
	if !sandboxed {
		e = append(e, "AMA_SANDBOX=off")
	}
	d, line := firstLine(bin, dir, e)
	return d, strings.Contains(line, `"sandbox"`)
}

// burn starts n busy loops, each in a session of its own (load from other
// programs: with the scheduler's autogroups, loops in this session would
// only slow this session down), and returns what stops them.
func burn(n int) func() {
	var cmds []*exec.Cmd
	for range n {
		c := exec.Command("/bin/sh", "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			fail(err)
		}
		cmds = append(cmds, c)
	}
	return func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

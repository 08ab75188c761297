//go:build linux

package tools_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/tools"
)

// becomeSubreaper makes this test process adopt orphaned descendants, so
// that the test can wait for a grandchild the shell started.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Skipf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	t.Cleanup(func() { syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0) })
}

var pidsRE = regexp.MustCompile(`shell=(\d+) child=(\d+)`)

// assertGroupGone waits (bounded) for the adopted child to die and checks
// that nothing is left in the shell's process group.
func assertGroupGone(t *testing.T, shell, child int) {
	t.Helper()
	reaped := make(chan error, 1)
	go func() {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(child, &ws, 0, nil)
		if errors.Is(err, syscall.ECHILD) {
			err = nil // already reaped by the shell: it is gone
		}
		reaped <- err
	}()
	select {
	case err := <-reaped:
		if err != nil {
			t.Fatalf("wait4(%d): %v", child, err)
		}
	case <-time.After(10 * time.Second):
		syscall.Kill(child, syscall.SIGKILL) // unblock the waiter
		<-reaped
		t.Fatalf("child %d survived", child)
	}
	if err := syscall.Kill(-shell, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process group %d still exists (kill: %v)", shell, err)
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	becomeSubreaper(t)
	env := newEnv(t)
	r := run(t, env, "bash", map[string]any{"command": "sleep 30 & echo shell=$$ child=$!; wait", "timeoutMs": 1000})
	got := mustErr(t, r, "Timed out after 1 s")
	m := pidsRE.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no pids in %q", got)
	}
	shell, _ := strconv.Atoi(m[1])
	child, _ := strconv.Atoi(m[2])
	assertGroupGone(t, shell, child)
}

func TestBashCancelKillsGroup(t *testing.T) {
	becomeSubreaper(t)
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		once sync.Once
		pids []string
	)
	update := func(s string) {
		if m := pidsRE.FindStringSubmatch(s); m != nil {
			once.Do(func() { pids = m; cancel() })
		}
	}
	r := runCtx(t, ctx, env, "bash", map[string]any{"command": "sleep 30 & echo shell=$$ child=$!; wait"}, update)
	if !r.IsError || text(r) != "aborted by user" {
		t.Fatalf("got %q", text(r))
	}
	shell, _ := strconv.Atoi(pids[1])
	child, _ := strconv.Atoi(pids[2])
	assertGroupGone(t, shell, child)
}

func TestBashDirectExecuteReturnsCtxError(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := tools.NewBash(nil).Execute(ctx, &tools.Call{Args: rawArgs(t, map[string]any{"command": "sleep 30"}), Env: env})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v", res, err)
	}
}

// Linux only: waitFile waits with inotify.

package mcpclient

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/armadra/ama-rpc/tools"
)

// An abort reaches the server: the test server's slow tool writes
// <marker>.started when the call arrives and <marker>.cancelled when the
// MCP cancellation (notifications/cancelled) ends it.
func TestCancelReachesServer(t *testing.T) {
	s := newTestSet(t, []Server{stdioServer("t")}, Options{})
	ready(t, s)
	tool, _ := s.Registry().Get("mcp__t__slow")
	dir := t.TempDir()
	marker := filepath.Join(dir, "slow")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *tools.Result, 1)
	go func() {
		done <- tools.Execute(ctx, tool, &tools.Call{Args: json.RawMessage(`{"ms":60000,"marker":"` + marker + `"}`)})
	}()
	waitFile(t, marker+".started")
	cancel()
	if res := <-done; !res.IsError {
		t.Errorf("a cancelled call succeeded: %+v", res)
	}
	waitFile(t, marker+".cancelled")
}

// waitFile waits (inotify, no polling) until path exists, at most 20 s.
func waitFile(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	buf := make([]byte, 4096)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("%s did not appear", path)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && err != unix.EINTR {
			t.Fatal(err)
		} else if n > 0 {
			_, _ = unix.Read(fd, buf)
		}
	}
}

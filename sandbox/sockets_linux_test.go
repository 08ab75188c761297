//go:build linux

package sandbox_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
)

// connectScript connects to the Unix socket at path (an abstract name
// after a NUL) and says so (perl: it starts in a fraction of python's time
// on a loaded machine).
func connectScript(path string) string {
	return `perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => $ARGV[0] =~ s/^@/\0/r) or die "$!\n"; print $s "x"; print "connected\n"' '` + path + `' 2>&1`
}

// accepted reports whether a connection is waiting on ln (connect(2)
// completes into the backlog without an accept, so after the command ended
// a connection it made is there).
func accepted(t *testing.T, ln *net.UnixListener) bool {
	t.Helper()
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var nfd int
	var aerr error
	if err := rc.Control(func(fd uintptr) {
		nfd, _, aerr = syscall.Accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
	}); err != nil {
		t.Fatal(err)
	}
	if aerr == nil {
		syscall.Close(nfd)
		return true
	}
	if !errors.Is(aerr, syscall.EAGAIN) {
		t.Fatalf("accept: %v", aerr)
	}
	return false
}

// TestJailUnixSockets: a daemon's or agent's pathname socket outside the
// project (here a real listener in a directory the jail shows read-only)
// cannot be connected to from the jail, whether the command finds it in
// the kernel's socket table or in its environment (SSH_AUTH_SOCK,
// DBUS_SESSION_BUS_ADDRESS); a socket the command makes in the project
// still works. Checked by side effect: the listener's backlog is empty.
func TestJailUnixSockets(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl needed to connect")
	}
	w := newWorld(t)
	if strings.HasPrefix(w.root, os.TempDir()) {
		t.Skip("no directory outside the private /tmp to put the socket in")
	}
	dir := filepath.Join(w.root, "agent")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The control: without the sandbox the connection is made and seen.
	if b, err := exec.Command("sh", "-c", connectScript(sock)).CombinedOutput(); err != nil || !strings.Contains(string(b), "connected") || !accepted(t, ln) {
		t.Fatalf("control connection failed: %v %s", err, b)
	}
	modes(t, w, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		c := rt.For(w.project, "", false)
		for _, env := range []string{"", "SSH_AUTH_SOCK=" + sock, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + sock + ",guid=0"} {
			out, _ := w.sh(t, c, env+" "+connectScript(sock))
			got := accepted(t, ln)
			if !jail {
				// Landlock refuses it from ABI 9 (resolve_unix) only.
				t.Logf("landlock-only (ABI %d), %q: connected=%v: %s", rt.Status().ABI, env, got, out)
				continue
			}
			if got || strings.Contains(out, "connected") {
				t.Errorf("%q: the command reached the socket outside: %s", env, out)
			}
		}
		if !jail {
			return
		}
		// A socket of the command's own, in the project, works.
		out, code := w.sh(t, c, `python3 -c '
import socket, os
p = "own.sock"
l = socket.socket(socket.AF_UNIX); l.bind(p); l.listen(1)
s = socket.socket(socket.AF_UNIX); s.connect(p); print("own ok")
os.unlink(p)' 2>&1`)
		if code != 0 || !strings.Contains(out, "own ok") {
			t.Errorf("a socket in the project does not work (%d): %s", code, out)
		}
	})
}

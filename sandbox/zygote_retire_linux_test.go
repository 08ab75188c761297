//go:build linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestStartRetiresGoneLauncher: a launcher that ended (a tripped one exits
// once its commands end) before its reader saw the end refuses a command
// with errRetired and is marked retired at once, so Command.Start's retry
// gets a new launcher from zygoteFor instead of the same one again (it
// failed the retry too under load: "the launcher was retired").
func TestStartRetiresGoneLauncher(t *testing.T) {
	z, peer := endedZygote(t)
	syscall.Close(peer) // the launcher's end: it ended
	// No reader runs: it has not seen the end yet.
	if err := startTrue(t, z); !errors.Is(err, errRetired) {
		t.Fatalf("start on an ended launcher: %v, want errRetired", err)
	}
	if z.err() == nil {
		t.Fatal("a launcher that refused a command for having ended is still handed out")
	}
	if z.running != 0 || len(z.starts) != 0 || len(z.exits) != 0 {
		t.Errorf("the refused command is still counted: running %d, starts %d, exits %d", z.running, len(z.starts), len(z.exits))
	}
}

// TestStartRetiresClosedLauncher: the reader closes the control socket
// once the launcher ended; a start whose write comes after that close
// (the reader saw the end between send's check and its write) is refused
// with errRetired too, so Start retries on a new launcher instead of
// failing the command with "use of closed file".
func TestStartRetiresClosedLauncher(t *testing.T) {
	z, peer := endedZygote(t)
	defer syscall.Close(peer)
	z.ctl.Close() // as read does, before start marks anything
	if err := startTrue(t, z); !errors.Is(err, errRetired) {
		t.Fatalf("start on a closed control socket: %v, want errRetired", err)
	}
	if z.err() == nil {
		t.Fatal("a launcher whose socket is closed is still handed out")
	}
}

// endedZygote is a zygote on one end of a fresh control socket pair, with
// no launcher and no reader behind it; it returns the other end.
func endedZygote(t *testing.T) (*zygote, int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	ctl := os.NewFile(uintptr(fds[0]), "ctl")
	t.Cleanup(func() { ctl.Close() })
	rc, err := ctl.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return &zygote{ctl: ctl, rc: rc, starts: map[string]chan startReply{}, exits: map[string]chan exitReply{}, gone: make(chan struct{})}, fds[1]
}

// startTrue asks z to start /bin/true with /dev/null as its standard files.
func startTrue(t *testing.T, z *zygote) error {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	fd := int(null.Fd())
	_, err = z.start("/bin/true", []string{"true"}, nil, "/", []int{fd, fd, fd})
	return err
}

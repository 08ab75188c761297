//go:build linux

package sandbox_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/armadra/ama-rpc/sandbox"
)

// hostIPC is a set of System V and POSIX IPC objects this process made
// outside the sandbox, each holding (or named with) a marker.
type hostIPC struct {
	marker                 string
	shmKey, msgKey, semKey int
	shmID, msgID, semID    int
	mqName                 string // without the leading slash (mq_open(2))
	ownShmKey              int    // the command's own segment (removed here if it is left)
	ownMq                  string // the command's own queue
}

// ipcCall is a System V or POSIX IPC system call; a failure fails t.
func ipcCall(t *testing.T, what string, nr, a1, a2, a3, a4 uintptr) int {
	t.Helper()
	r, _, e := unix.Syscall6(nr, a1, a2, a3, a4, 0, 0)
	if e != 0 {
		t.Fatalf("%s: %v", what, e)
	}
	return int(r)
}

// newHostIPC makes a SysV shared memory segment with the marker in it, a
// SysV message queue holding the marker as a message, a SysV semaphore set
// and a POSIX message queue holding the marker, all mode 0600 and this
// user's; t.Cleanup removes them (and the command's own, if it left any).
func newHostIPC(t *testing.T) *hostIPC {
	t.Helper()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	base := 0x41000000 | int(rnd[0])<<16 | int(rnd[1])<<8 | int(rnd[2])&0xf0
	h := &hostIPC{marker: "AMA-HOST-IPC-" + hex.EncodeToString(rnd[:]),
		shmKey: base + 1, msgKey: base + 2, semKey: base + 3, ownShmKey: base + 4,
		mqName: "ama-host-ipc-" + hex.EncodeToString(rnd[:]), ownMq: "ama-own-ipc-" + hex.EncodeToString(rnd[:])}
	const excl = unix.IPC_CREAT | unix.IPC_EXCL | 0o600

	h.shmID = ipcCall(t, "shmget", unix.SYS_SHMGET, uintptr(h.shmKey), 4096, excl, 0)
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(h.shmID, unix.IPC_RMID, nil) })
	seg, err := unix.SysvShmAttach(h.shmID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	copy(seg, h.marker)
	_ = unix.SysvShmDetach(seg)

	h.msgID = ipcCall(t, "msgget", unix.SYS_MSGGET, uintptr(h.msgKey), excl, 0, 0)
	t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_MSGCTL, uintptr(h.msgID), unix.IPC_RMID, 0) })
	msg := struct {
		mtype int // C long
		text  [64]byte
	}{mtype: 1}
	copy(msg.text[:], h.marker)
	ipcCall(t, "msgsnd", unix.SYS_MSGSND, uintptr(h.msgID), uintptr(unsafe.Pointer(&msg)), uintptr(len(h.marker)), unix.IPC_NOWAIT)

	h.semID = ipcCall(t, "semget", unix.SYS_SEMGET, uintptr(h.semKey), 1, excl, 0)
	t.Cleanup(func() { _, _, _ = unix.Syscall6(unix.SYS_SEMCTL, uintptr(h.semID), 0, unix.IPC_RMID, 0, 0, 0) })

	name, err := unix.BytePtrFromString(h.mqName)
	if err != nil {
		t.Fatal(err)
	}
	fd := ipcCall(t, "mq_open", unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600, 0)
	t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0) })
	m := []byte(h.marker)
	ipcCall(t, "mq_timedsend", unix.SYS_MQ_TIMEDSEND, uintptr(fd), uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), 0)
	_ = unix.Close(fd)

	own, _ := unix.BytePtrFromString(h.ownMq)
	t.Cleanup(func() {
		_, _, _ = unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(own)), 0, 0)
		if id, err := unix.SysvShmGet(h.ownShmKey, 0, 0); err == nil {
			_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		}
	})
	return h
}

// ipcProbe reads the host's objects by key, by id and by name, then makes,
// uses and removes objects of its own (a SysV segment, a POSIX queue, a
// POSIX semaphore through multiprocessing.Lock). One line per step.
const ipcProbe = `
import ctypes, multiprocessing, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
err = ctypes.get_errno
shm_key, shm_id, msg_key, msg_id, sem_key, sem_id, own_key = (int(a) for a in sys.argv[1:8])
mq, own_mq, n = sys.argv[8].encode(), sys.argv[9].encode(), int(sys.argv[10])
bad = ctypes.c_void_p(-1).value

print("shmget", libc.shmget(shm_key, 0, 0), err())
p = libc.shmat(shm_id, None, 0o10000)  # SHM_RDONLY
print("shmat-errno", err()) if p in (None, bad) else print("shm=" + ctypes.string_at(p, n).decode(errors="replace"))
print("shm-rmid", libc.shmctl(shm_id, 0, None), err())  # IPC_RMID
print("msgget", libc.msgget(msg_key, 0), err())
class Msg(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 128)]
m = Msg()
r = libc.msgrcv(msg_id, ctypes.byref(m), 128, 0, 0o4000)  # IPC_NOWAIT
print("msgrcv-errno", err()) if r < 0 else print("msg=" + m.mtext[:r].decode(errors="replace"))
print("semget", libc.semget(sem_key, 0, 0), err())
print("sem-rmid", libc.semctl(sem_id, 0, 0), err())  # IPC_RMID
q = libc.mq_open(mq, 0o4000, 0, None)  # O_RDONLY|O_NONBLOCK
if q < 0:
    print("mq_open-errno", err())
else:
    buf = ctypes.create_string_buffer(8192)
    r = libc.mq_receive(q, buf, 8192, None)
    print("mq_receive-errno", err()) if r < 0 else print("mq=" + buf.raw[:r].decode(errors="replace"))
print("mq_unlink", libc.mq_unlink(mq), err())

own = libc.shmget(own_key, 4096, 0o1000 | 0o2000 | 0o600)
p = libc.shmat(own, None, 0)
if own < 0 or p in (None, bad):
    print("own-shm-errno", err())
else:
    ctypes.memmove(p, b"own-shm-works", 13)
    print("own-shm=" + ctypes.string_at(p, 13).decode())
    libc.shmdt(ctypes.c_void_p(p))
    libc.shmctl(own, 0, None)  # IPC_RMID
q = libc.mq_open(own_mq, 0o100 | 0o200 | 0o2, 0o600, None)  # O_CREAT|O_EXCL|O_RDWR
if q < 0:
    print("own-mq-errno", err())
else:
    libc.mq_send(q, b"own-mq-works", 12, 0)
    buf = ctypes.create_string_buffer(8192)
    r = libc.mq_receive(q, buf, 8192, None)
    print("own-mq=" + buf.raw[:max(r, 0)].decode())
    libc.mq_unlink(own_mq)
lock = multiprocessing.Lock()
with lock:
    print("own-sem=lock-works")
`

// TestJailIPC: the jail has an IPC namespace of its own, so a command sees
// none of the host's System V shared memory segments, message queues and
// semaphore sets, nor its POSIX message queues (all this user's, mode
// 0600: X11's MIT-SHM segments hold the screen's pixels), not by key, id
// or name, and ipcs lists none of them; its own segments, queues and
// POSIX semaphores work. Landlock cannot scope System V or POSIX IPC:
// Landlock only leaves them reachable (documented, logged).
func TestJailIPC(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 needed for the probe")
	}
	w := newWorld(t)
	modes(t, w, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		h := newHostIPC(t)
		c := rt.For(w.project, "", false)
		args := fmt.Sprintf("%d %d %d %d %d %d %d /%s /%s %d", h.shmKey, h.shmID, h.msgKey, h.msgID, h.semKey, h.semID, h.ownShmKey, h.mqName, h.ownMq, len(h.marker))
		out, _ := w.sh(t, c, "ipcs -m -q -s 2>&1; python3 -c '"+ipcProbe+"' "+args+" 2>&1")
		for _, want := range []string{"own-shm=own-shm-works\n", "own-sem=lock-works\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("the command's own IPC failed: want %q in:\n%s", want, out)
			}
		}
		if !strings.Contains(out, "own-mq=own-mq-works\n") {
			// mq_open goes through the IPC namespace's internal mqueue
			// mount, which lies under no Landlock rule (documented).
			t.Logf("the command's own POSIX message queue is refused (Landlock): %s", line(out, "own-mq"))
		}
		// Opening a POSIX message queue: Landlock refuses it in both modes.
		if strings.Contains(out, "mq="+h.marker) {
			t.Errorf("the host's POSIX message queue was read:\n%s", out)
		}
		if got := h.mqMessage(t); !jail {
			// mq_unlink calls no Landlock hook: by name, the host's queue
			// can be removed (documented).
			t.Logf("landlock-only: the host's POSIX message queue after mq_unlink (not covered): %q", got)
		} else if got != h.marker {
			t.Errorf("the host's POSIX message queue lost its message (%q):\n%s", got, out)
		}
		if !jail {
			t.Logf("landlock-only: the host's System V IPC is not covered (documented): marker read %v:\n%s", strings.Contains(out, h.marker), out)
			return
		}
		if strings.Contains(out, h.marker) {
			t.Errorf("the host's IPC was read in the jail:\n%s", out)
		}
		for _, k := range []int{h.shmKey, h.msgKey, h.semKey} {
			if k := fmt.Sprintf("0x%08x", k); strings.Contains(out, k) {
				t.Errorf("ipcs lists the host's key %s in the jail:\n%s", k, out)
			}
		}
		for _, want := range []string{"shmget -1 2\n", "msgget -1 2\n", "semget -1 2\n", "mq_open-errno 2\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q (ENOENT) in:\n%s", want, out)
			}
		}
		// By side effect: the host's objects are all still there.
		if id, err := unix.SysvShmGet(h.shmKey, 0, 0); err != nil || id != h.shmID {
			t.Errorf("the host's segment was removed (%d, %v)", id, err)
		}
		if id, _, e := unix.Syscall(unix.SYS_SEMGET, uintptr(h.semKey), 0, 0); e != 0 || int(id) != h.semID {
			t.Errorf("the host's semaphore set was removed (%d, %v)", id, e)
		}
		if got := h.msgMessage(t); got != h.marker {
			t.Errorf("the host's message queue lost its message (%q)", got)
		}
	})
}

// line is the first line of out that starts with prefix.
func line(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// mqMessage takes the message in the host's POSIX queue ("" if none).
func (h *hostIPC) mqMessage(t *testing.T) string {
	t.Helper()
	name, _ := unix.BytePtrFromString(h.mqName)
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0, 0, 0, 0)
	if e != 0 {
		return "mq_open: " + e.Error()
	}
	defer unix.Close(int(fd))
	buf := make([]byte, 8192) // the default mq_msgsize
	n, _, e := unix.Syscall6(unix.SYS_MQ_TIMEDRECEIVE, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	if e != 0 {
		return "mq_timedreceive: " + e.Error()
	}
	return string(buf[:n])
}

// msgMessage takes the message in the host's System V queue ("" if none).
func (h *hostIPC) msgMessage(t *testing.T) string {
	t.Helper()
	var msg struct {
		mtype int // C long
		text  [64]byte
	}
	n, _, e := unix.Syscall6(unix.SYS_MSGRCV, uintptr(h.msgID), uintptr(unsafe.Pointer(&msg)), uintptr(len(msg.text)), 0, unix.IPC_NOWAIT, 0)
	if e != 0 {
		return "msgrcv: " + e.Error()
	}
	return string(msg.text[:n])
}

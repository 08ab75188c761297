//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
	"golang.org/x/sys/unix"
)

// hostTerminals are the host's terminal devices present here, found by name
// (independently of the jail's own classification by device number): the
// virtual consoles and their screens, the console, serial lines, and links
// to them (/dev/char/M:m, /dev/serial/by-id).
func hostTerminals() []string {
	var out []string
	for _, g := range []string{"/dev/console", "/dev/tty0", "/dev/tty1", "/dev/tty63", "/dev/ttyS0", "/dev/ttyUSB*",
		"/dev/ttyACM*", "/dev/ttyAMA*", "/dev/hvc*", "/dev/ttyprintk", "/dev/vcs", "/dev/vcs1", "/dev/vcsa1", "/dev/vcsu1",
		"/dev/char/4:1", "/dev/char/4:64", "/dev/char/5:1", "/dev/serial/by-id/*"} {
		m, _ := filepath.Glob(g)
		for i, p := range m {
			if i > 1 { // two of a class are enough
				break
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// terminalProbe opens dev in a new session (so a terminal becomes the
// controlling one) and prints what the kernel let it do: "TTY" when the
// descriptor is a terminal, "CTTY n" with the session's tty_nr when it
// became the controlling terminal, "READ n" when it read n bytes (a VT's
// screen through vcs*). Terminals are never read (a read would block).
const terminalProbe = `probe() {
	setsid sh -c '
		{ command exec 3<>"$1" || command exec 3>"$1" || command exec 3<"$1"; } 2>/dev/null || { echo "$1 closed"; exit 0; }
		echo "$1 opened"
		if [ -t 3 ]; then echo "$1 TTY"; else
			case "$1" in *vcs*) n=$(head -c 64 <&3 | wc -c); [ "$n" -gt 0 ] && echo "$1 READ $n";; esac
		fi
		read -r l < /proc/self/stat; set -- $l; [ "$7" != 0 ] && echo "CTTY $7"
		exit 0' probe "$1"
}
`

// TestJailHostTerminals: the host's other terminals (virtual consoles, the
// console, serial lines) and the VTs' screens (vcs*) are out of a
// command's reach, also after setsid and through /dev/char links: writing
// there spoofs the user's screen like /dev/pts/N would. What the command
// needs of /dev still works. Without namespaces Landlock refuses opening
// them and making device nodes (README "Sandbox").
func TestJailHostTerminals(t *testing.T) {
	devs := hostTerminals()
	if len(devs) == 0 {
		t.Skip("no host terminal devices here")
	}
	script := terminalProbe
	for _, d := range devs {
		script += "probe " + d + "\n"
	}
	// A marker written to VT 1 shows in its screen (vcs1), read outside.
	marker := "AMA-VT-MARK-" + strconv.Itoa(os.Getpid())
	vt := exists("/dev/tty1") && exists("/dev/vcs1") && os.Geteuid() == 0
	if vt {
		// Directly, through a link, and as the controlling terminal
		// (opened for reading, then written through /dev/tty).
		script += "setsid sh -c 'printf " + marker + " > /dev/tty1; printf " + marker + " > /dev/char/4:1; " +
			"command exec 3</dev/tty1 && printf " + marker + " > /dev/tty' 2>/dev/null\n"
	}
	// A node of its own in a writable tree (root without namespaces
	// could make one).
	script += `mknod "$TMPDIR/amatty" c 4 1 2>/dev/null && echo "MKNOD char"; mknod "$TMPDIR/amablk" b 7 0 2>/dev/null && echo "MKNOD block"
touch "$TMPDIR/amafile" && echo "ok tmp"
`
	// What must keep working.
	script += `for d in null zero full random urandom; do head -c 1 /dev/$d >/dev/null && echo "ok $d"; done
echo x > /dev/null && echo "ok null-write"
echo x > /dev/stdout | cat >/dev/null && echo "ok stdout"
ls /dev/fd/ >/dev/null && echo "ok fd"
echo x > /dev/shm/ama-x && rm /dev/shm/ama-x && echo "ok shm"
python3 -c "
import os, pty
m, s = os.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    os.close(os.open(os.ttyname(s), os.O_RDWR))
    t = os.open('/dev/tty', os.O_RDWR)
    os.write(t, b'own-ctty')
    os._exit(0)
os.waitpid(pid, 0)
print('ok pty', os.read(m, 64).decode())
" 2>&1
`
	w := newWorld(t)
	modes(t, w, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		var before []byte
		if vt {
			before, _ = os.ReadFile("/dev/vcs1")
		}
		out, _ := w.sh(t, rt.For(w.project, "", false), script)
		t.Logf("devices %v:\n%s", devs, out)
		for _, bad := range []string{" TTY", "CTTY", " READ", "MKNOD"} {
			if strings.Contains(out, bad) {
				t.Errorf("a host terminal was reached (%q):\n%s", bad, out)
			}
		}
		if vt {
			after, _ := os.ReadFile("/dev/vcs1")
			if bytes.Count(after, []byte(marker)) > bytes.Count(before, []byte(marker)) {
				t.Errorf("the command wrote on virtual console 1 (%q on its screen)", marker)
			}
		}
		for _, ok := range []string{"ok null\n", "ok zero", "ok full", "ok random", "ok urandom", "ok null-write", "ok stdout",
			"ok fd", "ok shm", "ok pty own-ctty", "ok tmp"} {
			if !strings.Contains(out, ok) {
				t.Errorf("%q missing: /dev does not work as it should:\n%s", ok, out)
			}
		}
	})
}

// TestLauncherLaterTerminal: a terminal node that appears in /dev after the
// pre-started launcher built its jail (a USB serial line plugged in), or
// any other node (a disk, a loop device), is out of reach of the next
// command too: the jail's /dev holds the allowlist only.
func TestLauncherLaterTerminal(t *testing.T) {
	if os.Geteuid() != 0 || !exists("/dev/tty1") || !exists("/dev/loop0") {
		t.Skip("needs root to make a node in /dev, VT 1 and a loop device")
	}
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	if out, code := w.zsh(t, c, "true"); code != 0 {
		t.Fatalf("first command: %d %s", code, out)
	}
	node := "/dev/ama-test-tty-" + strconv.Itoa(os.Getpid())
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o600, 4<<8|1); err != nil {
		t.Skipf("mknod in /dev: %v", err)
	}
	defer os.Remove(node)
	disk := "/dev/ama-test-loop-" + strconv.Itoa(os.Getpid())
	if err := syscall.Mknod(disk, syscall.S_IFBLK|0o600, 7<<8|0); err != nil {
		t.Skipf("mknod in /dev: %v", err)
	}
	defer os.Remove(disk)
	out, _ := w.zsh(t, c, terminalProbe+"probe "+node+"\nprobe "+disk+"\n")
	if strings.Contains(out, "CTTY") || strings.Contains(out, " TTY") || strings.Contains(out, "opened") {
		t.Errorf("a node made after the launcher started was reached:\n%s", out)
	}
	if strings.Count(out, "closed") != 2 {
		t.Errorf("the probe did not run:\n%s", out)
	}
}

// TestJailDeviceNodesOutsideDev: a terminal node made outside /dev before
// the command (a chroot, a root file system being built), in the project
// or elsewhere, reaches no device in the jail: only /dev holds devices.
// Without namespaces this is not covered (README "Sandbox").
func TestJailDeviceNodesOutsideDev(t *testing.T) {
	if os.Geteuid() != 0 || !exists("/dev/tty1") {
		t.Skip("needs root to make a device node, and VT 1")
	}
	w := newWorld(t)
	var script string
	for _, p := range []string{filepath.Join(w.root, "tty1"), filepath.Join(w.project, "src", "tty1")} {
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o600, 4<<8|1); err != nil {
			t.Skipf("mknod: %v", err)
		}
		script += "probe " + p + "\n"
	}
	modes(t, w, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		out, _ := w.sh(t, rt.For(w.project, "", false), terminalProbe+script)
		if !jail {
			t.Logf("landlock-only (not covered):\n%s", out)
			return
		}
		if strings.Contains(out, "CTTY") || strings.Contains(out, " TTY") || strings.Count(out, "closed") != 2 {
			t.Errorf("a device node outside /dev was opened:\n%s", out)
		}
	})
}

// allowedDevices are the device nodes a sandboxed command may open (README
// "Sandbox"), written out here independently of the sandbox's own list.
var allowedDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// hostDevices walks the host's /dev (links not followed) and lists every
// character or block node off allowedDevices, and every link to one
// (/dev/char/M:m, /dev/block/M:m, /dev/disk/by-*), that this process may
// open for reading or writing itself (access(2): no driver sees an open
// from outside). /dev/pts (the user's pseudo terminals: TestJailUserTerminals)
// and /dev/shm are left out, and the nodes an open alone acts on (a
// watchdog arms its reboot timer, snapshot prepares hibernation) are never
// probed.
func hostDevices(t *testing.T) []string {
	t.Helper()
	skip := func(p string) bool {
		b := filepath.Base(p)
		return strings.HasPrefix(p, "/dev/pts/") || strings.HasPrefix(p, "/dev/shm/") ||
			strings.HasPrefix(b, "watchdog") || b == "snapshot" || slices.Contains(allowedDevices, p)
	}
	isDev := func(p string) bool {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil {
			return false
		}
		return st.Mode&syscall.S_IFMT == syscall.S_IFCHR || st.Mode&syscall.S_IFMT == syscall.S_IFBLK
	}
	var out []string
	_ = filepath.WalkDir("/dev", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if d.Type()&os.ModeSymlink != 0 {
			// A link to an allowed node or through /proc (/dev/fd,
			// /dev/stdin) is fine; one to any other node is probed.
			target, err := filepath.EvalSymlinks(p)
			if err != nil || skip(target) || strings.HasPrefix(target, "/proc/") {
				return nil
			}
		}
		if skip(p) || !isDev(p) {
			return nil
		}
		if unix.Faccessat(unix.AT_FDCWD, p, unix.R_OK, unix.AT_EACCESS) == nil ||
			unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS) == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// deviceProbe opens each path listed in the file $1 for reading, then for
// writing (non-blocking, never as the controlling terminal), and prints
// "OPENED <mode> <path>" for each open that succeeded, then "probed <n>".
const deviceProbe = `import os, sys
n = 0
for p in open(sys.argv[1]).read().split("\n"):
    if not p:
        continue
    n += 1
    for name, fl in (("read", os.O_RDONLY), ("write", os.O_WRONLY)):
        try:
            fd = os.open(p, fl | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError:
            continue
        os.close(fd)
        print("OPENED", name, p)
print("probed", n)
`

// deviceWorld is what the device tests start from: python3 (the probes are
// Python), the host's device nodes off the allowlist this process may open,
// and a world; it skips where either is missing.
func deviceWorld(t *testing.T) (py string, devs []string, w world) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 needed for the probe")
	}
	devs = hostDevices(t)
	if len(devs) == 0 {
		t.Skip("no device node off the allowlist that this process may open")
	}
	return py, devs, newWorld(t)
}

// TestJailHostDevices: of the host's device nodes a command can open only
// the allowlist (null, zero, full, random, urandom, tty, ptmx and its own
// pseudo terminals): every other node of /dev this process could open
// (disks, loop devices, compressed swap, cameras, microphones, input
// devices, the hardware RNG, GPUs, KVM, FUSE, USB buses…), and every link
// to one, fails to open for reading and for writing, in the jail (a /dev of
// its own) and without namespaces (Landlock grants only the allowlist in
// /dev). The allowlist works.
func TestJailHostDevices(t *testing.T) {
	py, devs, w := deviceWorld(t)
	list := filepath.Join(w.root, "devices.txt")
	writeFile(t, list, strings.Join(devs, "\n")+"\n")
	script := py + " -c '" + deviceProbe + "' " + list + `
echo x > /dev/null && echo "ok null"
echo x > /dev/zero && head -c 4 /dev/zero | wc -c | grep -q 4 && echo "ok zero"
echo x 2>/dev/null > /dev/full || echo "ok full"
[ "$(head -c 16 /dev/urandom | wc -c)" = 16 ] && echo "ok urandom"
[ "$(head -c 1 /dev/random | wc -c)" = 1 ] && echo "ok random"
echo x > /dev/fd/1 | cat >/dev/null && echo "ok fd"
echo x > /dev/stdout | cat >/dev/null && echo "ok stdout"
true 2>/dev/stderr && echo "ok stderr"
cat /dev/stdin </dev/null && echo "ok stdin"
echo x > /dev/shm/ama-dev && rm /dev/shm/ama-dev && echo "ok shm"
echo "ls: $(ls -A /dev | tr '\n' ' ')"
` + py + ` -c "
import os
m, s = os.openpty()
os.write(s, b'pty')
print('ok', os.read(m, 3).decode())
" 2>&1
`
	if bash, err := exec.LookPath("bash"); err == nil {
		script += bash + ` -c 'cat <(echo "ok procsubst")'` + "\n"
	}
	modes(t, w, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		out, _ := w.sh(t, rt.For(w.project, "", false), script)
		if !strings.Contains(out, "probed "+strconv.Itoa(len(devs))+"\n") {
			t.Fatalf("the probe did not run over the %d devices:\n%s", len(devs), out)
		}
		if n := strings.Count(out, "OPENED "); n > 0 {
			t.Errorf("%d opens of %d host devices off the allowlist succeeded:\n%s", n, len(devs), out)
		}
		// The jail's own layer, apart from Landlock's: its /dev holds
		// nothing else.
		if ls := "ls: fd full null ptmx pts random shm stderr stdin stdout tty urandom zero \n"; jail && !strings.Contains(out, ls) {
			t.Errorf("the jail's /dev is not its own, want %q:\n%s", ls, out)
		}
		if !strings.Contains(out, "ls: ") || strings.Contains(out, "ls: \n") {
			t.Errorf("/dev cannot be listed:\n%s", out)
		}
		want := []string{"ok null", "ok zero", "ok full", "ok urandom", "ok random", "ok fd", "ok stdout", "ok stderr",
			"ok stdin", "ok shm", "ok pty"}
		if strings.Contains(script, "procsubst") {
			want = append(want, "ok procsubst")
		}
		for _, ok := range want {
			if !strings.Contains(out, ok+"\n") {
				t.Errorf("%q missing: an allowed device does not work:\n%s", ok, out)
			}
		}
	})
}

// escapeProbe tries to reach the device node $1 around the sandbox's /dev:
// through /proc/self/root and /proc/1/root, through a link and a hard link
// of its own (in its temp dir, in /dev/shm), by making the node (mknod), and in a user and mount
// namespace of its own (where it holds every capability): unmounting /dev,
// mounting a devtmpfs or a tmpfs over it, and through a recursive clone of
// the mount tree with nodev cleared. It prints "OPENED <how>" for each
// open that succeeded and "escapes done" at the end.
const escapeProbe = `import ctypes, os, struct, sys
dev = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def tryopen(how, p):
    for fl in (os.O_RDONLY, os.O_WRONLY):
        try:
            os.close(os.open(p, fl | os.O_NONBLOCK | os.O_NOCTTY))
            print("OPENED", how, p)
            return
        except OSError:
            pass
tryopen("proc-self-root", "/proc/self/root" + dev)
tryopen("proc-1-root", "/proc/1/root" + dev)
tmp = os.environ.get("TMPDIR", "/tmp")
for p in (tmp + "/ama-link", tmp + "/ama-hard", tmp + "/ama-node", "/dev/shm/ama-hard"):
    try:
        os.unlink(p)  # left by the other mode (the session temp dir is kept)
    except OSError:
        pass
try:
    os.symlink(dev, tmp + "/ama-link")
    tryopen("link", tmp + "/ama-link")
except OSError:
    pass
for d in (tmp, "/dev/shm"):
    try:
        os.link(dev, d + "/ama-hard")
        tryopen("hard-link", d + "/ama-hard")
    except OSError:
        pass
try:
    os.mknod(tmp + "/ama-node", 0o600 | 0o020000, os.makedev(1, 11))
    tryopen("mknod", tmp + "/ama-node")
except OSError:
    pass
if libc.unshare(0x10000000 | 0x00020000) == 0:  # CLONE_NEWUSER|CLONE_NEWNS
    for flags in (0, 2):
        libc.umount2(b"/dev", flags)
    tryopen("umount", dev)
    for fs in (b"devtmpfs", b"tmpfs"):
        libc.mount(b"none", b"/dev", fs, 0, None)
    tryopen("mount", dev)
    fd = libc.syscall(428, -100, b"/", 1 | 0x8000)  # open_tree(OPEN_TREE_CLONE|AT_RECURSIVE)
    if fd >= 0:
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", 0, 0x4, 0, 0))  # clear MOUNT_ATTR_NODEV
        libc.syscall(442, fd, b"", 0x1000 | 0x8000, attr, 32)
        libc.umount2(("/proc/self/fd/%d/dev" % fd).encode(), 2)
        tryopen("clone", "/proc/self/fd/%d%s" % (fd, dev))
print("escapes done")
`

// TestJailDeviceEscapes: a device node off the allowlist stays out of reach
// by every way around /dev a command has (escapeProbe), in both modes. In
// the jail the mounts copied into a namespace of the command's own are
// locked (unmounting /dev fails) and Landlock refuses every mount change;
// without namespaces Landlock's rules hold for every path to the node.
func TestJailDeviceEscapes(t *testing.T) {
	py, devs, w := deviceWorld(t)
	modes(t, w, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		out, _ := w.sh(t, rt.For(w.project, "", false), py+" -c '"+escapeProbe+"' "+devs[0])
		if !strings.Contains(out, "escapes done") {
			t.Fatalf("the probe did not run:\n%s", out)
		}
		if strings.Contains(out, "OPENED") {
			t.Errorf("%s was reached:\n%s", devs[0], out)
		}
	})
}

//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
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
// pre-started launcher built its jail (a USB serial line plugged in) is
// covered for the next command too.
func TestLauncherLaterTerminal(t *testing.T) {
	if os.Geteuid() != 0 || !exists("/dev/tty1") {
		t.Skip("needs root to make a node in /dev, and VT 1")
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
	out, _ := w.zsh(t, c, terminalProbe+"probe "+node+"\n")
	if strings.Contains(out, "CTTY") || strings.Contains(out, " TTY") {
		t.Errorf("a terminal made after the launcher started was reached:\n%s", out)
	}
	if !strings.Contains(out, "opened") && !strings.Contains(out, "closed") {
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

//go:build linux

package sandbox_test

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
)

// zsh runs script through the policy's pre-started launcher (Command.Start)
// and returns the combined output and the exit code.
func (w world) zsh(t *testing.T, c *sandbox.Command, script string) (string, int) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	env := append(os.Environ(), "HOME="+w.home, "TMPDIR="+w.tmp)
	p, err := c.Start(sh, []string{"sh", "-c", script}, env, w.project, null, wr, wr)
	wr.Close()
	if err != nil {
		r.Close()
		t.Fatalf("start: %v", err)
	}
	var out bytes.Buffer
	_, _ = io.Copy(&out, r)
	r.Close()
	code, err := p.Wait()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return out.String(), code
}

func zygoteRuntime(t *testing.T, w world) *sandbox.Runtime {
	t.Helper()
	rt := runtimeFor(t, bashSettings, w)
	if !rt.Status().Namespaces {
		t.Skipf("no user namespaces: %s", rt.Status().Detail)
	}
	t.Cleanup(rt.CloseLaunchers)
	return rt
}

// TestLauncherRunsCommands: commands started by the pre-started launcher
// get their output, exit code and working directory, run in a PID
// namespace of their own (pid 1) leading a process group of their own, and
// what they leave running ends with them (TestLauncherTerminal: without a
// controlling terminal).
func TestLauncherRunsCommands(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	out, code := w.zsh(t, c, "echo hi; pwd; exit 3")
	if code != 3 || out != "hi\n"+w.project+"\n" {
		t.Fatalf("got %d %q", code, out)
	}
	// /proc is the launcher's PID namespace's: the shell reads its own
	// pid and process group there (the builtin read, no child).
	out, code = w.zsh(t, c, `echo $$; read -r pid comm state ppid pgrp rest </proc/self/stat; echo $pid $pgrp; ls /proc | grep -c '^[0-9]'`)
	t.Logf("pid, pid and process group in /proc, processes: %s", out)
	if f := strings.Fields(out); code != 0 || len(f) < 3 || f[0] != "1" || f[1] != f[2] {
		t.Errorf("not its PID namespace's init leading its process group (%d): %s", code, out)
	}
	marker := w.project + "/daemon-ran"
	out, code = w.zsh(t, c, "setsid sh -c 'sleep 1; touch "+marker+"' >/dev/null 2>&1 & echo started")
	if code != 0 {
		t.Fatalf("%d %s", code, out)
	}
	// Had the daemon survived its command, it would touch the marker
	// while the next command runs.
	w.zsh(t, c, "sleep 2")
	if exists(marker) {
		t.Error("a daemon outlived its command")
	}
}

// TestLauncherSignal: Signal reaches the command's group; 128+n is
// reported.
func TestLauncherSignal(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	p, r := startReady(t, c, w.project, "echo ready; sleep 60")
	// Its pid here leads its own process group (the group Signal reaches).
	if pid := p.PID(); pid <= 0 {
		t.Errorf("pid %d", pid)
	} else if pg, err := syscall.Getpgid(pid); err != nil || pg != pid {
		t.Errorf("pid %d: process group %d (%v)", pid, pg, err)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait()
	r.Close()
	if err != nil || code != 128+int(syscall.SIGKILL) {
		t.Errorf("code %d err %v", code, err)
	}
}

// TestLauncherUnreachable: a command cannot reach the launcher that
// started it: its descriptors (the control socket to ama-rpc), memory and
// environment are closed to it (not dumpable), and no signal it sends
// ends it (the next command runs in the same launcher: its start time in
// /proc/1/stat is unchanged).
func TestLauncherUnreachable(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	started := func() string {
		out, code := w.zsh(t, c, "cut -d' ' -f22 /proc/1/stat")
		if code != 0 {
			t.Fatalf("%d %s", code, out)
		}
		return strings.TrimSpace(out)
	}
	before := started()
	out, _ := w.zsh(t, c, `ls /proc/1/fd 2>&1; cat /proc/1/environ 2>&1 | head -c 200; head -c 16 /proc/1/mem 2>&1; `+
		`ls -l /proc/$$/fd 2>&1; for s in TERM INT HUP QUIT USR1 TRAP ILL SEGV BUS ABRT SYS STOP KILL; do kill -$s 1 2>&1; done; echo signalled`)
	t.Logf("%s", out)
	if strings.Contains(out, "socket:") {
		t.Errorf("a socket is reachable: %s", out)
	}
	if strings.Contains(out, "AMA_SANDBOX") || strings.Contains(out, "PATH=") {
		t.Errorf("the launcher's environment is readable: %s", out)
	}
	// The command holds its standard files only (3 is ls's own listing).
	if out, _ := w.zsh(t, c, "ls /proc/self/fd | tr '\\n' ' '"); strings.TrimSpace(out) != "0 1 2 3" {
		t.Errorf("the command inherited descriptors: %s", out)
	}
	if after := started(); after != before {
		t.Errorf("the launcher was replaced (start %s, now %s): a command ended it", before, after)
	}
}

// TestNoStrayDescriptors: a descriptor ama-rpc inherited without
// close-on-exec (a host's pipe) does not reach a sandboxed command, in the
// jail started per call (Wrap) and in the pre-started launcher.
func TestNoStrayDescriptors(t *testing.T) {
	w := newWorld(t)
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer wr.Close()
	// Inheritable, as a host's descriptor would be.
	if err := syscall.Dup3(int(wr.Fd()), 77, 0); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(77)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	for name, run := range map[string]func(*testing.T, *sandbox.Command, string) (string, int){"wrap": w.sh, "launcher": w.zsh} {
		out, _ := run(t, c, "ls /proc/self/fd | tr '\\n' ' '; echo leaked >&77")
		if strings.Contains(out, " 77 ") {
			t.Errorf("%s: the command holds descriptor 77: %s", name, out)
		}
	}
	// The pre-started launcher closed its inherited copy: once this
	// process's copies are closed, the pipe ends.
	wr.Close()
	syscall.Close(77)
	if b, _ := io.ReadAll(r); strings.Contains(string(b), "leaked") {
		t.Error("a command wrote to the inherited descriptor")
	}
}

// shEnv runs script with extra variables in the command's environment
// (not in the script: what ama-rpc itself passes), through the
// pre-started launcher or (Wrap) one per call.
func (w world) shEnv(t *testing.T, c *sandbox.Command, viaLauncher bool, extra []string, script string) (string, int) {
	t.Helper()
	if !viaLauncher {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = w.project
		cmd.Env = append(append(os.Environ(), "HOME="+w.home, "TMPDIR="+w.tmp), extra...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		release, err := c.Wrap(cmd)
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Start()
		release()
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		return out.String(), cmd.ProcessState.ExitCode()
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	env := append(append(os.Environ(), "HOME="+w.home, "TMPDIR="+w.tmp), extra...)
	p, err := c.Start("/bin/sh", []string{"sh", "-c", script}, env, w.project, null, wr, wr)
	wr.Close()
	if err != nil {
		r.Close()
		t.Fatalf("start: %v", err)
	}
	var out bytes.Buffer
	_, _ = io.Copy(&out, r)
	r.Close()
	code, err := p.Wait()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return out.String(), code
}

// hiddenListener is a real listener at dir/name that the kernel's socket
// table does not list under that name: it is bound at another name and
// renamed (as a socket bound in another network namespace is not listed
// in this one either), so only an environment naming it finds it.
func hiddenListener(t *testing.T, dir, name string) (*net.UnixListener, string) {
	t.Helper()
	bound := filepath.Join(dir, name+".bound")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: bound, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	t.Cleanup(func() { ln.Close() })
	sock := filepath.Join(dir, name)
	if err := os.Rename(bound, sock); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile("/proc/net/unix"); strings.Contains(string(b), " "+sock+"\n") {
		t.Fatalf("%s is in the socket table", sock)
	}
	// The control: without the sandbox the connection is made and seen.
	if b, err := exec.Command("sh", "-c", connectScript(sock)).CombinedOutput(); err != nil || !strings.Contains(string(b), "connected") || !accepted(t, ln) {
		t.Fatalf("control connection failed: %v %s", err, b)
	}
	return ln, sock
}

// TestLauncherSocketsFromCommandEnv: a socket named only in a command's
// environment (absent from the kernel's socket table and from the
// launcher's own environment) is covered in the pre-started launcher's
// jail, whichever variable names it, through a link to it, in a writable
// tree, and when a launcher already started for an environment without it
// would otherwise be reused. Checked by side effect: the listener's
// backlog stays empty.
func TestLauncherSocketsFromCommandEnv(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl needed to connect")
	}
	w := newWorld(t)
	if strings.HasPrefix(w.root, os.TempDir()) {
		t.Skip("no directory outside the private /tmp to put the socket in")
	}
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	dir := filepath.Join(w.root, "agent")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, sock := hiddenListener(t, dir, "agent.sock")
	link := filepath.Join(dir, "agent.link")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	projDir := filepath.Join(w.project, "run")
	if err := os.Mkdir(projDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pln, psock := hiddenListener(t, projDir, "daemon.sock")

	// A launcher started (and reused) for an environment naming none.
	if out, code := w.shEnv(t, c, true, nil, "true"); code != 0 {
		t.Fatalf("%d %s", code, out)
	}
	for _, tc := range []struct {
		name string
		env  string
		path string
		ln   *net.UnixListener
	}{
		{"SSH_AUTH_SOCK", "SSH_AUTH_SOCK=" + sock, sock, ln},
		{"DBUS unix:path", "DBUS_SESSION_BUS_ADDRESS=unix:path=" + sock + ",guid=0", sock, ln},
		{"any variable", "AMA_TEST_ODD_SOCKET=" + sock, sock, ln},
		{"a link to it", "SSH_AUTH_SOCK=" + link, link, ln},
		{"a link, connecting to the target", "SSH_AUTH_SOCK=" + link, sock, ln},
		{"in the project", "SSH_AUTH_SOCK=" + psock, psock, pln},
	} {
		for _, viaLauncher := range []bool{true, false} {
			out, _ := w.shEnv(t, c, viaLauncher, []string{tc.env}, connectScript(tc.path))
			if accepted(t, tc.ln) || strings.Contains(out, "connected") {
				t.Errorf("%s (launcher %v): the command reached the socket outside: %s", tc.name, viaLauncher, out)
			}
		}
	}
}

// TestJailAbstractSockets: an abstract Unix socket outside (bound in
// ama-rpc's network namespace, which a command shares when the network is
// allowed) cannot be connected to: Landlock's IPC scoping (ABI 6) refuses
// it, per call and in the pre-started launcher. With the network denied
// the empty network namespace has none of them.
func TestJailAbstractSockets(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl needed to connect")
	}
	w := newWorld(t)
	for _, deny := range []bool{false, true} {
		s := bashSettings
		s.NetworkDenied = deny
		rt := runtimeFor(t, s, w)
		if !rt.Status().Namespaces {
			t.Skipf("no user namespaces: %s", rt.Status().Detail)
		}
		if rt.Status().ABI < 6 {
			t.Skipf("Landlock ABI %d has no IPC scoping", rt.Status().ABI)
		}
		t.Cleanup(rt.CloseLaunchers)
		name := "ama-sandbox-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatBool(deny)
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		script := connectScript("@" + name)
		if b, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil || !strings.Contains(string(b), "connected") || !accepted(t, ln) {
			t.Fatalf("control connection failed: %v %s", err, b)
		}
		c := rt.For(w.project, "", false)
		for _, viaLauncher := range []bool{true, false} {
			out, _ := w.shEnv(t, c, viaLauncher, nil, script)
			if accepted(t, ln) || strings.Contains(out, "connected") {
				t.Errorf("network denied %v, launcher %v: the command reached an abstract socket outside: %s", deny, viaLauncher, out)
			}
		}
	}
}

// TestLauncherEndsWithSession: closing a session ends its launcher (and
// what still runs in it); another session's launcher is untouched.
func TestLauncherEndsWithSession(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	a := rt.For(w.project, filepath.Join(w.root, "out", "session-a"), false)
	b := rt.For(w.project, filepath.Join(w.root, "out", "session-b"), false)
	// The command is its PID namespace's init, which only gets the signals
	// it handles; without the trap a SIGTERM that reaches the group
	// before sh has forked sleep is lost and sleep runs its 60 s.
	start := func(c *sandbox.Command) (*sandbox.Proc, *os.File) {
		return startReady(t, c, w.project, "trap 'exit 143' TERM; echo ready; sleep 60 & wait")
	}
	pa, ra := start(a)
	defer ra.Close()
	pb, rb := start(b)
	defer rb.Close()
	rt.CloseSession(w.project, filepath.Join(w.root, "out", "session-a"))
	if code, err := pa.Wait(); err == nil {
		t.Errorf("session a's command outlived its session's launcher (exit %d)", code)
	}
	// Session b's command still runs: it answers a signal with its code.
	if err := pb.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := pb.Wait(); err != nil || code != 128+int(syscall.SIGTERM) {
		t.Errorf("session b: %d %v", code, err)
	}
}

// startPiped starts sh -c script (sh at the path given) through c's
// pre-started launcher in dir with env, stdin from /dev/null and its
// output to a pipe, and returns the pipe's read end.
func startPiped(t *testing.T, c *sandbox.Command, sh, dir string, env []string, script string) (*sandbox.Proc, *os.File) {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Start(sh, []string{"sh", "-c", script}, env, dir, null, wr, wr)
	wr.Close()
	if err != nil {
		r.Close()
		t.Fatalf("start: %v", err)
	}
	return p, r
}

// startReady starts sh -c script through c's pre-started launcher with
// its output to a pipe, and returns once the script wrote "ready\n" (its
// first output), with the pipe's read end for the rest.
func startReady(t *testing.T, c *sandbox.Command, dir, script string) (*sandbox.Proc, *os.File) {
	t.Helper()
	p, r := startPiped(t, c, "/bin/sh", dir, os.Environ(), script)
	buf := make([]byte, 6)
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "ready\n" {
		r.Close()
		t.Fatalf("%q %v", buf, err)
	}
	return p, r
}

// TestLauncherTripStartsOnce: a command that trips its launcher as its
// first act (a guarded path planted at once) is still reported started,
// then ended with 126, and runs once: the launcher announces the start
// before its reaper can report the end and exit. Before, a fast plant
// could end the launcher before "started" went out, and Start ran the
// command again on a new launcher (seen under load: its side effects
// twice, or the start failing with "the launcher was retired").
func TestLauncherTripStartsOnce(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	for i := range 20 {
		out, code := w.zsh(t, c, `echo x >> runs; echo '{}' > .mcp.json`)
		if code != 126 {
			t.Fatalf("round %d: exit %d, want 126 (tripped): %s", i, code, out)
		}
		if n := strings.Count(readOr(filepath.Join(w.project, "runs")), "x"); n != i+1 {
			t.Fatalf("round %d: the command ran %d times in all, want %d", i, n, i+1)
		}
	}
}

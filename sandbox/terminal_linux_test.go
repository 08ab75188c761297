//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/armadra/ama-rpc/sandbox"
)

// ttyHelperEnv makes the test binary the terminal helper (TestMain): ama-rpc
// as a terminal starts it, with a controlling terminal.
const ttyHelperEnv = "AMA_SANDBOX_TTY_HELPER"

// ttyHelperConfig is what the helper is told.
type ttyHelperConfig struct {
	Self, Project, Home, Tmp, Slave string
}

// TestLauncherTerminal: with ama-rpc run from a terminal (the process tree
// started as a terminal starts it: a new session whose controlling
// terminal is a pseudo terminal, in the foreground), a command of the
// pre-started launcher has no controlling terminal (/dev/tty cannot be
// opened, tty_nr 0; so does one of a launcher per call, in the jail and
// Landlock only), cannot write to the terminal, and neither the
// launcher nor a running command is in the terminal's foreground process
// group: a Ctrl-C typed there interrupts ama-rpc only, the command runs on
// and the same launcher serves the next one. A bare command started as
// the bash tool starts it (a process group of its own in ama-rpc's
// session) is the control: it has the terminal, and its write arrives.
// Both launchers: ama-rpc-sandbox and ama-rpc re-executed.
func TestLauncherTerminal(t *testing.T) {
	w := newWorld(t)
	zygoteRuntime(t, w) // skips without namespaces
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	launchers := map[string]string{"self-exec": self}
	if small := selfExe(t); small != self {
		launchers["ama-rpc-sandbox"] = small
	}
	for name, launcher := range launchers {
		t.Run(name, func(t *testing.T) { launcherTerminal(t, w, name, launcher) })
	}
}

func launcherTerminal(t *testing.T, w world, name, launcher string) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Skipf("no pseudo terminals: %v", err)
	}
	defer ptmx.Close()
	slavePath, err := ptsName(ptmx)
	if err != nil {
		t.Skipf("pty: %v", err)
	}
	slave, err := os.OpenFile(slavePath, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	cfg, _ := json.Marshal(ttyHelperConfig{Self: launcher, Project: w.project, Home: w.home, Tmp: w.tmp, Slave: slavePath})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	self, err := os.Executable() // the helper is this test binary
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.CommandContext(ctx, self)
	helper.Env = append(os.Environ(), ttyHelperEnv+"="+string(cfg), "HOME="+w.home, "TMPDIR="+w.tmp)
	helper.Stdin = slave
	helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = helper.Stdout
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	got := map[string]string{}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
		if line == "helper waiting" {
			// Ctrl-C on the terminal: SIGINT to its foreground group.
			if _, err := ptmx.Write([]byte{3}); err != nil {
				t.Error(err)
			}
		}
	}
	if err := helper.Wait(); err != nil {
		t.Errorf("helper: %v", err)
	}
	t.Logf("helper:\n%s", strings.Join(lines, "\n"))
	if v, ok := got["skip"]; ok {
		t.Skip(v)
	}
	if got["helper launcher"] != name {
		t.Fatalf("the helper ran launcher %q, not %q", got["helper launcher"], name)
	}
	// What reached the terminal (its master reads what was written).
	_ = ptmx.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	screen, _ := io.ReadAll(ptmx)
	t.Logf("terminal: %q", screen)
	// The set-up works: ama-rpc has the terminal, a bare command too.
	if got["helper tty"] == "0" || got["helper tty"] == "" || got["helper fg"] != got["helper pgrp"] {
		t.Fatalf("the helper has no controlling terminal in the foreground: %v", got)
	}
	if got["bare tty"] != got["helper tty"] || !strings.Contains(string(screen), "BARE") {
		t.Fatalf("control: a bare command does not have the terminal: %v %q", got, screen)
	}
	for _, who := range []string{"cmd", "wrap", "landlock"} {
		if got[who+" tty"] != "0" {
			t.Errorf("%s: a sandboxed command has a controlling terminal: tty_nr %q", who, got[who+" tty"])
		}
		if got[who+" /dev/tty"] != "refused" {
			t.Errorf("%s: a sandboxed command opened /dev/tty: %q", who, got[who+" /dev/tty"])
		}
	}
	if strings.Contains(string(screen), "SPOOFED") {
		t.Errorf("a sandboxed command wrote to the terminal: %q", screen)
	}
	if got["launcher tty"] != "0" {
		t.Errorf("the launcher has a controlling terminal: tty_nr %s", got["launcher tty"])
	}
	if got["launcher pgrp"] == "" || got["launcher pgrp"] == got["helper fg"] {
		t.Errorf("the launcher is in the terminal's foreground group %s: %v", got["helper fg"], got)
	}
	if got["helper SIGINT"] != "yes" {
		t.Fatalf("the Ctrl-C did not reach ama-rpc's group: %v", got)
	}
	if got["cmd after Ctrl-C"] != "survived go, exit 0" {
		t.Errorf("a running sandboxed command was interrupted by a Ctrl-C meant for ama-rpc: %q", got["cmd after Ctrl-C"])
	}
	if got["launcher before"] == "" || got["launcher after"] != got["launcher before"] || got["next"] != "again, exit 0" {
		t.Errorf("the launcher did not survive the Ctrl-C: %v", got)
	}
}

// ttyHelper is ama-rpc run from a terminal (TestLauncherTerminal): it
// prints key=value lines on its standard output, a pipe to the test.
func ttyHelper() int {
	var cfg ttyHelperConfig
	if err := json.Unmarshal([]byte(os.Getenv(ttyHelperEnv)), &cfg); err != nil {
		fmt.Println("error=" + err.Error())
		return 1
	}
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, syscall.SIGINT)
	fmt.Printf("helper tty=%s\nhelper pgrp=%d\nhelper fg=%d\n", statField("self", 7), syscall.Getpgrp(), foreground())
	// As tools/proc_unix.go starts an unsandboxed command.
	bare := exec.Command("/bin/sh", "-c", "cut -d' ' -f7 /proc/self/stat; echo BARE >/dev/tty")
	bare.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b, _ := bare.Output()
	fmt.Printf("bare tty=%s\n", strings.TrimSpace(string(b)))

	rt := sandbox.New(bashSettings, cfg.Self, sandbox.Dirs{Home: cfg.Home, Temp: cfg.Tmp})
	if !rt.Status().Namespaces {
		fmt.Println("skip=no user namespaces: " + rt.Status().Detail)
		return 0
	}
	defer rt.CloseLaunchers()
	if rt.UsesSmallLauncher() {
		fmt.Println("helper launcher=ama-rpc-sandbox")
	} else {
		fmt.Println("helper launcher=self-exec")
	}
	c := rt.For(cfg.Project, "", false)
	null, err := os.Open(os.DevNull)
	if err != nil {
		fmt.Println("error=" + err.Error())
		return 1
	}
	defer null.Close()
	start := func(script string, stdin *os.File) (*sandbox.Proc, *os.File) {
		r, wr, err := os.Pipe()
		if err != nil {
			fmt.Println("error=" + err.Error())
			os.Exit(1)
		}
		p, err := c.Start("/bin/sh", []string{"sh", "-c", script}, os.Environ(), cfg.Project, stdin, wr, wr)
		wr.Close()
		if err != nil {
			fmt.Println("error=" + err.Error())
			os.Exit(1)
		}
		return p, r
	}
	finish := func(p *sandbox.Proc, r *os.File) string {
		b, _ := io.ReadAll(r)
		r.Close()
		code, err := p.Wait()
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(string(b)) + ", exit " + strconv.Itoa(code)
	}

	probe := func(who string) string {
		return `echo "` + who + ` tty=$(cut -d' ' -f7 /proc/self/stat)"
if (: </dev/tty) 2>/dev/null; then echo "` + who + ` /dev/tty=opened"; else echo "` + who + ` /dev/tty=refused"; fi
(echo SPOOFED >/dev/tty) 2>/dev/null; echo checked`
	}
	p, r := start("(echo SPOOFED >"+cfg.Slave+") 2>/dev/null; "+probe("cmd"), null)
	fmt.Println(finish(p, r))
	// The launcher per call (Wrap), in the jail and Landlock only (whose
	// commands can write to /dev/pts, README: not covered there).
	for who, c := range map[string]*sandbox.Command{"wrap": c,
		"landlock": sandbox.NewWithoutNamespaces(bashSettings, cfg.Self, sandbox.Dirs{Home: cfg.Home, Temp: cfg.Tmp}).For(cfg.Project, "", false)} {
		cmd := exec.Command("/bin/sh", "-c", probe(who))
		cmd.Dir = cfg.Project
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		release, err := c.Wrap(cmd)
		if err != nil {
			fmt.Println("error=" + err.Error())
			return 1
		}
		b, err := cmd.Output()
		release()
		fmt.Printf("%s%v\n", b, err)
	}
	pids := c.LauncherPIDs()
	if len(pids) != 1 {
		fmt.Printf("error=%d launchers\n", len(pids))
		return 1
	}
	l := strconv.Itoa(pids[0])
	fmt.Printf("launcher tty=%s\nlauncher pgrp=%s\nlauncher before=%s:%s\n", statField(l, 7), statField(l, 5), l, statField(l, 22))

	in, feed, err := os.Pipe()
	if err != nil {
		fmt.Println("error=" + err.Error())
		return 1
	}
	p, r = start(`echo ready; read x; echo "survived $x"`, in)
	in.Close()
	ready := make([]byte, 6)
	if _, err := io.ReadFull(r, ready); err != nil || string(ready) != "ready\n" {
		fmt.Printf("error=%q %v\n", ready, err)
		return 1
	}
	fmt.Println("helper waiting")
	select {
	case <-ints:
		fmt.Println("helper SIGINT=yes")
	case <-time.After(30 * time.Second):
		fmt.Println("helper SIGINT=no")
	}
	_, _ = feed.WriteString("go\n")
	feed.Close()
	fmt.Println("cmd after Ctrl-C=" + finish(p, r))
	p, r = start("echo again", null)
	fmt.Println("next=" + finish(p, r))
	fmt.Printf("launcher after=%s:%s\n", l, statField(l, 22))
	return 0
}

// statField is field n (1-based) of /proc/<pid>/stat ("" when unreadable).
func statField(pid string, n int) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if n-3 < 0 || n-3 >= len(f) {
		return ""
	}
	return f[n-3]
}

// foreground is the foreground process group of the terminal on stdin.
func foreground() int {
	var pg int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pg))); e != 0 {
		return -1
	}
	return int(pg)
}

// TestLauncherKillReachesGroup: Signal reaches everything the command
// started in its process group, a background grandchild included; the
// command itself, its PID namespace's init, takes from outside only the
// signals it handles, so the shell lives on to see its child end. SIGKILL
// ends the namespace. A survivor would hold the output pipe open: its end
// (EOF) is the proof.
func TestLauncherKillReachesGroup(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		p, r := startReady(t, c, w.project, `sleep 100 & echo ready; wait $!; echo "sleep ended $?"`)
		if err := p.Signal(sig); err != nil {
			t.Fatal(err)
		}
		_ = r.SetReadDeadline(time.Now().Add(20 * time.Second))
		rest, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("%v: the background sleep outlived the signal (%v): %q", sig, err, rest)
		}
		code, err := p.Wait()
		t.Logf("%v: exit %d, %q", sig, code, rest)
		switch {
		case err != nil:
			t.Errorf("%v: %v", sig, err)
		case sig == syscall.SIGTERM && (code != 0 || !strings.HasSuffix(string(rest), "sleep ended 143\n")):
			t.Errorf("SIGTERM: exit %d, %q (the shell should see its child end)", code, rest)
		case sig == syscall.SIGKILL && code != 128+int(syscall.SIGKILL):
			t.Errorf("SIGKILL: exit %d", code)
		}
	}
}

// TestLauncherSessionUnreachable: sharing ama-rpc's session (and so its
// scheduling autogroup) gives a command no hold on it: it cannot lower the
// group's priority (/proc/self/autogroup, the group's nice, is read-only
// in the jail), and ama-rpc's process group and pid, and those of another
// process group of the session, are out of its PID namespace: a kill
// finds nothing, and the other group's process lives on.
func TestLauncherSessionUnreachable(t *testing.T) {
	w := newWorld(t)
	rt := zygoteRuntime(t, w)
	c := rt.For(w.project, "", false)
	victim := exec.Command("sleep", "1000")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as a bare command of ama-rpc's
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = victim.Process.Kill()
		_ = victim.Wait()
	}()
	before, err := os.ReadFile("/proc/self/autogroup")
	if err != nil {
		t.Skipf("no autogroups: %v", err)
	}
	v := strconv.Itoa(victim.Process.Pid)
	out, code := w.zsh(t, c, `(echo 19 > /proc/self/autogroup) 2>/dev/null && echo RENICED
kill -0 -`+strconv.Itoa(syscall.Getpgrp())+` 2>/dev/null && echo SIGNALLED-GROUP
kill -0 `+strconv.Itoa(os.Getpid())+` 2>/dev/null && echo SIGNALLED-PID
kill -KILL -`+v+` `+v+` 2>/dev/null; echo done`)
	after, _ := os.ReadFile("/proc/self/autogroup")
	t.Logf("exit %d: %s; autogroup %q → %q", code, out, before, after)
	if strings.Contains(out, "RENICED") || string(after) != string(before) {
		t.Errorf("a command changed ama-rpc's autogroup: %q → %q (%s)", before, after, out)
	}
	if strings.Contains(out, "SIGNALLED") {
		t.Errorf("a command reached ama-rpc's process group or pid: %s", out)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a command killed a process of another group of ama-rpc's session: %v", err)
	}
}

//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/armadra/ama-rpc/sandbox"
)

// BenchmarkStartTrue measures the start-up cost the sandbox adds to one
// bash call: `true` started bare, through the Landlock launcher without
// namespaces, in the jail (user, mount, PID, IPC and network namespaces, the
// default where they work) through the session's pre-started launcher
// (jail-launcher, what bash calls use), through a launcher per call (the
// small ama-rpc-sandbox, when it lies next to the launcher binary, and by
// re-executing ama-rpc), and, as the kernel's floor of a per-call design,
// `true` started directly in fresh namespaces (namespaces-only).
//
// Every row reports the same statistics over its calls: the median wall
// time (ms/median) and the median CPU time of one call, user+system
// (cpu-ms/median), of which the caller's share (self-cpu-ms/median: this
// process, ama-rpc's side of the call) and for jail-launcher the
// launcher's (launcher-cpu-ms/median). A call's CPU is everything it
// costs: the caller's (its getrusage delta), the started process's with
// what it waited for (a per-call launcher and the command), and for
// jail-launcher the pre-started launcher's own CPU during the call (its
// process CPU clock, read before and after) plus the command's, which the
// launcher reaps and reports. The launcher's start is paid once per
// session and policy and is not in the median: first-call-ms is the wall
// time of the first call, which starts it.
//
// With AMA_BENCH_LOAD=N the loaded-N row starts N busy-looping processes
// (killed at its end) and runs bare and jail-launcher paired round by
// round, reporting each one's medians and the medians of the per-round
// ratios (wall-x, cpu-x): the "under 2x an unsandboxed call on a loaded
// machine" target, measured.
//
// `make bench` runs it 50 times each with the built binary as launcher
// (AMA_SANDBOX_LAUNCHER), otherwise the test binary launches.
func BenchmarkStartTrue(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	self := os.Getenv("AMA_SANDBOX_LAUNCHER")
	if self == "" {
		self, _ = os.Executable()
	}
	root := b.TempDir()
	project := filepath.Join(root, "proj")
	for _, d := range []string{filepath.Join(project, ".git", "hooks"), filepath.Join(root, "home", ".ssh"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	s := sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}
	dirs := sandbox.Dirs{Home: filepath.Join(root, "home"), Temp: filepath.Join(root, "tmp")}
	withNS := sandbox.New(s, self, dirs)
	if !withNS.Active() {
		b.Skipf("no sandbox: %s", withNS.Status().Detail)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	// As the bash tool starts an unsandboxed command (tools/proc_unix.go):
	// a process group of its own, in ama-rpc's session.
	pgrp := &syscall.SysProcAttr{Setpgid: true}
	bare := func() call { return startCmd(b, truePath, project, nil, pgrp) }
	variants := []struct {
		name string
		run  func() call
	}{{"bare", bare}}
	if withNS.Status().Namespaces {
		// One runtime, so one launcher, for the whole run (the loaded
		// row's too), started by a first call outside the measured ones.
		lc := withNS.For(project, "", false)
		defer lc.CloseLaunchers()
		var first time.Duration
		launched := func() call {
			c := viaLauncher(b, lc, truePath, project, null)
			if first == 0 {
				first = c.wall
				c = viaLauncher(b, lc, truePath, project, null)
			}
			return c
		}
		b.Run("jail-launcher", func(b *testing.B) {
			measure(b, launched)
			b.ReportMetric(float64(first.Microseconds())/1000, "first-call-ms")
		})
		if n, _ := strconv.Atoi(os.Getenv("AMA_BENCH_LOAD")); n > 0 {
			b.Run(fmt.Sprintf("loaded-%d", n), func(b *testing.B) { loaded(b, n, bare, launched) })
		}
	}
	ll := sandbox.NewWithoutNamespaces(s, self, dirs).For(project, "", false)
	variants = append(variants, struct {
		name string
		run  func() call
	}{"landlock", func() call { return startCmd(b, truePath, project, ll, nil) }})
	if withNS.Status().Namespaces {
		if withNS.UsesSmallLauncher() {
			jail := withNS.For(project, "", false)
			variants = append(variants, struct {
				name string
				run  func() call
			}{"jail", func() call { return startCmd(b, truePath, project, jail, nil) }})
		}
		selfExec := withNS.WithoutSmallLauncher().For(project, "", false)
		// The kernel's share alone: `true` started directly in fresh
		// user, mount, PID, IPC and network namespaces (no launcher, no
		// mounts, no Landlock): the floor of any design that creates the
		// namespaces per call.
		ns := &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
		}
		variants = append(variants, struct {
			name string
			run  func() call
		}{"jail-self-exec", func() call { return startCmd(b, truePath, project, selfExec, nil) }},
			struct {
				name string
				run  func() call
			}{"namespaces-only", func() call { return startCmd(b, truePath, project, nil, ns) }})
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) { measure(b, v.run) })
	}
}

// call is what one start of `true` cost: wall time, and CPU time in all
// (self included) and on the caller's side.
type call struct{ wall, cpu, self, launcher time.Duration }

// measure runs c b.N times and reports the medians.
func measure(b *testing.B, c func() call) {
	var calls []call
	for b.Loop() {
		calls = append(calls, c())
	}
	b.ReportMetric(ms(medianOf(calls, func(c call) time.Duration { return c.wall })), "ms/median")
	b.ReportMetric(ms(medianOf(calls, func(c call) time.Duration { return c.cpu })), "cpu-ms/median")
	b.ReportMetric(ms(medianOf(calls, func(c call) time.Duration { return c.self })), "self-cpu-ms/median")
	if l := medianOf(calls, func(c call) time.Duration { return c.launcher }); l > 0 {
		b.ReportMetric(ms(l), "launcher-cpu-ms/median")
	}
}

// loaded runs bare and jail-launcher paired, each round under the same
// load: n processes spinning on the cores for the whole row. The order
// alternates by round, so neither always runs right after the other.
func loaded(b *testing.B, n int, bare, launched func() call) {
	var burners []*exec.Cmd
	defer func() {
		for _, c := range burners {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for range n {
		c := exec.Command("/bin/sh", "-c", "while :; do :; done")
		// Each in a session of its own, as load from other programs is:
		// with the scheduler's autogroups (a group per session) burners
		// in this process's session would only slow down this session.
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		burners = append(burners, c)
	}
	var bs, ls []call
	var wx, cx []time.Duration // ratios in thousandths
	round := 0
	for b.Loop() {
		var x, y call
		if round%2 == 0 {
			x, y = bare(), launched()
		} else {
			y, x = launched(), bare()
		}
		round++
		bs, ls = append(bs, x), append(ls, y)
		wx = append(wx, time.Duration(1000*float64(y.wall)/float64(max(x.wall, 1))))
		cx = append(cx, time.Duration(1000*float64(y.cpu)/float64(max(x.cpu, 1))))
	}
	wall := func(c call) time.Duration { return c.wall }
	cpu := func(c call) time.Duration { return c.cpu }
	b.ReportMetric(ms(medianOf(bs, wall)), "bare-ms/median")
	b.ReportMetric(ms(medianOf(ls, wall)), "launcher-ms/median")
	b.ReportMetric(ms(medianOf(bs, cpu)), "bare-cpu-ms/median")
	b.ReportMetric(ms(medianOf(ls, cpu)), "launcher-cpu-ms/median")
	slices.Sort(wx)
	slices.Sort(cx)
	b.ReportMetric(float64(wx[len(wx)/2])/1000, "wall-x/median")
	b.ReportMetric(float64(cx[len(cx)/2])/1000, "cpu-x/median")
}

// startCmd starts `true` (wrapped by sb when not nil, in the namespaces
// of attr when not nil) and waits for it.
func startCmd(b *testing.B, truePath, dir string, sb *sandbox.Command, attr *syscall.SysProcAttr) call {
	self0 := selfCPU()
	start := time.Now()
	cmd := exec.Command(truePath)
	cmd.Dir = dir
	cmd.SysProcAttr = attr
	release := func() {}
	if sb != nil {
		var err error
		if release, err = sb.Wrap(cmd); err != nil {
			b.Fatal(err)
		}
	}
	err := cmd.Start()
	release()
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	self := selfCPU() - self0
	return call{wall: wall, self: self, cpu: self + cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

// viaLauncher is `true` through the session's pre-started launcher
// (Command.Start), started by the first call.
func viaLauncher(b *testing.B, c *sandbox.Command, truePath, dir string, null *os.File) call {
	pids := c.LauncherPIDs()
	l0 := processCPU(pids)
	self0 := selfCPU()
	start := time.Now()
	p, err := c.Start(truePath, []string{"true"}, os.Environ(), dir, null, null, null)
	if err != nil {
		b.Fatal(err)
	}
	if code, err := p.Wait(); err != nil || code != 0 {
		b.Fatalf("exit %d: %v", code, err)
	}
	wall := time.Since(start)
	if p.CPU() <= 0 {
		b.Fatal("the launcher reported no CPU time for the command")
	}
	self := selfCPU() - self0
	if len(pids) == 0 {
		pids = c.LauncherPIDs() // started by this call: all of its CPU is the call's
	}
	l := processCPU(pids) - l0
	return call{wall: wall, self: self, launcher: l, cpu: self + l + p.CPU()}
}

// selfCPU is this process's user+system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childrenCPU is the user+system time of this process's reaped children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the CPU time of the processes pids so far, from their
// process CPU clocks (clock_getcpuclockid: CPUCLOCK_SCHED of the whole
// thread group, nanoseconds; readable for any process).
func processCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		var ts unix.Timespec
		if unix.ClockGettime(int32(^pid)<<3|2, &ts) == nil {
			sum += time.Duration(ts.Nano())
		}
	}
	return sum
}

func medianOf(calls []call, f func(call) time.Duration) time.Duration {
	d := make([]time.Duration, len(calls))
	for i, c := range calls {
		d[i] = f(c)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkWrap is the parent's share: expanding the policy into Landlock
// rules and building the ruleset.
func BenchmarkWrap(b *testing.B) {
	self, _ := os.Executable()
	root := b.TempDir()
	project := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(project, ".git", "hooks"), 0o755); err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	rt := sandbox.New(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self, sandbox.Dirs{Home: home, Temp: os.TempDir()})
	if !rt.Active() {
		b.Skip(rt.Status().Detail)
	}
	c := rt.For(project, "", false)
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		release, err := c.Wrap(cmd)
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
}

// BenchmarkSelfTest is the canary self-test (run afresh each time, as on
// the first start of a boot): its wall time and CPU time (this process's
// and its launchers' with their probes, reaped before it returns), medians.
func BenchmarkSelfTest(b *testing.B) {
	self := os.Getenv("AMA_SANDBOX_LAUNCHER")
	if self == "" {
		self, _ = os.Executable()
	}
	root := b.TempDir()
	rt := sandbox.New(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self,
		sandbox.Dirs{Home: filepath.Join(root, "home"), Temp: os.TempDir(), Data: filepath.Join(root, "data")})
	if !rt.Active() {
		b.Skip(rt.Status().Detail)
	}
	measure(b, func() call {
		self0, children0 := selfCPU(), childrenCPU()
		start := time.Now()
		if v := rt.RunCanaries(); !rt.Status().Namespaces && len(v.Failed) > 1 || rt.Status().Namespaces && !v.Verified {
			b.Fatalf("self-test: %+v", v)
		}
		wall := time.Since(start)
		self := selfCPU() - self0
		return call{wall: wall, self: self, cpu: self + childrenCPU() - children0}
	})
}

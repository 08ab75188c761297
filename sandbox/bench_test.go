//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/sandbox"
)

// BenchmarkStartTrue measures the start-up cost the sandbox adds to one
// bash call: `true` started bare, through the Landlock launcher without
// namespaces, and in the jail (user, mount, PID and network namespaces, the
// default where they work) through the small launcher (ama-rpc-sandbox,
// when it lies next to the launcher binary) and by re-executing ama-rpc,
// and, as the kernel's floor, `true` started directly in fresh namespaces
// (namespaces-only). It reports the median wall time per start (ms/median);
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
	variants := []struct {
		name string
		sb   *sandbox.Command
	}{
		{"bare", nil},
		{"landlock", sandbox.NewWithoutNamespaces(s, self, dirs).For(project, "", false)},
	}
	if withNS.Status().Namespaces {
		if withNS.UsesSmallLauncher() {
			variants = append(variants, struct {
				name string
				sb   *sandbox.Command
			}{"jail", withNS.For(project, "", false)})
		}
		variants = append(variants, struct {
			name string
			sb   *sandbox.Command
		}{"jail-self-exec", withNS.WithoutSmallLauncher().For(project, "", false)})
	}
	// The kernel's share alone: `true` started directly in fresh user,
	// mount, PID and network namespaces (no launcher, no mounts, no
	// Landlock): the floor of any design that creates the namespaces per
	// call.
	if withNS.Status().Namespaces {
		variants = append(variants, struct {
			name string
			sb   *sandbox.Command
		}{"namespaces-only", nil})
	}
	if withNS.Status().Namespaces {
		b.Run("jail-launcher", func(b *testing.B) {
			benchLauncher(b, withNS.For(project, "", false), truePath, project)
		})
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			cpu := make([]time.Duration, 0, b.N)
			for b.Loop() {
				cmd := exec.Command(truePath)
				cmd.Dir = project
				if v.name == "namespaces-only" {
					cmd.SysProcAttr = &syscall.SysProcAttr{
						Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
						UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
						GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
					}
				}
				start := time.Now()
				release := func() {}
				if v.sb != nil {
					var err error
					if release, err = v.sb.Wrap(cmd); err != nil {
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
				times = append(times, time.Since(start))
				cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
			slices.Sort(times)
			slices.Sort(cpu)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/median")
			// The CPU time of the started process and what it waited for
			// (the launcher and the command): steadier than wall time on a
			// loaded machine.
			b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-ms/median")
		})
	}
}

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
// the first start of a boot): ms/median is its wall time.
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
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if v := rt.RunCanaries(); !rt.Status().Namespaces && len(v.Failed) > 1 || rt.Status().Namespaces && !v.Verified {
			b.Fatalf("self-test: %+v", v)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/median")
}

// benchLauncher is `true` through the session's pre-started launcher
// (Command.Start): the first start builds the jail, the others fork in it.
// The CPU figure is a mean (the launcher and its commands are this
// process's children only once the launcher ended), the launcher's start
// included.
func benchLauncher(b *testing.B, c *sandbox.Command, truePath, dir string) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		p, err := c.Start(truePath, []string{"true"}, os.Environ(), dir, null, null, null)
		if err != nil {
			b.Fatal(err)
		}
		if code, err := p.Wait(); err != nil || code != 0 {
			b.Fatalf("exit %d: %v", code, err)
		}
		times = append(times, time.Since(start))
	}
	c.CloseLaunchers()
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(len(times))
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/median")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/mean")
}

//go:build linux

package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
	"github.com/armadra/ama-rpc/tools"
)

var sandboxRegistry = tools.Default(tools.WithBashSandbox(true))

func sandboxEnv(t *testing.T) (*tools.Env, string) {
	t.Helper()
	env := newEnv(t)
	root := filepath.Dir(env.Cwd)
	tmp := filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	rt := sandbox.New(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self,
		sandbox.Dirs{Home: filepath.Join(root, "home"), Temp: tmp})
	if !rt.Active() {
		t.Skipf("needs the Landlock sandbox: %s", rt.Status().Detail)
	}
	t.Cleanup(rt.CloseLaunchers)
	env.Sandbox = rt.For(env.Cwd, env.OutputDir, false)
	return env, root
}

// refusal is how the sandbox refuses a write outside: the jail's read-only
// mounts (EROFS), or Landlock alone (EACCES).
func refusal(env *tools.Env) string {
	if env.Sandbox.(*sandbox.Command).Policy().Namespaces {
		return "Read-only file system"
	}
	return "Permission denied"
}

func runSandboxed(t *testing.T, env *tools.Env, args any) *tools.Result {
	t.Helper()
	return sandboxRegistry.Run(context.Background(), "bash", &tools.Call{ID: "c1", Args: rawArgs(t, args), Env: env})
}

func TestBashSandboxForeground(t *testing.T) {
	env, root := sandboxEnv(t)
	r := runSandboxed(t, env, map[string]any{"command": "echo x > ../outside.txt"})
	got := mustErr(t, r, refusal(env))
	if !strings.Contains(got, "\n[sandbox: ") || !r.Details.(tools.BashDetails).Sandboxed {
		t.Errorf("no hint or not sandboxed: %q %+v", got, r.Details)
	}
	if _, err := os.Stat(filepath.Join(root, "outside.txt")); err == nil {
		t.Error("outside.txt written")
	}
	// A failure that is not a denial gets no hint.
	r = runSandboxed(t, env, map[string]any{"command": "echo fine > in.txt; exit 3"})
	if got := text(r); !r.IsError || strings.Contains(got, "[sandbox:") || readFile(t, filepath.Join(env.Cwd, "in.txt")) != "fine\n" {
		t.Errorf("%q", got)
	}
	// sandbox:false runs bare (the permission pipeline asked before).
	r = runSandboxed(t, env, map[string]any{"command": "echo x > ../outside.txt", "sandbox": false})
	mustOK(t, r)
	if r.Details.(tools.BashDetails).Sandboxed {
		t.Error("sandbox:false reported sandboxed")
	}
	if readFile(t, filepath.Join(root, "outside.txt")) != "x\n" {
		t.Error("sandbox:false did not run outside")
	}
}

func TestBashSandboxBackgroundJob(t *testing.T) {
	env, root := sandboxEnv(t)
	env.Jobs = tools.NewJobs(env.OutputDir, nil)
	defer env.Jobs.StopAll()
	fifo := filepath.Join(env.Cwd, "ready.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r := runSandboxed(t, env, map[string]any{"background": true,
		"command": "echo ns-pid=$$; touch job-in.txt; echo x > ../job-out.txt; echo logged >&2; read x < ready.fifo; sleep 30"})
	mustOK(t, r)
	d := r.Details.(tools.BashDetails)
	if !d.Sandboxed || d.Job == nil {
		t.Fatalf("%+v", d)
	}
	// The launcher exec'd in place: the job's pid leads its process group.
	if pg, err := syscall.Getpgid(d.Job.PID); err != nil || pg != d.Job.PID {
		t.Errorf("pgid %d (%v), pid %d", pg, err, d.Job.PID)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once the job reads
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got := mustOK(t, runSandboxed(t, env, map[string]any{"job": d.Job.ID, "action": "output"}))
	contains(t, got, "is running", refusal(env), "logged")
	if env.Sandbox.(*sandbox.Command).Policy().Namespaces {
		// Through the pre-started launcher: the job is the init of a
		// PID namespace of its own.
		contains(t, got, "ns-pid=1\n")
	}
	got = mustOK(t, runSandboxed(t, env, map[string]any{"job": d.Job.ID, "action": "stop"}))
	contains(t, got, "was stopped")
	if _, err := os.Stat(filepath.Join(env.Cwd, "job-in.txt")); err != nil {
		t.Error("job-in.txt missing")
	}
	if _, err := os.Stat(filepath.Join(root, "job-out.txt")); err == nil {
		t.Error("job wrote outside the project")
	}
}

func TestBashSandboxJobHint(t *testing.T) {
	env, _ := sandboxEnv(t)
	env.Jobs = tools.NewJobs(env.OutputDir, nil)
	defer env.Jobs.StopAll()
	r := runSandboxed(t, env, map[string]any{"background": true, "command": "echo x > ../job-out.txt"})
	d := r.Details.(tools.BashDetails)
	if d.Job == nil || !d.Job.Sandboxed {
		t.Fatalf("%+v", d)
	}
	got := text(runSandboxed(t, env, map[string]any{"job": d.Job.ID, "action": "wait"}))
	contains(t, got, "exited with code 1", refusal(env), "\n[sandbox: ")
}

func TestBashSandboxDecl(t *testing.T) {
	plain, _ := registry.Get("bash")
	sb, _ := sandboxRegistry.Get("bash")
	pd, sd := plain.Decl(), sb.Decl()
	if strings.Contains(string(pd.Parameters), "sandbox") || strings.Contains(pd.Description, "sandbox") {
		t.Error("the plain declaration mentions the sandbox")
	}
	if !strings.Contains(string(sd.Parameters), `"sandbox":{"type":"boolean"`) || !strings.Contains(sd.Description, "sandbox:false") ||
		!strings.HasPrefix(sd.Description, pd.Description) {
		t.Errorf("sandbox declaration: %s\n%s", sd.Parameters, sd.Description)
	}
	// Without the sandbox the parameter is rejected by the schema.
	mustErr(t, run(t, newEnv(t), "bash", map[string]any{"command": "true", "sandbox": false}), "sandbox")
}

// launcherOf returns the sandbox launcher that pid runs under: the
// nearest ancestor started as the launcher (ama-rpc-sandbox or
// `… __sandbox-exec …`).
func launcherOf(t *testing.T, pid int) int {
	t.Helper()
	for p := pid; p > 1; {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if p != pid {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			if strings.Contains(string(cmdline), sandbox.LauncherArg) || strings.Contains(string(cmdline), sandbox.LauncherName) {
				return p
			}
		}
		p, _ = strconv.Atoi(f[1]) // ppid
	}
	t.Fatalf("no launcher above %d", pid)
	return 0
}

// pidOf finds the process whose command line contains marker.
func pidOf(t *testing.T, marker string) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); strings.Contains(string(b), marker) {
			return pid
		}
	}
	t.Fatalf("no process with %q", marker)
	return 0
}

// TestBashSandboxLauncherDies: when the sandbox's launcher is killed
// while a command runs (foreground or background job), the command ends
// with it and the model is told so instead of getting a bare failure.
func TestBashSandboxLauncherDies(t *testing.T) {
	env, _ := sandboxEnv(t)
	if !env.Sandbox.(*sandbox.Command).Policy().Namespaces {
		t.Skip("no pre-started launcher without namespaces")
	}
	marker := "61.4321" + strconv.Itoa(os.Getpid())
	ready := make(chan struct{})
	var once sync.Once
	call := &tools.Call{ID: "c1", Args: rawArgs(t, map[string]any{"command": "echo ready; exec sleep " + marker}), Env: env,
		Update: func(s string) {
			if strings.Contains(s, "ready") {
				once.Do(func() { close(ready) })
			}
		}}
	res := make(chan *tools.Result, 1)
	go func() { res <- sandboxRegistry.Run(context.Background(), "bash", call) }()
	<-ready
	if err := syscall.Kill(launcherOf(t, pidOf(t, marker)), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-res
	got := text(r)
	if !r.IsError || !strings.Contains(got, "launcher ended while the command ran") {
		t.Errorf("foreground: %q", got)
	}

	env.Jobs = tools.NewJobs(env.OutputDir, nil)
	defer env.Jobs.StopAll()
	fifo := filepath.Join(env.Cwd, "ready.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r = runSandboxed(t, env, map[string]any{"background": true, "command": "read x < ready.fifo; sleep 60"})
	d := r.Details.(tools.BashDetails)
	if d.Job == nil || d.Job.PID <= 0 {
		t.Fatalf("%+v", d)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once the job reads
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := syscall.Kill(launcherOf(t, d.Job.PID), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got = text(runSandboxed(t, env, map[string]any{"job": d.Job.ID, "action": "wait"}))
	contains(t, got, "exited.", "launcher ended while the command ran")
}

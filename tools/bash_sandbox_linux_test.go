//go:build linux

package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
		"command": "touch job-in.txt; echo x > ../job-out.txt; echo logged >&2; read x < ready.fifo; sleep 30"})
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

//go:build linux

package sandbox_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/sandbox"
)

// world is a project, a fake HOME with credentials and a temp dir, all
// outside the system temp dir (which the sandbox could write).
type world struct {
	root, project, home, tmp string
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := worldRoot(t)
	w := world{root: root, project: filepath.Join(root, "proj"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{w.project, filepath.Join(w.project, ".git", "hooks"), filepath.Join(w.project, ".ama"),
		filepath.Join(w.project, "src"), filepath.Join(w.home, ".ssh"), w.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(w.home, ".ssh", "id_rsa"), "PRIVATE KEY\n")
	writeFile(t, filepath.Join(w.home, "notes.txt"), "not on the list\n")
	writeFile(t, filepath.Join(w.home, ".gitconfig"), "[user]\n")
	writeFile(t, filepath.Join(w.project, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(w.project, ".git", "HEAD"), "ref: refs/heads/main\n")
	return w
}

// worldRoot is a fresh directory outside /tmp where possible (/var/tmp):
// the jail's /tmp is private, so a world below /tmp would see its
// "outside" writes land in the private /tmp instead of being refused.
func worldRoot(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "ama-sandbox-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	return root
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runtimeFor(t *testing.T, s sandbox.Settings, w world) *sandbox.Runtime {
	t.Helper()
	self := selfExe(t)
	rt := sandbox.New(s, self, w.dirs())
	if !rt.Status().Available {
		t.Skipf("no usable Landlock sandbox on this kernel: %s", rt.Status().Detail)
	}
	return rt
}

// sh runs a command in the sandbox of w and returns the combined output and
// the exit code.
func (w world) sh(t *testing.T, c *sandbox.Command, script string) (string, int) {
	t.Helper()
	// AMA_SANDBOX_TEST_LAUNCHER=1 runs every jail test through the
	// pre-started launcher (Command.Start) instead of Wrap.
	if os.Getenv("AMA_SANDBOX_TEST_LAUNCHER") == "1" && c.Policy().Namespaces {
		return w.zsh(t, c, script)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = w.project
	cmd.Env = append(os.Environ(), "HOME="+w.home, "TMPDIR="+w.tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := c.Wrap(cmd)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	release()
	if err == nil {
		err = cmd.Wait()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("run: %v", err)
	return "", -1
}

func (w world) dirs() sandbox.Dirs {
	return sandbox.Dirs{Home: w.home, Temp: w.tmp}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestSandboxFilesystem(t *testing.T) {
	w := newWorld(t)
	rt := runtimeFor(t, sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, w)
	t.Logf("status: %+v", rt.Status())
	c := rt.For(w.project, "", false)

	if out, code := w.sh(t, c, "touch inside.txt && mkdir -p src/a && echo x > src/a/b && echo t > \"$TMPDIR/t\" && cat \"$HOME/.gitconfig\" && echo hi > /dev/null"); code != 0 {
		t.Fatalf("allowed writes failed (%d): %s", code, out)
	}
	if !exists(filepath.Join(w.project, "inside.txt")) || !exists(filepath.Join(w.project, "src", "a", "b")) {
		t.Fatal("writes inside the project did not happen")
	}

	outside := filepath.Join(w.root, "outside.txt")
	cases := []struct {
		name, script, marker string
	}{
		{"write outside the project", "echo x > " + outside, outside},
		{"write into .git/hooks", "echo 'curl evil' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit", filepath.Join(w.project, ".git", "hooks", "pre-commit")},
		{"write into .ama", "mkdir -p .ama/skills && echo x > .ama/config.json", filepath.Join(w.project, ".ama", "config.json")},
	}
	if py, err := exec.LookPath("python3"); err == nil {
		cases = append(cases, struct{ name, script, marker string }{"python write outside",
			py + " -c \"import os; open(os.path.join(os.environ['HOME'], '..', 'py.txt'), 'w').write('x')\"", filepath.Join(w.root, "py.txt")})
	}
	for _, tc := range cases {
		out, code := w.sh(t, c, tc.script)
		if code == 0 && !strings.Contains(tc.script, ";") {
			t.Errorf("%s: exit 0: %s", tc.name, out)
		}
		if exists(tc.marker) {
			t.Errorf("%s: %s was created", tc.name, tc.marker)
		}
		if c.DenialHint(out) == "" {
			t.Errorf("%s: no denial hint for %q", tc.name, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.project, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if out, code := w.sh(t, c, "echo changed >> .git/config"); code == 0 {
		t.Errorf("append to .git/config succeeded: %s", out)
	}

	// A credential read with the path computed at run time.
	out, code := w.sh(t, c, `f=$(printf '%s/.s%s/id_%s' "$HOME" sh rsa); cat "$f"`)
	if code == 0 || strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("read of ~/.ssh/id_rsa was not refused (%d): %s", code, out)
	}
	// Nor through procfs, nor by undoing the read-only mount.
	for _, script := range []string{`cat "/proc/self/root$HOME/.ssh/id_rsa"`, `cat "/proc/1/root$HOME/.ssh/id_rsa"`} {
		if out, code := w.sh(t, c, script); code == 0 || strings.Contains(out, "PRIVATE") {
			t.Errorf("%s: not refused (%d): %s", script, code, out)
		}
	}
	if out, code := w.sh(t, c, "umount .git/hooks 2>&1; umount -l .git/hooks 2>&1; echo x > .git/hooks/post-merge"); code == 0 || exists(filepath.Join(w.project, ".git", "hooks", "post-merge")) {
		t.Errorf("unmounting the read-only bind mount worked (%d): %s", code, out)
	}
	// Nor by renaming the protected directories away and recreating them.
	for _, script := range []string{
		"mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
		"mv .git/hooks .git/hooks-old && mkdir .git/hooks && echo evil > .git/hooks/pre-commit",
		"mv .ama .ama-old && mkdir .ama && echo '{}' > .ama/config.json",
	} {
		out, code := w.sh(t, c, script)
		if code == 0 || exists(filepath.Join(w.project, ".git-old")) || exists(filepath.Join(w.project, ".ama-old")) ||
			exists(filepath.Join(w.project, ".git", "hooks", "pre-commit")) || !exists(filepath.Join(w.project, ".git", "HEAD")) {
			t.Errorf("%q was not refused (%d): %s", script, code, out)
		}
	}
	// Signals cannot leave the sandbox (Landlock ABI 6 scoping).
	if rt.Status().ABI >= 6 {
		if out, code := w.sh(t, c, "kill -0 "+strconv.Itoa(os.Getpid())); code == 0 {
			t.Errorf("signal to the parent allowed: %s", out)
		}
	}
	// A link planted in the project does not reach the key either.
	if err := os.Symlink(filepath.Join(w.home, ".ssh"), filepath.Join(w.project, "keys")); err != nil {
		t.Fatal(err)
	}
	if out, code := w.sh(t, c, "cat keys/id_rsa"); code == 0 || strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("read through a symlink was not refused (%d): %s", code, out)
	}
}

func TestSandboxPlanIsReadOnly(t *testing.T) {
	w := newWorld(t)
	rt := runtimeFor(t, sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, w)
	c := rt.For(w.project, "", true)
	out, code := w.sh(t, c, "ls src >/dev/null && touch plan.txt")
	if code == 0 || exists(filepath.Join(w.project, "plan.txt")) {
		t.Fatalf("plan sandbox allowed a write (%d): %s", code, out)
	}
	if !strings.Contains(out, "ermission denied") && !strings.Contains(out, "ead-only") {
		t.Errorf("unexpected output: %s", out)
	}
}

func TestSandboxNetwork(t *testing.T) {
	w := newWorld(t)
	rt := runtimeFor(t, sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, w)
	if !rt.NetworkDenied() {
		t.Skipf("the network cannot be denied here: %+v", rt.Status())
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := "exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + " && echo connected"
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash needed for /dev/tcp")
	}
	c := rt.For(w.project, "", false)
	out, code := w.sh(t, c, "bash -c '"+script+"'")
	if code == 0 || strings.Contains(out, "connected") {
		t.Errorf("connection was not refused (%d): %s", code, out)
	}
	if c.DenialHint(out) == "" {
		t.Errorf("no hint for %q", out)
	}
	// The listener is reachable without the sandbox: the refusal above was
	// the sandbox's.
	cmd := exec.Command("bash", "-c", script)
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "connected") {
		t.Fatalf("control connection failed: %v %s", err, b)
	}
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("control connection not accepted")
	}
	select {
	case <-accepted:
		t.Error("the listener saw a second connection")
	default:
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSandboxWithoutNamespaces(t *testing.T) {
	self := selfExe(t)
	w := newWorld(t)
	rt := sandbox.NewWithoutNamespaces(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self, w.dirs())
	if !rt.Status().Available {
		t.Skipf("no usable Landlock sandbox: %s", rt.Status().Detail)
	}
	if rt.Status().Namespaces {
		t.Fatal("namespaces used although disabled")
	}
	c := rt.For(w.project, "", false)
	if out, code := w.sh(t, c, "echo x > src/new.txt && echo y > .git/HEAD"); code != 0 {
		t.Fatalf("writes below the project root failed (%d): %s", code, out)
	}
	for _, tc := range []struct{ script, marker string }{
		{"echo x > .git/hooks/post-checkout", filepath.Join(w.project, ".git", "hooks", "post-checkout")},
		{"mkdir .ama/skills", filepath.Join(w.project, ".ama", "skills")},
		{"touch top.txt", filepath.Join(w.project, "top.txt")}, // the price of the fallback
		{"mv .git .git-old", filepath.Join(w.project, ".git-old")},
		{"mv .git/hooks .git/hooks-old", filepath.Join(w.project, ".git", "hooks-old")},
	} {
		if out, code := w.sh(t, c, tc.script); code == 0 || exists(tc.marker) {
			t.Errorf("%q was allowed (%d): %s", tc.script, code, out)
		}
	}
	if out, code := w.sh(t, c, `cat "$HOME/.ssh/id_rsa"`); code == 0 || strings.Contains(out, "PRIVATE") {
		t.Errorf("key readable (%d): %s", code, out)
	}
}

package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/tools"
)

// promptly bounds how long a refusal of a special file may take (it is
// immediate; the margin is for a loaded machine).
const promptly = 5 * time.Second

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// runBounded runs a tool and fails when it does not return promptly.
func runBounded(t *testing.T, env *tools.Env, name string, args any) *tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan *tools.Result, 1)
	start := time.Now()
	go func() { done <- runCtx(t, ctx, env, name, args, nil) }()
	select {
	case res := <-done:
		if d := time.Since(start); d > promptly {
			t.Errorf("%s %v took %s", name, args, d)
		}
		return res
	case <-time.After(promptly):
		cancel() // the abort must end it
		res := <-done
		t.Fatalf("%s %v did not return within %s (after abort: %s)", name, args, promptly, text(res))
		return nil
	}
}

// Tools open only regular files (and directories where listing is their
// job); devices, FIFOs and the server's own descriptors are refused
// quickly, decided on the opened descriptor.
func TestSpecialFilesRefused(t *testing.T) {
	env := newEnv(t)
	fifo := filepath.Join(env.Cwd, "fifo")
	mkfifo(t, fifo)
	writeFile(t, env.Cwd, "dir/a.txt", "needle\n")
	mkfifo(t, filepath.Join(env.Cwd, "dir", "pipe"))
	mkfifo(t, filepath.Join(env.Cwd, "dir", ".gitignore")) // a FIFO where grep reads ignore rules
	if err := os.Symlink("/dev/zero", filepath.Join(env.Cwd, "zero")); err != nil {
		t.Fatal(err)
	}
	env.Reads.Mark(fifo)
	tests := []struct {
		tool string
		args map[string]any
		want string // in the error text
	}{
		{"read", map[string]any{"path": "fifo"}, "not a regular file"},
		{"read", map[string]any{"path": "/dev/zero"}, "not a regular file"},
		{"read", map[string]any{"path": "zero"}, "not a regular file"},
		{"read", map[string]any{"path": "/dev/stdin"}, ""},
		{"read", map[string]any{"path": "/proc/self/fd/0"}, ""},
		{"read", map[string]any{"path": "/proc/self/fd/1"}, ""},
		{"read", map[string]any{"path": "/proc/self/fd/2"}, ""},
		{"read", map[string]any{"path": "/proc/self/environ"}, "process environment"},
		{"read", map[string]any{"path": "/proc/self/task/../environ"}, "process environment"},
		{"grep", map[string]any{"pattern": "KEY", "path": "/proc/self/environ"}, "process environment"},
		{"grep", map[string]any{"pattern": "x", "path": "/dev/zero"}, "not a regular file"},
		{"grep", map[string]any{"pattern": "x", "path": "fifo"}, "not a regular file"},
		{"grep", map[string]any{"pattern": "x", "path": "/dev/stdin"}, ""},
		{"ls", map[string]any{"path": "fifo"}, "not a regular file"},
		{"ls", map[string]any{"path": "/dev/zero"}, "not a regular file"},
		{"edit", map[string]any{"path": "fifo", "edits": []map[string]string{{"oldText": "a", "newText": "b"}}}, "not a regular file"},
		{"write", map[string]any{"path": "fifo", "content": "x"}, "not a regular file"},
		{"write", map[string]any{"path": "/dev/zero", "content": "x"}, "not a regular file"},
	}
	for _, tt := range tests {
		res := runBounded(t, env, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v: error %v: %s", tt.tool, tt.args, res.IsError, text(res))
		}
	}
	// A walk skips the FIFOs (and the FIFO .gitignore) and finds the file.
	if out := text(runBounded(t, env, "grep", map[string]any{"pattern": "needle"})); !strings.Contains(out, "dir/a.txt:1: needle") {
		t.Errorf("grep walk: %s", out)
	}
	if out := text(runBounded(t, env, "glob", map[string]any{"pattern": "**"})); !strings.Contains(out, "dir/a.txt") {
		t.Errorf("glob walk: %s", out)
	}
	if out := text(runBounded(t, env, "ls", map[string]any{"path": "dir"})); !strings.Contains(out, "pipe") {
		t.Errorf("ls: %s", out)
	}
	// Previews open nothing that blocks either.
	for _, tool := range []string{"write", "edit"} {
		tl, _ := registry.Get(tool)
		done := make(chan struct{})
		go func() {
			defer close(done)
			tl.(tools.Previewer).Preview(context.Background(), &tools.Call{Args: rawArgs(t, map[string]any{"path": "fifo", "content": "x",
				"edits": []map[string]string{{"oldText": "a", "newText": "b"}}}), Env: env})
		}()
		select {
		case <-done:
		case <-time.After(promptly):
			t.Fatalf("%s preview of a FIFO blocks", tool)
		}
	}
}

//go:build unix

package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/tools"
)

func TestBashOutputAndExitCodes(t *testing.T) {
	env := newEnv(t)
	env.ExtraEnv = []string{"AMA_TEST_VAR=from-env"}
	writeFile(t, env.Cwd, "sub/marker", "")
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError bool
		code    int
	}{
		{"stdout and stderr combined", map[string]any{"command": "echo out; echo err >&2; echo out2"}, "out\nerr\nout2", false, 0},
		{"exit code", map[string]any{"command": "echo failing; exit 3"}, "failing\n\n[Exit code 3]", true, 3},
		{"no output", map[string]any{"command": "true"}, "(no output)", false, 0},
		{"extra env", map[string]any{"command": "echo $AMA_TEST_VAR"}, "from-env", false, 0},
		{"cwd arg", map[string]any{"command": "ls", "cwd": "sub"}, "marker", false, 0},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, "done", false, 0},
		{"colors and progress are cleaned", map[string]any{"command": `printf '\033[31mred\033[0m\n10%%\r50%%\r100%%\n'`}, "red\n100%", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, env, "bash", tt.args)
			if r.IsError != tt.isError || text(r) != tt.want {
				t.Fatalf("got (%v) %q, want (%v) %q", r.IsError, text(r), tt.isError, tt.want)
			}
			d := r.Details.(tools.BashDetails)
			if d.ExitCode == nil || *d.ExitCode != tt.code {
				t.Errorf("exit code %v, want %d", d.ExitCode, tt.code)
			}
		})
	}
}

func TestBashArgumentErrors(t *testing.T) {
	env := newEnv(t)
	mustErr(t, run(t, env, "bash", map[string]any{}), "command is empty")
	mustErr(t, run(t, env, "bash", map[string]any{"command": "ls", "job": "j1"}), "not both")
	mustErr(t, run(t, env, "bash", map[string]any{"action": "stop"}), "action needs job")
	mustErr(t, run(t, env, "bash", map[string]any{"command": "ls", "cwd": "nowhere"}), "Working directory not found: nowhere")
	mustErr(t, run(t, env, "bash", map[string]any{"command": "sleep 1", "background": true}), "not available")
	mustErr(t, run(t, env, "bash", map[string]any{"job": "j1"}), "not available")
}

func TestBashUpdates(t *testing.T) {
	env := newEnv(t)
	var (
		mu      sync.Mutex
		updates []string
	)
	update := func(s string) {
		mu.Lock()
		updates = append(updates, s)
		mu.Unlock()
	}
	r := runCtx(t, context.Background(), env, "bash", map[string]any{"command": "echo one; echo two"}, update)
	mustOK(t, r)
	mu.Lock()
	defer mu.Unlock()
	if len(updates) == 0 || updates[len(updates)-1] != "one\ntwo\n" {
		t.Fatalf("updates %q", updates)
	}
}

func TestBashTruncationSavesFullOutput(t *testing.T) {
	for _, tt := range []struct {
		name, command string
		lines         int
	}{
		{"many lines", "seq 1 5000", 5000},
		{"more than fits in memory", "seq 1 300000", 300000}, // ~2 MB
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			r := run(t, env, "bash", map[string]any{"command": tt.command})
			got := mustOK(t, r)
			d := r.Details.(tools.BashDetails)
			if !d.Truncated || d.FullOutputPath == "" {
				t.Fatalf("details %+v", d)
			}
			if filepath.Dir(d.FullOutputPath) != env.OutputDir {
				t.Errorf("saved to %s, want under %s", d.FullOutputPath, env.OutputDir)
			}
			fi, err := os.Stat(env.OutputDir)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("output dir: %v %v", fi, err)
			}
			contains(t, got, "full output saved to "+d.FullOutputPath, fmt.Sprintf("of %d lines", tt.lines))
			if !strings.HasSuffix(got, fmt.Sprintf("\n%d", tt.lines)) {
				t.Errorf("tail does not end with the last line: %q", got[len(got)-20:])
			}
			if n := strings.Count(got, "\n"); n > tools.MaxOutputLines+1 {
				t.Errorf("result has %d lines", n)
			}
			if n := len([]rune(got)); n > tools.MaxResultChars {
				t.Errorf("result has %d characters", n)
			}
			full := readFile(t, d.FullOutputPath)
			if !strings.HasPrefix(full, "1\n2\n3\n") || !strings.HasSuffix(full, fmt.Sprintf("\n%d\n", tt.lines)) {
				t.Errorf("saved output is not complete (%d bytes)", len(full))
			}
		})
	}
}

func TestBashTimeoutEscalatesToKill(t *testing.T) {
	env := newEnv(t)
	reg, err := tools.NewRegistry(&tools.BashTool{KillGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The shell and its child ignore SIGTERM; only SIGKILL ends them.
	args := rawArgs(t, map[string]any{"command": "trap '' TERM; echo started; sleep 30; echo never", "timeoutMs": 300})
	start := time.Now()
	r := reg.Run(context.Background(), "bash", &tools.Call{Args: args, Env: env})
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("took %v", elapsed)
	}
	got := mustErr(t, r, "Timed out after 300 ms")
	contains(t, got, "started")
	d := r.Details.(tools.BashDetails)
	if !d.TimedOut || d.ExitCode != nil {
		t.Errorf("details %+v", d)
	}
}

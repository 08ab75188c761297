package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

func TestLimitText(t *testing.T) {
	env := newEnv(t)
	short := "fits"
	if got := tools.LimitText(env, "x", short, false, tools.MaxResultChars); got != short {
		t.Errorf("short text changed: %q", got)
	}
	var b strings.Builder
	for i := 0; b.Len() < 2*tools.MaxResultChars; i++ {
		b.WriteString(strings.Repeat("é", 50) + "\n")
	}
	long := b.String()
	head := tools.LimitText(env, "x", long, false, tools.MaxResultChars)
	tail := tools.LimitText(env, "x", long, true, tools.MaxResultChars)
	for _, got := range []string{head, tail} {
		if n := len([]rune(got)); n > tools.MaxResultChars {
			t.Errorf("kept %d characters", n)
		}
		contains(t, got, "[output cut", "full text saved to "+env.OutputDir)
	}
	if !strings.HasPrefix(head, strings.Repeat("é", 50)+"\n") || !strings.HasSuffix(strings.SplitN(tail, "\n", 2)[1], "é\n") {
		t.Error("head/tail kept the wrong end")
	}
	// Cut at line boundaries.
	body := strings.SplitN(head, "\n[output cut", 2)[0]
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if len([]rune(l)) != 50 {
			t.Fatalf("partial line %q", l)
		}
	}
	files, _ := os.ReadDir(env.OutputDir)
	if len(files) != 2 {
		t.Fatalf("%d saved files", len(files))
	}
	if saved := readFile(t, filepath.Join(env.OutputDir, files[0].Name())); saved != long {
		t.Error("saved text differs")
	}

	noDir := &tools.Env{Cwd: env.Cwd}
	contains(t, tools.LimitText(noDir, "x", long, false, tools.MaxResultChars), "could not be saved")
}

func TestEnvPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	env := &tools.Env{Cwd: "/proj/work"}
	tests := []struct{ in, abs, rel string }{
		{"a/b.go", "/proj/work/a/b.go", "a/b.go"},
		{"./a/../c", "/proj/work/c", "c"},
		{".", "/proj/work", "."},
		{"/proj/work/x", "/proj/work/x", "x"},
		{"/proj/workshop/x", "/proj/workshop/x", "/proj/workshop/x"},
		{"../other", "/proj/other", "/proj/other"},
		{"~", home, home},
		{"~/n.txt", filepath.Join(home, "n.txt"), filepath.Join(home, "n.txt")},
		{"~user/x", "/proj/work/~user/x", "~user/x"},
	}
	for _, tt := range tests {
		abs := env.Abs(tt.in)
		if abs != tt.abs || env.Rel(abs) != tt.rel {
			t.Errorf("%q: Abs %q Rel %q, want %q %q", tt.in, abs, env.Rel(abs), tt.abs, tt.rel)
		}
	}
}

// A call's budget (Call.MaxChars, a nested call's 1 MiB) is the cut of
// every tool, not only Execute's: read shows every line of a 150 KB file,
// and bash keeps a 1 MiB tail of output too big for memory (the sink keeps
// more than its usual 256 KiB tail for it); the default stays 30,000.
func TestCallBudget(t *testing.T) {
	env := newEnv(t)
	var b strings.Builder
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&b, "%04d %s\n", i, strings.Repeat("r", 95))
	}
	writeFile(t, env.Cwd, "big.txt", b.String())
	long := strings.Repeat("b", 999)
	cmd := "i=0; while [ $i -lt 1900 ]; do i=$((i+1)); printf '%04d" + long + "\\n' $i; done"
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		chars      int
		min, max   int
		suffix     string
	}{
		{"read nested", "read", map[string]any{"path": "big.txt"}, tools.NestedMaxResultChars, 150_000, tools.NestedMaxResultChars, "1500 " + strings.Repeat("r", 95)},
		{"read default", "read", map[string]any{"path": "big.txt"}, 0, 20_000, tools.MaxResultChars, ""},
		{"bash nested", "bash", map[string]any{"command": cmd}, tools.NestedMaxResultChars, 1_000_000, tools.NestedMaxResultChars, "1900" + long},
		{"bash default", "bash", map[string]any{"command": cmd}, 0, 20_000, tools.MaxResultChars, "1900" + long},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := registry.Run(context.Background(), tt.tool, &tools.Call{ID: "c1", Args: rawArgs(t, tt.args), Env: env, MaxChars: tt.chars})
			got := mustOK(t, r)
			if n := len([]rune(got)); n < tt.min || n > tt.max {
				t.Errorf("%d characters, want %d to %d", n, tt.min, tt.max)
			}
			if tt.suffix != "" && !strings.HasSuffix(strings.TrimRight(got, "\n"), tt.suffix) {
				t.Errorf("ends %q", got[max(0, len(got)-120):])
			}
		})
	}
}

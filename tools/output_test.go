package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

func TestLimitText(t *testing.T) {
	env := newEnv(t)
	short := "fits"
	if got := tools.LimitText(env, "x", short, false); got != short {
		t.Errorf("short text changed: %q", got)
	}
	var b strings.Builder
	for i := 0; b.Len() < 2*tools.MaxResultChars; i++ {
		b.WriteString(strings.Repeat("é", 50) + "\n")
	}
	long := b.String()
	head := tools.LimitText(env, "x", long, false)
	tail := tools.LimitText(env, "x", long, true)
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
	contains(t, tools.LimitText(noDir, "x", long, false), "could not be saved")
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

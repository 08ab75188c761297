package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/tools"
)

// globTree creates files with distinct mtimes: the later in the list, the
// newer.
func globTree(t *testing.T, env *tools.Env) {
	t.Helper()
	files := []string{
		".gitignore", "src/a.go", "src/a_test.go", "src/b.ts", "src/deep/c.go",
		"src/deep/d.tsx", "README.md", "vendor/v.go", "node_modules/m.js", "gen/x.go",
		".git/HEAD", "my file.txt",
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, rel := range files {
		content := "x"
		if rel == ".gitignore" {
			content = "node_modules/\ngen\n"
		}
		p := writeFile(t, env.Cwd, rel, content)
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGlob(t *testing.T) {
	env := newEnv(t)
	globTree(t, env)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"doublestar, newest first", map[string]any{"pattern": "**/*.go"},
			[]string{"vendor/v.go", "src/deep/c.go", "src/a_test.go", "src/a.go"}},
		{"base name at any depth", map[string]any{"pattern": "*.go"},
			[]string{"vendor/v.go", "src/deep/c.go", "src/a_test.go", "src/a.go"}},
		{"path pattern", map[string]any{"pattern": "src/*.go"},
			[]string{"src/a_test.go", "src/a.go"}},
		{"braces", map[string]any{"pattern": "src/**/*.{ts,tsx}"},
			[]string{"src/deep/d.tsx", "src/b.ts"}},
		{"negation with includes", map[string]any{"pattern": "**/*.go !*_test.go !vendor/**"},
			[]string{"src/deep/c.go", "src/a.go"}},
		{"negation of a directory prunes it", map[string]any{"pattern": "*.go !deep"},
			[]string{"vendor/v.go", "src/a_test.go", "src/a.go"}},
		{"only negation means everything else", map[string]any{"pattern": "!src/** !vendor/**"},
			[]string{"my file.txt", "README.md", ".gitignore"}},
		{"escaped space", map[string]any{"pattern": `my\ file.txt`},
			[]string{"my file.txt"}},
		{"path arg", map[string]any{"pattern": "*.go", "path": "src/deep"},
			[]string{"src/deep/c.go"}},
		{"absolute pattern", map[string]any{"pattern": filepath.Join(env.Cwd, "src", "deep", "*")},
			[]string{"src/deep/d.tsx", "src/deep/c.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustOK(t, run(t, env, "glob", tt.args))
			if want := strings.Join(tt.want, "\n"); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	got := mustOK(t, run(t, env, "glob", map[string]any{"pattern": "*.py"}))
	if got != `No files match "*.py" in .` {
		t.Errorf("no match: %q", got)
	}
	mustErr(t, run(t, env, "glob", map[string]any{"pattern": "src/[a"}), "Invalid glob pattern")
	mustErr(t, run(t, env, "glob", map[string]any{"pattern": "*", "path": "nope"}), "Directory not found")
}

func TestGlobLimitAndTies(t *testing.T) {
	env := newEnv(t)
	same := time.Date(2024, 5, 5, 0, 0, 0, 0, time.UTC)
	for _, n := range []string{"c.txt", "a.txt", "b.txt", "d.txt"} {
		p := writeFile(t, env.Cwd, n, "")
		os.Chtimes(p, same, same)
	}
	r := run(t, env, "glob", map[string]any{"pattern": "*.txt", "limit": 2})
	got := mustOK(t, r)
	want := "a.txt\nb.txt\n\n[Showing the 2 most recently modified of 4 files; narrow the pattern or raise limit.]"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if d := r.Details.(tools.GlobDetails); d.Count != 4 || !d.Truncated {
		t.Errorf("details %+v", d)
	}
}

func TestLs(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "b.txt", "b")
	writeFile(t, env.Cwd, ".hidden", "")
	writeFile(t, env.Cwd, "a/x", "")
	writeFile(t, env.Cwd, "node_modules/y", "")
	writeFile(t, env.Cwd, ".gitignore", "node_modules/\n")
	if err := os.Symlink("b.txt", filepath.Join(env.Cwd, "link")); err != nil {
		t.Fatal(err)
	}
	got := mustOK(t, run(t, env, "ls", map[string]any{}))
	want := ".gitignore\n.hidden\na/\nb.txt\nlink -> b.txt\nnode_modules/"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r := run(t, env, "ls", map[string]any{"path": ".", "limit": 2})
	if got := mustOK(t, r); got != ".gitignore\n.hidden\n\n[Showing 2 of 6 entries; raise limit to see more.]" {
		t.Errorf("limit: %q", got)
	}
	if got := mustOK(t, run(t, env, "ls", map[string]any{"path": "a"})); got != "x" {
		t.Errorf("subdir: %q", got)
	}
	writeFile(t, env.Cwd, "empty/.keep", "")
	os.Remove(filepath.Join(env.Cwd, "empty", ".keep"))
	if got := mustOK(t, run(t, env, "ls", map[string]any{"path": "empty"})); got != "empty is empty." {
		t.Errorf("empty: %q", got)
	}
	mustErr(t, run(t, env, "ls", map[string]any{"path": "b.txt"}), "not a directory")
	mustErr(t, run(t, env, "ls", map[string]any{"path": "zzz"}), "Directory not found: zzz")
}

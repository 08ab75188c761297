package tools_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

// grepTree builds a small project for grep and glob tests.
func grepTree(t *testing.T, env *tools.Env) {
	t.Helper()
	files := map[string]string{
		".gitignore":         "build/\n*.log\n",
		"main.go":            "package main\n\nfunc main() {\n\tHello()\n}\n",
		"hello.go":           "package main\n\n// Hello greets.\nfunc Hello() {\n\tprintln(\"hello\")\n}\n",
		"docs/readme.md":     "Say hello.\nHELLO again.\n",
		"docs/a.b.txt":       "a.b and axb\n",
		"build/out.go":       "func Hello() {}\n",
		"debug.log":          "hello from the log\n",
		"lib/.ignore":        "gen/\n",
		"lib/gen/z.go":       "hello generated\n",
		"lib/util.go":        "package lib\n// hello util\n",
		"lib/sub/.gitignore": "secret.go\n",
		"lib/sub/secret.go":  "hello secret\n",
		"lib/sub/visible.go": "hello visible\n",
		".git/config":        "hello git\n",
		"bin/tool":           "hello\x00binary",
	}
	for rel, content := range files {
		writeFile(t, env.Cwd, rel, content)
	}
}

func TestGrep(t *testing.T) {
	env := newEnv(t)
	grepTree(t, env)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"regex, sorted, ignores applied", map[string]any{"pattern": "hel+o"},
			"docs/readme.md:1: Say hello.\nhello.go:5: \tprintln(\"hello\")\nlib/sub/visible.go:1: hello visible\nlib/util.go:2: // hello util"},
		{"ignoreCase", map[string]any{"pattern": "^hello", "ignoreCase": true, "path": "docs"},
			"docs/readme.md:2: HELLO again."},
		{"literal", map[string]any{"pattern": "a.b", "literal": true},
			"docs/a.b.txt:1: a.b and axb"},
		{"regex dot", map[string]any{"pattern": "a.b and a.b"},
			"docs/a.b.txt:1: a.b and axb"},
		{"glob on base name", map[string]any{"pattern": "Hello", "glob": "*.go"},
			"hello.go:3: // Hello greets.\nhello.go:4: func Hello() {\nmain.go:4: \tHello()"},
		{"glob with braces and a path", map[string]any{"pattern": "hello", "glob": "lib/**/*.{go,md}"},
			"lib/sub/visible.go:1: hello visible\nlib/util.go:2: // hello util"},
		{"context", map[string]any{"pattern": "println", "context": 1},
			"hello.go-4- func Hello() {\nhello.go:5: \tprintln(\"hello\")\nhello.go-6- }"},
		{"context groups", map[string]any{"pattern": "^(package|\\tprintln)", "context": 1, "glob": "hello.go"},
			"hello.go:1: package main\nhello.go-2- \n--\nhello.go-4- func Hello() {\nhello.go:5: \tprintln(\"hello\")\nhello.go-6- }"},
		{"adjacent groups merge", map[string]any{"pattern": "^(package|\\tHello)", "context": 1, "glob": "main.go"},
			"main.go:1: package main\nmain.go-2- \nmain.go-3- func main() {\nmain.go:4: \tHello()\nmain.go-5- }"},
		{"filesOnly", map[string]any{"pattern": "hello", "filesOnly": true},
			"docs/readme.md\nhello.go\nlib/sub/visible.go\nlib/util.go"},
		{"single file, even if ignored", map[string]any{"pattern": "hello", "path": "debug.log"},
			"debug.log:1: hello from the log"},
		{"explicitly ignored directory", map[string]any{"pattern": "Hello", "path": "build"},
			"build/out.go:1: func Hello() {}"},
		{"limit", map[string]any{"pattern": "hello", "limit": 2},
			"docs/readme.md:1: Say hello.\nhello.go:5: \tprintln(\"hello\")\n\n[Stopped after 2 matches; narrow the search or raise limit.]"},
		{"no match", map[string]any{"pattern": "zzz"}, `No matches for "zzz" in .`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustOK(t, run(t, env, "grep", tt.args))
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	mustErr(t, run(t, env, "grep", map[string]any{"pattern": "a(b"}), "Invalid regular expression")
	mustErr(t, run(t, env, "grep", map[string]any{"pattern": "x", "path": "nope"}), "Path not found: nope")
}

func TestGrepSkipsHugeAndBinary(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "big.txt", "needle\n"+strings.Repeat("x", tools.GrepMaxFileBytes))
	writeFile(t, env.Cwd, "bin.dat", "needle\x00")
	writeFile(t, env.Cwd, "ok.txt", "needle\n")
	r := run(t, env, "grep", map[string]any{"pattern": "needle"})
	got := mustOK(t, r)
	if got != "ok.txt:1: needle\n\n[Skipped 1 file over 2 MB.]" {
		t.Errorf("got %q", got)
	}
	d := r.Details.(tools.GrepDetails)
	if d.SkippedLarge != 1 || d.SkippedBin != 1 || d.Matches != 1 {
		t.Errorf("details %+v", d)
	}
}

func TestGrepLongOutputIsCut(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "many.txt", strings.Repeat("match "+strings.Repeat("y", 400)+"\n", 200))
	got := mustOK(t, run(t, env, "grep", map[string]any{"pattern": "match", "limit": 200}))
	contains(t, got, "[output cut: showing the first", "full text saved to "+env.OutputDir)
}

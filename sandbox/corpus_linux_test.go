//go:build linux

package sandbox_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/sandbox"
)

// everyday is the corpus of everyday commands (build, test, lint, format,
// git read and commit) that must keep working inside the sandbox: each
// runs for real in a small Go + node + C project, with the real HOME (so
// the toolchains under it are the user's); tool names are skipped when the
// tool is missing.
var everyday = []struct{ tool, script string }{
	{"go", "go version"},
	{"go", "go env GOCACHE GOPATH"},
	{"go", "go build ./..."},
	{"go", "go build -o /tmp/app . && /tmp/app"},
	{"go", "go vet ./..."},
	{"go", "go test -count=1 ./..."},
	{"go", "go run ."},
	{"go", "go list ./..."},
	{"go", "go mod tidy && go mod verify"},
	{"go", "gofmt -l . && go fmt ./..."},
	{"go", "go doc fmt.Println >/dev/null"},
	{"git", "git status --short"},
	{"git", "git log --oneline -1"},
	{"git", "git diff --stat HEAD"},
	{"git", "git show --stat HEAD >/dev/null"},
	{"git", "git rev-parse HEAD"},
	{"git", "git ls-files"},
	{"git", "git grep -n func -- '*.go'"},
	{"git", "git blame main.go >/dev/null"},
	{"git", "echo change >> notes.txt && git add -A && git commit -qm corpus && git log --oneline -1"},
	{"git", "git switch -qc corpus-branch && git switch -q - && git branch -D corpus-branch"},
	{"git", "git stash list && git tag -f corpus-tag && git tag -d corpus-tag"},
	{"node", "node --version"},
	{"node", "node -e 'console.log(require(\"os\").tmpdir())'"},
	{"node", "node test.js"},
	{"npm", "npm --version"},
	{"npm", "npm test"},
	{"npm", "npm run lint"},
	{"npm", "npm ls --depth=0"},
	{"npm", "npm pack --dry-run"},
	{"sh", "ls -la && pwd && cat main.go >/dev/null"},
	{"sh", "grep -rn func . | wc -l && find . -name '*.go' | sort"},
	{"sh", "mkdir -p build/x && cp main.go build/x/ && mv build/x/main.go build/x/m.go && rm -r build"},
	{"sh", "echo '#!/bin/sh\necho ok' > run.sh && chmod +x run.sh && ./run.sh && rm run.sh"},
	{"sh", "ln -s main.go link.go && readlink link.go && rm link.go"},
	{"sh", "tar czf /tmp/src.tgz . && tar tzf /tmp/src.tgz >/dev/null"},
	{"sh", "f=$(mktemp) && echo x > \"$f\" && cat \"$f\" && d=$(mktemp -d) && touch \"$d/a\""},
	{"sh", "sed -n 1p main.go | awk '{print $1}' | tr a-z A-Z"},
	{"sh", "diff main.go main.go && sort -u go.mod | head -1 && wc -l main.go"},
	{"sh", "touch -d 2020-01-01 stamp && chmod 600 stamp && stat -c %a stamp && rm stamp"},
	{"sh", "echo hi > /dev/null && echo data > /dev/shm/x && cat /dev/shm/x && env | grep -c PATH"},
	{"make", "make -s all"},
	{"python3", "python3 -c 'import sys, tempfile; print(sys.version_info[0], tempfile.gettempdir())'"},
	{"python3", "python3 -m py_compile util.py && python3 -m compileall -q ."},
	{"pip", "pip --version && pip list >/dev/null"},
	{"gcc", "gcc -O2 -o /tmp/hello c/hello.c && /tmp/hello"},
	{"cargo", "cargo --version"},
}

func TestEverydayCorpus(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no HOME")
	}
	w := newWorld(t)
	files := map[string]string{
		"go.mod":       "module example.com/app\n\ngo 1.21\n",
		"main.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(greet()) }\n\nfunc greet() string { return \"hello\" }\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif greet() != \"hello\" {\n\t\tt.Fatal(greet())\n\t}\n}\n",
		"package.json": `{"name":"app","version":"1.0.0","scripts":{"test":"node test.js","lint":"node -e \"process.exit(0)\""}}` + "\n",
		"test.js":      "require('fs').writeFileSync(require('os').tmpdir() + '/t', 'x'); console.log('ok')\n",
		"util.py":      "def f():\n    return 1\n",
		"c/hello.c":    "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n",
		"Makefile":     "all:\n\t@echo built > out.txt && cat out.txt\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(w.project, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(w.project, name), body)
	}
	if err := os.RemoveAll(filepath.Join(w.project, ".git")); err != nil {
		t.Fatal(err)
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@e")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = w.project, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git setup: %v %s", err, out)
		}
	}
	// The real HOME, and a sandbox cache of the test's own whose Go build
	// cache starts as a copy of the user's (linkGoCache).
	d := sandbox.Dirs{Home: home, Temp: w.tmp, Cache: filepath.Join(w.root, "cache")}
	linkGoCache(t, filepath.Join(d.Cache, "go-build"))
	rt := sandbox.New(bashSettings, selfExe(t), d)
	t.Run("jail", func(t *testing.T) {
		if !rt.Status().Available || !rt.Status().Namespaces {
			t.Skipf("mode unavailable: %s", rt.Status().Detail)
		}
		t.Cleanup(rt.CloseLaunchers)
		c := rt.For(w.project, filepath.Join(w.root, "out", "s"), false)
		// The commands go through the session's pre-started launcher
		// (Command.Start), as the bash tool runs a foreground command:
		// the jail is built once and each command forks into a PID
		// namespace of its own inside it. Re-executing the -race test
		// binary as the launcher per command (Wrap) cost a second or
		// more each; Wrap's jail is the same plan and keeps its own
		// tests (the Jail* tests run through it).
		ran := 0
		for _, tc := range everyday {
			if _, err := exec.LookPath(tc.tool); err != nil && tc.tool != "sh" {
				t.Logf("skip (no %s): %s", tc.tool, tc.script)
				continue
			}
			ran++
			start := time.Now()
			out, code := runStarted(t, c, w.project, append(gitEnv, "HOME="+home), tc.script)
			t.Logf("%5.1fs %s", time.Since(start).Seconds(), tc.script)
			if code != 0 {
				t.Errorf("%q failed in the sandbox (%d): %s", tc.script, code, out)
			}
		}
		if ran < 40 {
			t.Errorf("only %d everyday commands ran", ran)
		}
		// Nothing was written in HOME outside the sandbox's cache.
		if exists(filepath.Join(home, "app")) {
			t.Error("wrote into HOME")
		}
	})
}

// linkGoCache fills dir, the sandbox's GOCACHE, with hard links to the
// entries of the user's Go build cache that builds used in the last day
// (go marks an entry used through its mtime, at most hourly). The
// standard library the corpus's go build, vet and test need is then
// compiled already (outside, by make test's own builds), as in the
// per-user sandbox cache after its first use: a cold one compiled it
// inside the jail, some 30 CPU-seconds each run on a fresh machine. The
// commands still write their own entries (the project's packages, the
// link) into dir. Only the corpus's fixed commands can reach the linked
// files, never a model's. Where the cache cannot be linked (another file
// system), dir starts empty.
func linkGoCache(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	src := strings.TrimSpace(string(out))
	if err != nil || src == "" || src == "off" {
		return
	}
	subs, _ := filepath.Glob(filepath.Join(src, "[0-9a-f][0-9a-f]"))
	for _, sub := range subs {
		entries, _ := os.ReadDir(sub)
		to := filepath.Join(dir, filepath.Base(sub))
		if err := os.MkdirAll(to, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) > 24*time.Hour {
				continue
			}
			if err := os.Link(filepath.Join(sub, e.Name()), filepath.Join(to, e.Name())); err != nil {
				t.Logf("the sandbox's Go build cache is not filled: %v", err)
				return
			}
		}
	}
}

// runStarted runs script with sh through c's pre-started launcher in dir
// with env and returns the combined output and the exit code.
func runStarted(t *testing.T, c *sandbox.Command, dir string, env []string, script string) (string, int) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, r := startPiped(t, c, sh, dir, env, script)
	var out strings.Builder
	_, _ = io.Copy(&out, r)
	r.Close()
	code, err := p.Wait()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return out.String(), code
}

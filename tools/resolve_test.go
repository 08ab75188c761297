package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/tools"
)

// layout is a project with a directory outside it and links pointing out.
type layout struct {
	env     *tools.Env
	root    string // parent of work and outside
	work    string
	outside string
}

func newLayout(t *testing.T) *layout {
	t.Helper()
	env := newEnv(t)
	l := &layout{env: env, work: env.Cwd, root: filepath.Dir(env.Cwd), outside: filepath.Join(filepath.Dir(env.Cwd), "outside")}
	env.Home = filepath.Join(l.root, "home")
	for _, d := range []string{l.outside, env.Home, filepath.Join(l.work, "src", "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l.link(t, l.outside, "linkdir")
	l.link(t, "src/inner", "srclink") // inside, relative
	return l
}

func (l *layout) link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(l.work, name)); err != nil {
		t.Fatal(err)
	}
}

func resolve(t *testing.T, env *tools.Env, tool string, args any) *tools.Resolved {
	t.Helper()
	return tools.Resolve(tool, rawArgs(t, args), env)
}

func TestResolvePaths(t *testing.T) {
	l := newLayout(t)
	tests := []struct {
		name, path, want string
	}{
		{"plain", "src/a.go", l.work + "/src/a.go"},
		{"through a link out", "linkdir/pwned.txt", l.outside + "/pwned.txt"},
		{"new nested path under a link", "linkdir/a/b/c.txt", l.outside + "/a/b/c.txt"},
		{"dot-dot after a link is the target's parent", "srclink/../x", l.work + "/src/x"},
		{"dot-dot before a link", "src/../linkdir/x", l.outside + "/x"},
		{"absolute through a link", l.work + "/linkdir/y", l.outside + "/y"},
		{"home", "~/notes", l.env.Home + "/notes"},
		{"missing then dot-dot", "nope/../z", l.work + "/z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolve(t, l.env, "write", map[string]any{"path": tt.path, "content": ""})
			if r.Err != nil || r.Real != tt.want {
				t.Errorf("Real = %q (%v), want %q", r.Real, r.Err, tt.want)
			}
			if !slices.Equal(r.Changes, []string{tt.want}) {
				t.Errorf("Changes = %v", r.Changes)
			}
		})
	}
	if err := os.Symlink("loop2", filepath.Join(l.work, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(l.work, "loop2")); err != nil {
		t.Fatal(err)
	}
	r := resolve(t, l.env, "read", map[string]any{"path": "loop1/x"})
	if r.Err == nil || r.Facts().PathErr == "" {
		t.Errorf("a symlink loop resolved to %q", r.Real)
	}
}

func TestResolveBash(t *testing.T) {
	l := newLayout(t)
	tests := []struct {
		name    string
		args    map[string]any
		dir     string
		changes []string
	}{
		{"no cwd", map[string]any{"command": "echo x > a.txt"}, l.work, []string{l.work + "/a.txt"}},
		{"relative cwd", map[string]any{"command": "echo x > outside.txt", "cwd": ".."}, l.root, []string{l.root + "/outside.txt"}},
		{"absolute cwd", map[string]any{"command": "echo x > .bashrc", "cwd": l.env.Home}, l.env.Home, []string{l.env.Home + "/.bashrc"}},
		{"cwd through a link", map[string]any{"command": "touch y", "cwd": "linkdir"}, l.outside, []string{l.outside + "/y"}},
		{"redirect through a link", map[string]any{"command": "echo x > linkdir/x"}, l.work, []string{l.outside + "/x"}},
		{"cd into a link", map[string]any{"command": "cd linkdir && echo x > z"}, l.work, []string{l.outside + "/z"}},
		{"link then dot-dot", map[string]any{"command": "echo x > srclink/../w"}, l.work, []string{l.work + "/src/w"}},
		{"delete through a link", map[string]any{"command": "rm linkdir/old"}, l.work, []string{l.outside + "/old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolve(t, l.env, "bash", tt.args)
			if r.Dir != tt.dir {
				t.Errorf("Dir = %q, want %q", r.Dir, tt.dir)
			}
			if !slices.Equal(r.Changes, tt.changes) {
				t.Errorf("Changes = %v, want %v", r.Changes, tt.changes)
			}
		})
	}
}

// decide judges a call the way the session does: resolved facts.
func decide(t *testing.T, env *tools.Env, mode approvals.Mode, tool string, args any) (approvals.Verdict, *tools.Resolved) {
	t.Helper()
	raw := rawArgs(t, args)
	r := tools.Resolve(tool, raw, env)
	pol, _, err := approvals.BuildPolicy(approvals.Layer{Mode: string(mode)}, approvals.Layer{}, approvals.Layer{})
	if err != nil {
		t.Fatal(err)
	}
	pol.Unattended = true
	tl, _ := registry.Get(tool)
	v := approvals.Decide(approvals.Call{Tool: tool, Class: approvals.Class(tools.PermissionOf(tl, raw)), Input: raw,
		Cwd: env.Cwd, Home: env.Home, Facts: r.Facts()}, pol, nil)
	return v, r
}

// The verdict said "inside the project"; then a directory on the way is
// swapped for a symlink to a directory outside. Execution of the judged
// call must fail and write nothing outside (nor anywhere else).
func TestRaceDirSwappedForSymlink(t *testing.T) {
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		setup  func(l *layout)
		target string // relative to outside: must not exist / must not change
	}{
		{"write new file", "write", map[string]any{"path": "sub/x.txt", "content": "pwned"}, nil, "x.txt"},
		{"write new nested path", "write", map[string]any{"path": "sub/new/deep.txt", "content": "pwned"}, nil, "new"},
		{"write existing file", "write", map[string]any{"path": "sub/f.txt", "content": "pwned"}, func(l *layout) {
			writeFile(t, l.work, "sub/f.txt", "mine")
			l.env.Reads.Mark(filepath.Join(l.work, "sub", "f.txt"))
		}, "f.txt"},
		{"edit", "edit", map[string]any{"path": "sub/f.txt", "edits": []map[string]string{{"oldText": "old", "newText": "pwned"}}}, func(l *layout) {
			writeFile(t, l.work, "sub/f.txt", "old")
			l.env.Reads.Mark(filepath.Join(l.work, "sub", "f.txt"))
		}, "f.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayout(t)
			if err := os.Mkdir(filepath.Join(l.work, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(l)
			}
			writeFile(t, l.outside, "f.txt", "old") // what an escaped write or edit would change
			v, r := decide(t, l.env, approvals.ModeAuto, tt.tool, tt.args)
			if v.Decision != approvals.Allow {
				t.Fatalf("verdict %s (%s), want allow before the swap", v.Decision, v.Reason)
			}
			// The swap, between the verdict and the execution.
			if err := os.Rename(filepath.Join(l.work, "sub"), filepath.Join(l.work, "sub.old")); err != nil {
				t.Fatal(err)
			}
			l.link(t, l.outside, "sub")
			tl, _ := registry.Get(tt.tool)
			res := tools.Execute(context.Background(), tl, &tools.Call{ID: "c", Args: rawArgs(t, tt.args), Env: l.env, Resolved: r})
			if !res.IsError || !strings.Contains(text(res), "changed after it was checked") {
				t.Errorf("result %v: %s", res.IsError, text(res))
			}
			if got := readFile(t, filepath.Join(l.outside, "f.txt")); got != "old" {
				t.Errorf("outside/f.txt = %q", got)
			}
			if tt.target != "f.txt" {
				if _, err := os.Lstat(filepath.Join(l.outside, tt.target)); err == nil {
					t.Errorf("outside/%s was created", tt.target)
				}
			}
			entries, _ := os.ReadDir(filepath.Join(l.work, "sub.old"))
			for _, e := range entries {
				if b, _ := os.ReadFile(filepath.Join(l.work, "sub.old", e.Name())); strings.Contains(string(b), "pwned") {
					t.Errorf("sub.old/%s was written", e.Name())
				}
			}
		})
	}
}

// A file swapped for a symlink after the verdict is not followed.
func TestRaceFileSwappedForSymlink(t *testing.T) {
	l := newLayout(t)
	p := writeFile(t, l.work, "f.txt", "mine")
	secret := writeFile(t, l.outside, "secret.txt", "old")
	l.env.Reads.Mark(p)
	for _, tool := range []string{"write", "read"} {
		args := map[string]any{"path": "f.txt", "content": "pwned"}
		if tool == "read" {
			args = map[string]any{"path": "f.txt"}
		}
		r := resolve(t, l.env, tool, args)
		os.Remove(p)
		if err := os.Symlink(secret, p); err != nil {
			t.Fatal(err)
		}
		tl, _ := registry.Get(tool)
		res := tools.Execute(context.Background(), tl, &tools.Call{Args: rawArgs(t, args), Env: l.env, Resolved: r})
		if !res.IsError || strings.Contains(text(res), "old") {
			t.Errorf("%s: %s", tool, text(res))
		}
		if got := readFile(t, secret); got != "old" {
			t.Errorf("%s changed the link target: %q", tool, got)
		}
		os.Remove(p)
		writeFile(t, l.work, "f.txt", "mine")
	}
}

// Approved outside paths are opened as resolved: a write through linkdir
// lands in the link's target, and only there.
func TestWriteOutsideAsResolved(t *testing.T) {
	l := newLayout(t)
	res := run(t, l.env, "write", map[string]any{"path": "linkdir/a/b.txt", "content": "ok"})
	mustOK(t, res)
	if got := readFile(t, filepath.Join(l.outside, "a", "b.txt")); got != "ok" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(text(res), "linkdir/a/b.txt") {
		t.Errorf("result names %s", text(res))
	}
}

func TestGrepSkipsLinksLeavingTheProject(t *testing.T) {
	l := newLayout(t)
	writeFile(t, l.outside, "secret.txt", "KEY=outside\n")
	writeFile(t, l.work, "src/inner/a.txt", "KEY=inside\n")
	if err := os.Symlink(filepath.Join(l.outside, "secret.txt"), filepath.Join(l.work, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/inner/a.txt", filepath.Join(l.work, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	out := text(run(t, l.env, "grep", map[string]any{"pattern": "KEY"}))
	if strings.Contains(out, "outside") || !strings.Contains(out, "alias.txt:1: KEY=inside") || !strings.Contains(out, "src/inner/a.txt:1:") {
		t.Errorf("grep:\n%s", out)
	}
	// Searching the outside directory itself (a judged path) is fine.
	out = text(run(t, l.env, "grep", map[string]any{"pattern": "KEY", "path": "linkdir"}))
	if !strings.Contains(out, "linkdir/secret.txt:1: KEY=outside") {
		t.Errorf("grep linkdir:\n%s", out)
	}
}

func TestResolvedFactsJSON(t *testing.T) {
	// Facts carry data only (approvals does no I/O): they survive a round
	// trip through the values the verdict sees.
	l := newLayout(t)
	f := resolve(t, l.env, "read", map[string]any{"path": "linkdir/x"}).Facts()
	b, _ := json.Marshal(struct{ Path, Root string }{f.Path, f.Root})
	if !strings.Contains(string(b), l.outside+"/x") || f.Root != l.work {
		t.Errorf("facts %s", b)
	}
}

// bash runs where the verdict judged it: the cwd argument resolved, and a
// swap after the verdict refuses the command instead of redirecting it.
func TestBashRunsInResolvedDir(t *testing.T) {
	l := newLayout(t)
	if err := os.Mkdir(filepath.Join(l.work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	bash, _ := registry.Get("bash")
	args := map[string]any{"command": "pwd -P", "cwd": "linkdir"}
	r := resolve(t, l.env, "bash", args)
	res := tools.Execute(context.Background(), bash, &tools.Call{Args: rawArgs(t, args), Env: l.env, Resolved: r})
	if got := strings.TrimSpace(text(res)); got != l.outside {
		t.Errorf("pwd = %q, want %q", got, l.outside)
	}
	args = map[string]any{"command": "echo pwned > y.txt", "cwd": "sub"}
	r = resolve(t, l.env, "bash", args)
	os.Rename(filepath.Join(l.work, "sub"), filepath.Join(l.work, "sub.old"))
	l.link(t, l.outside, "sub")
	res = tools.Execute(context.Background(), bash, &tools.Call{Args: rawArgs(t, args), Env: l.env, Resolved: r})
	if !res.IsError || !strings.Contains(text(res), "Not run") {
		t.Errorf("after the swap: %s", text(res))
	}
	if _, err := os.Lstat(filepath.Join(l.outside, "y.txt")); err == nil {
		t.Error("outside/y.txt was written")
	}
}

// Target, the path a call's announcement shows, is Resolve's Path for a
// call naming a file, and "" otherwise.
func TestTargetIsResolvedPath(t *testing.T) {
	env := &tools.Env{Cwd: "/w", Home: "/h"}
	for _, c := range []struct{ tool, args, want string }{
		{"read", `{"path":"a/../b.go"}`, "/w/b.go"},
		{"write", `{"path":"~/n.txt","content":"x"}`, "/h/n.txt"},
		{"edit", `{"path":"/abs/x"}`, "/abs/x"},
		{"grep", `{"pattern":"p","path":"src"}`, "/w/src"},
		{"ls", `{}`, ""},
		{"glob", `{"pattern":"*"}`, ""},
		{"bash", `{"command":"cat a"}`, ""},
		{"read", `not json`, ""},
	} {
		args := json.RawMessage(c.args)
		got := env.Target(c.tool, args)
		if got != c.want {
			t.Errorf("Target(%s, %s) = %q, want %q", c.tool, c.args, got, c.want)
		}
		if r := tools.Resolve(c.tool, args, env); got != "" && r.Path != got {
			t.Errorf("Target(%s, %s) = %q, Resolve's Path %q", c.tool, c.args, got, r.Path)
		}
	}
}

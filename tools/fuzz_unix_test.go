//go:build unix

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

var fuzzTools = []string{"read", "grep", "glob", "ls", "edit", "write"}

// FuzzToolPaths feeds random paths through the real file tools in a
// project full of traps: FIFOs, links to devices, to /proc/self/fd, out of
// the project, loops. Properties: every call returns promptly (no open
// blocks, abort ends it), nothing panics, and a write or edit judged
// inside the project changes nothing outside it. Writes the verdict would
// judge outside the project are not executed (as a person who never
// approves); reads run for the project, /dev and /proc/self.
func FuzzToolPaths(f *testing.F) {
	for _, s := range []struct {
		tool uint8
		path string
	}{
		{0, "fifo"}, {0, "/dev/zero"}, {0, "/dev/stdin"}, {0, "/proc/self/fd/1"}, {0, "zero"}, {0, "stdin"},
		{1, "/dev/zero"}, {1, "fifo"}, {1, "."}, {1, "dir"}, {2, "**"}, {3, "fifo"}, {3, "loop1"},
		{4, "fifo"}, {4, "zero"}, {4, "a.txt"}, {5, "linkdir/x"}, {5, "dir/../linkdir/x"}, {5, "fifo"},
		{5, "inner/../../outside/x"}, {5, "new/deep/file"}, {0, "innerlink/../a.txt"}, {0, "/proc/self/environ"},
	} {
		f.Add(s.tool, s.path, "content")
	}
	f.Fuzz(func(t *testing.T, tool uint8, p, content string) {
		if strings.IndexByte(p, 0) >= 0 || len(p) > 4096 {
			return
		}
		root := t.TempDir()
		work, outside := filepath.Join(root, "work"), filepath.Join(root, "outside")
		for _, d := range []string{filepath.Join(work, "dir", "inner"), outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, work, "a.txt", "a\nneedle\n")
		writeFile(t, work, "dir/b.txt", "needle\n")
		for _, fifo := range []string{"fifo", "dir/pipe", "dir/.gitignore"} {
			if err := syscall.Mkfifo(filepath.Join(work, fifo), 0o644); err != nil {
				t.Skip(err)
			}
		}
		for name, target := range map[string]string{
			"zero": "/dev/zero", "stdin": "/proc/self/fd/0", "linkdir": outside, "innerlink": "dir/inner",
			"loop1": "loop2", "loop2": "loop1", "dir/up": "..",
		} {
			if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
				t.Fatal(err)
			}
		}
		env := &tools.Env{Cwd: work, Home: filepath.Join(root, "home"), OutputDir: filepath.Join(root, "out"), Reads: tools.NewReadTracker()}
		name := fuzzTools[int(tool)%len(fuzzTools)]
		args := map[string]any{"path": p}
		switch name {
		case "grep":
			args["pattern"] = "needle"
		case "glob":
			args = map[string]any{"pattern": p}
		case "write":
			args["content"] = content
		case "edit":
			args["edits"] = []map[string]string{{"oldText": "needle", "newText": content + "x"}}
		}
		raw := rawArgs(t, args)
		r := tools.Resolve(name, raw, env)
		inside := r.Err == nil && (r.Real == work || strings.HasPrefix(r.Real, work+"/"))
		switch {
		case name == "write" || name == "edit":
			if !inside {
				return // the verdict would ask; nobody approves
			}
			env.Reads.Mark(r.Real)
		case name == "glob":
		case !inside && !strings.HasPrefix(r.Real, "/dev/") && !strings.HasPrefix(r.Real, "/proc/self/") && !strings.HasPrefix(r.Real, "/proc/"+itoa(os.Getpid())+"/"):
			return
		}
		tl, _ := registry.Get(name)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		done := make(chan *tools.Result, 1)
		go func() { done <- tools.Execute(ctx, tl, &tools.Call{ID: "f", Args: raw, Env: env, Resolved: r}) }()
		var res *tools.Result
		select {
		case res = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s %q did not return after its context ended", name, p)
		}
		if d, ok := res.Details.(map[string]string); ok && d["panic"] != "" {
			t.Fatalf("%s %q panicked: %s\n%s", name, p, d["panic"], d["stack"])
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Fatalf("%s %q (real %s) changed the outside directory: %s", name, p, r.Real, entries[0].Name())
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

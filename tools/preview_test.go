package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/tools"
)

func preview(t *testing.T, tool tools.Tool, env *tools.Env, args any) *tools.Preview {
	t.Helper()
	pv, ok := tool.(tools.Previewer)
	if !ok {
		t.Fatalf("%s has no preview", tool.Decl().Name)
	}
	return pv.Preview(context.Background(), &tools.Call{Args: rawArgs(t, args), Env: env})
}

func TestBashPreviewRmRfBuild(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "build/a.o", "abc")
	writeFile(t, env.Cwd, "build/sub/b.o", "de")
	var gotCmd, gotDir string
	inspect := func(command, cwd string) ([]string, []string) {
		gotCmd, gotDir = command, cwd
		return nil, []string{"build"}
	}
	p := preview(t, tools.NewBash(inspect), env, map[string]any{"command": "rm -rf build"})
	if gotCmd != "rm -rf build" || gotDir != env.Cwd {
		t.Errorf("inspector got %q in %q", gotCmd, gotDir)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"bash","lines":["rm -rf build"],"severity":"warn","affected":[{"path":"build/","exists":true,"files":2,"bytes":5}]}`
	if string(b) != want {
		t.Errorf("preview\n got %s\nwant %s", b, want)
	}
}

func TestBashPreviewSeverity(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "f.txt", "12345678")
	tests := []struct {
		name     string
		inspect  tools.ShellInspector
		args     map[string]any
		severity string
		lines    []string
		affected []string
	}{
		{"no inspector", nil, map[string]any{"command": "make"}, "info", []string{"make"}, nil},
		{"danger words", func(string, string) ([]string, []string) {
			return []string{"force push rewrites remote history"}, nil
		}, map[string]any{"command": "git push --force"}, "danger",
			[]string{"git push --force", "danger: force push rewrites remote history"}, nil},
		{"missing path", func(string, string) ([]string, []string) { return nil, []string{"gone"} },
			map[string]any{"command": "rm gone"}, "info", []string{"rm gone"}, []string{"gone:false"}},
		{"file path relative to the cwd arg", func(string, string) ([]string, []string) { return nil, []string{"../f.txt"} },
			map[string]any{"command": "rm ../f.txt", "cwd": "sub", "background": true}, "warn",
			[]string{"rm ../f.txt", "in sub", "runs in the background"}, []string{"f.txt:true:8"}},
		{"job query", nil, map[string]any{"job": "j2", "action": "stop"}, "info", []string{"job j2: stop"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := preview(t, tools.NewBash(tt.inspect), env, tt.args)
			if p.Kind != "bash" || p.Severity != tt.severity {
				t.Errorf("kind %s severity %s", p.Kind, p.Severity)
			}
			if diff := cmp.Diff(tt.lines, p.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			var aff []string
			for _, a := range p.Affected {
				s := fmt.Sprintf("%s:%v", a.Path, a.Exists)
				if a.Bytes != nil {
					s += fmt.Sprintf(":%d", *a.Bytes)
				}
				aff = append(aff, s)
			}
			if diff := cmp.Diff(tt.affected, aff); diff != "" {
				t.Errorf("affected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBashPreviewBounded(t *testing.T) {
	env := newEnv(t)
	cmd := strings.Repeat("echo line\n", 100) + strings.Repeat("x", 1000)
	p := preview(t, tools.NewBash(nil), env, map[string]any{"command": cmd})
	if len(p.Lines) != 40 || p.Lines[39] != "… 62 more lines" {
		t.Errorf("%d lines, last %q", len(p.Lines), p.Lines[len(p.Lines)-1])
	}
}

func TestWritePreview(t *testing.T) {
	env := newEnv(t)
	write, _ := registry.Get("write")
	p := preview(t, write, env, map[string]any{"path": "new/f.txt", "content": "a\nb\n"})
	want := &tools.Preview{
		Kind:     "write",
		Lines:    []string{"--- /dev/null", "+++ new/f.txt", "@@ -0,0 +1,2 @@", "+a", "+b"},
		Severity: "info",
		Affected: []tools.Affected{{Path: "new/f.txt", Exists: false}},
		Diff:     &tools.FileDiff{Path: realPath(t, env.Cwd, "new/f.txt"), NewText: "a\nb\n"},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}

	writeFile(t, env.Cwd, "old.txt", "one\ntwo\nthree\n")
	p = preview(t, write, env, map[string]any{"path": "old.txt", "content": "one\n2\nthree\n"})
	size := int64(14)
	want = &tools.Preview{
		Kind:     "write",
		Lines:    []string{"--- old.txt", "+++ old.txt", "@@ -1,3 +1,3 @@", " one", "-two", "+2", " three"},
		Severity: "warn",
		Affected: []tools.Affected{{Path: "old.txt", Exists: true, Bytes: &size}},
		Diff:     &tools.FileDiff{Path: realPath(t, env.Cwd, "old.txt"), OldText: ptr("one\ntwo\nthree\n"), NewText: "one\n2\nthree\n"},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("overwrite (-want +got):\n%s", diff)
	}
	if readFile(t, env.Cwd+"/old.txt") != "one\ntwo\nthree\n" {
		t.Error("preview changed the file")
	}

	var big strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&big, "%d\n", i)
	}
	p = preview(t, write, env, map[string]any{"path": "big.txt", "content": big.String()})
	if len(p.Lines) != tools.MaxPreviewLines || p.Lines[len(p.Lines)-1] != "… 304 more lines" {
		t.Errorf("bounded: %d lines, last %q", len(p.Lines), p.Lines[len(p.Lines)-1])
	}
}

func TestEditPreview(t *testing.T) {
	env := newEnv(t)
	edit, _ := registry.Get("edit")
	writeFile(t, env.Cwd, "e.txt", "alpha\nbeta\ngamma\n")
	p := preview(t, edit, env, map[string]any{"path": "e.txt", "edits": []map[string]string{{"oldText": "beta", "newText": "BETA"}}})
	size := int64(17)
	want := &tools.Preview{
		Kind:     "edit",
		Lines:    []string{"--- e.txt", "+++ e.txt", "@@ -1,3 +1,3 @@", " alpha", "-beta", "+BETA", " gamma"},
		Severity: "info",
		Affected: []tools.Affected{{Path: "e.txt", Exists: true, Bytes: &size}},
		Diff:     &tools.FileDiff{Path: realPath(t, env.Cwd, "e.txt"), OldText: ptr("alpha\nbeta\ngamma\n"), NewText: "alpha\nBETA\ngamma\n"},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	p = preview(t, edit, env, map[string]any{"path": "e.txt", "edits": []map[string]string{{"oldText": "delta", "newText": "x"}}})
	if p == nil || !strings.Contains(strings.Join(p.Lines, "\n"), "oldText was not found") {
		t.Errorf("failing edit preview: %+v", p)
	}
	if p := preview(t, edit, env, map[string]any{"path": "nope", "edits": []map[string]string{{"oldText": "a", "newText": "b"}}}); p != nil {
		t.Errorf("missing file: %+v", p)
	}
}

// realPath is where a preview's Diff points: the real absolute path.
func realPath(t *testing.T, dir, rel string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(real, rel)
}

func ptr(s string) *string { return &s }

// A write's or edit's result carries the diff the tool made, the same
// change its preview showed (events carry it to ACP, which reads no file):
// whole texts, the real path, nil where a text is too large or not UTF-8.
func TestResultDiffIsThePreviews(t *testing.T) {
	env := newEnv(t)
	write, _ := registry.Get("write")
	edit, _ := registry.Get("edit")
	writeFile(t, env.Cwd, "real/e.txt", "alpha\nbeta\n")
	if err := os.Symlink("real", filepath.Join(env.Cwd, "link")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, run(t, env, "read", map[string]any{"path": "link/e.txt"}))
	for _, c := range []struct {
		tool tools.Tool
		args map[string]any
		want *tools.FileDiff
	}{
		{write, map[string]any{"path": "n.txt", "content": "new\n"}, &tools.FileDiff{Path: realPath(t, env.Cwd, "n.txt"), NewText: "new\n"}},
		{edit, map[string]any{"path": "link/e.txt", "edits": []map[string]string{{"oldText": "beta", "newText": "BETA"}}},
			&tools.FileDiff{Path: realPath(t, env.Cwd, "real/e.txt"), OldText: ptr("alpha\nbeta\n"), NewText: "alpha\nBETA\n"}},
		{write, map[string]any{"path": "link/e.txt", "content": "whole\n"},
			&tools.FileDiff{Path: realPath(t, env.Cwd, "real/e.txt"), OldText: ptr("alpha\nBETA\n"), NewText: "whole\n"}},
	} {
		p := preview(t, c.tool, env, c.args)
		r := run(t, env, c.tool.Decl().Name, c.args)
		mustOK(t, r)
		if diff := cmp.Diff(c.want, r.Diff); diff != "" {
			t.Errorf("%v: result diff (-want +got):\n%s", c.args, diff)
		}
		if diff := cmp.Diff(p.Diff, r.Diff); diff != "" {
			t.Errorf("%v: the preview showed another change (-preview +result):\n%s", c.args, diff)
		}
	}
	// Too large or not UTF-8: no diff (the call still succeeds).
	writeFile(t, env.Cwd, "bin", "\xff\xfe")
	mustOK(t, run(t, env, "read", map[string]any{"path": "bin"}))
	for _, args := range []map[string]any{
		{"path": "bin", "content": "text"},
		{"path": "big.txt", "content": strings.Repeat("x", 1<<20+1)},
	} {
		if r := run(t, env, "write", args); r.IsError || r.Diff != nil {
			t.Errorf("write %v: error %v, diff %+v", args["path"], r.IsError, r.Diff)
		}
	}
}

package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/tools"
)

// recordChanges installs a BeforeChange hook and returns the paths it saw.
func recordChanges(env *tools.Env) func() []string {
	var (
		mu    sync.Mutex
		paths []string
	)
	env.BeforeChange = func(p string) {
		mu.Lock()
		paths = append(paths, p)
		mu.Unlock()
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

func TestWriteCreatesParents(t *testing.T) {
	env := newEnv(t)
	changes := recordChanges(env)
	r := run(t, env, "write", map[string]any{"path": "a/b/c.txt", "content": "one\ntwo\n"})
	got := mustOK(t, r)
	abs := filepath.Join(env.Cwd, "a", "b", "c.txt")
	if got != "Created a/b/c.txt (8 bytes, 2 lines)." {
		t.Errorf("text %q", got)
	}
	if readFile(t, abs) != "one\ntwo\n" {
		t.Error("content not written")
	}
	if d := r.Details.(tools.WriteDetails); !d.Created || d.Path != "a/b/c.txt" || d.Bytes != 8 {
		t.Errorf("details %+v", d)
	}
	if diff := cmp.Diff([]string{abs}, changes()); diff != "" {
		t.Errorf("BeforeChange (-want +got):\n%s", diff)
	}
	if !env.Reads.Has(abs) {
		t.Error("written file not marked read")
	}
	// The agent wrote it, so it may overwrite it without reading.
	got = mustOK(t, run(t, env, "write", map[string]any{"path": "a/b/c.txt", "content": "three"}))
	if !strings.HasPrefix(got, "Updated a/b/c.txt") {
		t.Errorf("text %q", got)
	}
}

func TestWriteNeedsRead(t *testing.T) {
	env := newEnv(t)
	changes := recordChanges(env)
	p := writeFile(t, env.Cwd, "keep.txt", "precious")
	mustErr(t, run(t, env, "write", map[string]any{"path": "keep.txt", "content": "x"}), "has not been read")
	if readFile(t, p) != "precious" || len(changes()) != 0 {
		t.Fatal("file changed without a read")
	}
	mustOK(t, run(t, env, "read", map[string]any{"path": "keep.txt"}))
	mustOK(t, run(t, env, "write", map[string]any{"path": "keep.txt", "content": "x"}))
	if readFile(t, p) != "x" || len(changes()) != 1 {
		t.Fatal("write after read failed")
	}
	writeFile(t, env.Cwd, "d/x", "")
	mustErr(t, run(t, env, "write", map[string]any{"path": "d", "content": "x"}), "d is a directory")
}

func TestWriteKeepsMode(t *testing.T) {
	env := newEnv(t)
	p := writeFile(t, env.Cwd, "run.sh", "echo")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	env.Reads.Mark(p)
	mustOK(t, run(t, env, "write", map[string]any{"path": "run.sh", "content": "echo hi"}))
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", fi.Mode())
	}
}

type edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

func TestEdit(t *testing.T) {
	const orig = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name       string
		edits      []edit
		replaceAll bool
		want       string // new content; "" = error
		errWant    string
		text       string
	}{
		{
			name:  "multi",
			edits: []edit{{"func a() {\n\treturn 1", "func a() {\n\treturn 2"}, {"func b()", "func bee()"}},
			want:  "func a() {\n\treturn 2\n}\n\nfunc bee() {\n\treturn 1\n}\n",
			text:  "Edited x.go: 2 edits, 2 replacements (+2 -2 lines).",
		},
		{
			name:  "edits see the original, not each other's result",
			edits: []edit{{"func a", "func b"}, {"func b", "func c"}},
			want:  "func b() {\n\treturn 1\n}\n\nfunc c() {\n\treturn 1\n}\n",
		},
		{
			name:       "replaceAll",
			edits:      []edit{{"return 1", "return 0"}},
			replaceAll: true,
			want:       strings.ReplaceAll(orig, "return 1", "return 0"),
			text:       "Edited x.go: 1 edit, 2 replacements (+2 -2 lines).",
		},
		{name: "not unique", edits: []edit{{"return 1", "return 0"}}, errWant: "occurs 2 times in x.go (at lines 2, 6)"},
		{name: "not found", edits: []edit{{"func a", "func z"}, {"return 3", "x"}}, errWant: "edits[1]: oldText was not found in x.go"},
		{name: "overlap", edits: []edit{{"func a() {", "A"}, {"() {\n\treturn 1\n}\n\nfunc b", "B"}}, errWant: "edits[0] and edits[1] overlap"},
		{name: "same range twice", edits: []edit{{"func b", "x"}, {"func b", "y"}}, errWant: "overlap"},
		{name: "empty oldText", edits: []edit{{"", "x"}}, errWant: "edits[0]: oldText is empty"},
		{name: "no-op", edits: []edit{{"func a", "func a"}}, errWant: "identical"},
		{name: "no edits", edits: []edit{}, errWant: "edits is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			changes := recordChanges(env)
			p := writeFile(t, env.Cwd, "x.go", orig)
			env.Reads.Mark(p)
			r := run(t, env, "edit", map[string]any{"path": "x.go", "edits": tt.edits, "replaceAll": tt.replaceAll})
			if tt.want == "" {
				msg := mustErr(t, r, tt.errWant)
				contains(t, msg, "No edit was applied")
				if readFile(t, p) != orig || len(changes()) != 0 {
					t.Fatal("failed edit changed the file")
				}
				return
			}
			got := mustOK(t, r)
			if tt.text != "" && got != tt.text {
				t.Errorf("text %q, want %q", got, tt.text)
			}
			if diff := cmp.Diff(tt.want, readFile(t, p)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if len(changes()) != 1 {
				t.Errorf("BeforeChange calls: %v", changes())
			}
			d := r.Details.(tools.EditDetails)
			if !strings.HasPrefix(d.Diff, "--- x.go\n+++ x.go\n@@") {
				t.Errorf("diff %q", d.Diff)
			}
		})
	}
}

func TestEditNeedsReadAndFile(t *testing.T) {
	env := newEnv(t)
	p := writeFile(t, env.Cwd, "x.txt", "hello")
	mustErr(t, run(t, env, "edit", map[string]any{"path": "x.txt", "edits": []edit{{"hello", "bye"}}}), "has not been read")
	if readFile(t, p) != "hello" {
		t.Fatal("changed")
	}
	mustErr(t, run(t, env, "edit", map[string]any{"path": "nope.txt", "edits": []edit{{"a", "b"}}}), "File not found: nope.txt")
}

func TestEditCRLF(t *testing.T) {
	env := newEnv(t)
	p := writeFile(t, env.Cwd, "w.txt", "one\r\ntwo\r\nthree\r\n")
	env.Reads.Mark(p)
	mustOK(t, run(t, env, "edit", map[string]any{"path": "w.txt", "edits": []edit{{"one\ntwo", "1\n2"}}}))
	if got := readFile(t, p); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("got %q", got)
	}
}

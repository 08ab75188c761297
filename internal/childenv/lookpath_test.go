//go:build unix

package childenv_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// plant writes an executable dir/name that leaves marker/name and exits 0.
func plant(t *testing.T, dir, name, marker string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ntouch '" + filepath.Join(marker, name) + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The project's PATH directories (absolute, relative, through a link
// either way) hold a planted program; ama-rpc's own lookup never picks
// it, and picks the one in a directory outside the project instead.
func TestLookPathSkipsProjectDirs(t *testing.T) {
	root := t.TempDir()
	proj, sys, marks := filepath.Join(root, "proj"), filepath.Join(root, "sys"), filepath.Join(root, "marks")
	for _, d := range []string{proj, sys, marks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{".venv/bin", "node_modules/.bin", "bin"} {
		plant(t, filepath.Join(proj, d), "tool", marks)
	}
	plant(t, sys, "tool", marks)
	// A link outside the project that leads into it, and a link inside
	// the project that leads out (resolved: allowed, but named by its
	// real directory).
	if err := os.Symlink(filepath.Join(proj, "bin"), filepath.Join(root, "into")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sys, filepath.Join(proj, "out")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj) // relative entries name the project, as in the real process
	sep := string(os.PathListSeparator)
	for _, tc := range []struct {
		name, path string
		want       string // "" : not found
	}{
		{"absolute inside", filepath.Join(proj, ".venv/bin") + sep + sys, filepath.Join(sys, "tool")},
		{"relative", "bin" + sep + "." + sep + "node_modules/.bin" + sep + sys, filepath.Join(sys, "tool")},
		{"link into the project", filepath.Join(root, "into") + sep + sys, filepath.Join(sys, "tool")},
		{"dotdot into the project", filepath.Join(sys, "..", "proj", "bin") + sep + sys, filepath.Join(sys, "tool")},
		{"link out of the project", filepath.Join(proj, "out"), ""},
		{"only the project", filepath.Join(proj, "bin") + sep + "bin", ""},
		{"outside only", sys, filepath.Join(sys, "tool")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childenv.LookPathIn(tc.path, "tool", proj)
			if tc.want == "" {
				if err == nil || !errors.Is(err, exec.ErrNotFound) {
					t.Fatalf("found %q (%v), want not found", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// A name with a slash is the configuration's explicit choice.
	if got, err := childenv.LookPathIn(sys, "./bin/tool", proj); err != nil || got != "./bin/tool" {
		t.Errorf("explicit path: %q, %v", got, err)
	}
	// And the side effect: ama-rpc's own git with the project's bin
	// first on PATH runs no planted git.
	plant(t, filepath.Join(proj, "bin"), "git", marks)
	t.Setenv("PATH", filepath.Join(proj, "bin")+sep+"bin"+sep+os.Getenv("PATH"))
	_ = childenv.Git(context.Background(), proj, "--version").Run()
	if _, err := os.Stat(filepath.Join(marks, "git")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("ama-rpc's own git ran the git planted in the project's PATH directory")
	}
	ents, _ := os.ReadDir(marks)
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("planted programs ran: %s", strings.Join(names, ", "))
	}
}

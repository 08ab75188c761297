//go:build unix

package mcpclient

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server configured by name ("command": "mcpserver", as "npx" would be)
// is found on PATH. The project's .venv/bin is first on PATH and holds a
// planted mcpserver (a sandboxed command could have written it): the
// server that starts is the one outside the project, and the planted
// program leaves no marker.
func TestPlantedServerOnPathNotRun(t *testing.T) {
	proj, sys, marks := t.TempDir(), t.TempDir(), t.TempDir()
	venv := filepath.Join(proj, ".venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(marks, "planted")
	if err := os.WriteFile(filepath.Join(venv, "mcpserver"), []byte("#!/bin/sh\ntouch '"+marker+"'\nexec '"+serverBin+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(serverBin, filepath.Join(sys, "mcpserver")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", strings.Join([]string{venv, sys, os.Getenv("PATH")}, string(os.PathListSeparator)))
	srv := stdioServer("t")
	srv.Command = "mcpserver"
	s := newTestSet(t, []Server{srv}, Options{Cwd: proj})
	ready(t, s)
	if _, ok := s.Registry().Get("mcp__t__echo"); !ok {
		t.Fatal("everyday: the server did not start")
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("the mcpserver planted in the project's .venv/bin ran")
	}
}

//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
)

// launcherDir holds a link to this test binary and, next to it, the small
// launcher (ama-rpc-sandbox), as `make build` installs them: a Runtime
// whose self is selfExe's path starts the small launcher per command, as
// in production. Without it every command re-executed this -race test
// binary (a race runtime's start per command, most of the package's
// CPU). TestCanaries keeps the fallback, re-executing the test binary.
var launcherDir string

func TestMain(m *testing.M) {
	if os.Getenv(ttyHelperEnv) != "" {
		os.Exit(ttyHelper())
	}
	dir, err := os.MkdirTemp("", "sandbox-test-")
	if err == nil {
		if err = smallLauncher(dir); err != nil {
			os.RemoveAll(dir)
			fmt.Fprintln(os.Stderr, "sandbox tests re-execute the test binary as the launcher:", err)
		} else {
			launcherDir = dir
		}
	}
	code := m.Run()
	if launcherDir != "" {
		os.RemoveAll(launcherDir)
	}
	os.Exit(code)
}

// smallLauncher puts the test binary (a link) and ama-rpc-sandbox in dir:
// the one make test builds next to AMA_TEST_BIN, or a build of its own.
func smallLauncher(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.Symlink(self, filepath.Join(dir, filepath.Base(self))); err != nil {
		return err
	}
	dst := filepath.Join(dir, sandbox.LauncherName)
	if b := os.Getenv("AMA_TEST_BIN"); b != "" {
		built := filepath.Join(filepath.Dir(b), sandbox.LauncherName)
		if _, err := os.Stat(built); err == nil {
			return os.Symlink(built, dst)
		}
	}
	if out, err := exec.Command("go", "build", "-o", dst, "../cmd/ama-rpc-sandbox").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// selfExe is the executable a test's Runtime re-executes (the test binary,
// through a link lying next to the small launcher when it was built).
func selfExe(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if launcherDir != "" {
		return filepath.Join(launcherDir, filepath.Base(self))
	}
	return self
}

// Package testbin gives the tests that drive the real process (golden,
// printmode, test/robust, test/acp) their ama-rpc binary: make test's one
// build, named in AMA_TEST_BIN, or a build of their own when run alone.
//
// Concurrency: Path holds no state; callers build once (TestMain or a
// sync.Once) and share the path.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Path returns AMA_TEST_BIN when it is set; otherwise it builds the
// ama-rpc command at pkg (a path such as "../cmd/ama-rpc", relative to
// the test's directory) into dir and returns that binary.
func Path(dir, pkg string) (string, error) {
	if b := os.Getenv("AMA_TEST_BIN"); b != "" {
		return b, nil
	}
	bin := filepath.Join(dir, "ama-rpc")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

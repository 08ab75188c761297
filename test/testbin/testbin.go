// Package testbin gives the tests that drive the real process (golden,
// printmode, test/robust, test/acp) their ama-rpc binary: make test's one
// build, named in AMA_TEST_BIN, or a build of their own when run alone;
// and the test MCP server (mcpclient, test/robust, test/acp) the same way,
// from next to AMA_TEST_BIN (one link per run instead of one per package).
//
// Concurrency: Path and Tool hold no state; callers build once (TestMain
// or a sync.Once) and share the path.
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
	return build(filepath.Join(dir, "ama-rpc"), pkg)
}

// Tool returns the binary called name that make test builds next to
// AMA_TEST_BIN when it is there; otherwise it builds the command at pkg
// (relative to the test's directory) into dir under that name.
func Tool(dir, name, pkg string) (string, error) {
	if b := os.Getenv("AMA_TEST_BIN"); b != "" {
		built := filepath.Join(filepath.Dir(b), name)
		if _, err := os.Stat(built); err == nil {
			return built, nil
		}
	}
	return build(filepath.Join(dir, name), pkg)
}

func build(bin, pkg string) (string, error) {
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

package sandbox_test

import (
	"os"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
)

// TestMain lets the test binary act as the launcher: Wrap re-executes
// os.Executable(), which is this binary, with LauncherArg.
func TestMain(m *testing.M) {
	sandbox.MaybeLaunch()
	os.Exit(m.Run())
}

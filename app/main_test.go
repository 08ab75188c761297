package app_test

import (
	"os"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
)

// TestMain lets this test binary act as the sandbox launcher: the server
// under test re-executes os.Executable(), which is this binary.
func TestMain(m *testing.M) {
	sandbox.MaybeLaunch()
	os.Exit(m.Run())
}

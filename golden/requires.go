package golden

import (
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/sandbox"
)

// sandboxStatus probes the kernel once per test binary.
var sandboxStatus = sync.OnceValue(func() sandbox.Status {
	self, _ := os.Executable()
	return sandbox.New(sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true}, self, sandbox.Dirs{Temp: os.TempDir()}).Status()
})

// SkipUnlessAvailable skips a case whose Requires the machine lacks. The
// "node" fixtures load a host adapter. The "sandbox" fixtures pin the full mechanism: Landlock with user, mount and
// network namespaces (error texts differ without them).
func SkipUnlessAvailable(t testing.TB, requires []string) {
	t.Helper()
	if slices.Contains(requires, "node") {
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("needs Node.js (host adapters)")
		}
	}
	if slices.Contains(requires, "sandbox") {
		if st := sandboxStatus(); !st.Available || !st.Namespaces {
			t.Skipf("needs the Landlock sandbox: %s", st.Detail)
		}
	}
}

// SandboxAvailable reports whether sandboxed fixtures can run here.
func SandboxAvailable() (bool, string) {
	st := sandboxStatus()
	return st.Available && st.NetworkIsolation, st.Detail
}

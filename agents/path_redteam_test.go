//go:build unix

package agents

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A claude planted in the project's .venv/bin, first on PATH (a sandboxed
// command may write there): neither the --help probe of the driver nor
// the run starts it; the claude outside the project does the work.
func TestExternalAgentNotFoundInProject(t *testing.T) {
	rec := installFakeCLI(t, "claude", "claude", "tool") // the real one, outside
	r := externalRig(t, AgentClaude, false)
	venv := filepath.Join(r.dir, "work", ".venv", "bin")
	planted := filepath.Join(r.dir, "planted-ran")
	fakeBin(t, venv, "claude", "touch '"+planted+"'")
	t.Setenv("PATH", venv+string(os.PathListSeparator)+os.Getenv("PATH"))
	res := runTask(t, r, AgentClaude)
	if _, err := os.Stat(planted); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("ama-rpc ran the claude planted in the project's .venv/bin")
	}
	if res.Status != StatusCompleted || !markerExists(rec) {
		t.Fatalf("everyday: the claude outside the project did not do the work: %+v", res)
	}
}

//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestGitConfigRiskUnreadOrTooLarge: what is not read is judged risky: a
// configuration beyond the size read (a diff.external after a megabyte
// of comments) and one that cannot be opened as a regular file (a FIFO
// another command writes to, which git reads).
func TestGitConfigRiskUnreadOrTooLarge(t *testing.T) {
	root := t.TempDir()
	gitDir := filepath.Join(root, ".git")
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(gitDir, "config")
	big := strings.Repeat("# padding\n", maxGitConfigBytes/10+1) + "[diff]\n\texternal = x\n"
	if err := os.WriteFile(cfg, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := gitConfigRisk(root); got == "" {
		t.Error("a diff.external beyond the part read was not judged")
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	if got, _ := gitConfigRisk(root); got == "" {
		t.Error("a FIFO configuration was not judged")
	}
}

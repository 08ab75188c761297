package tools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

// The resolver runs once per call before the verdict: lstat per path
// component of every target and path-like argument.
func BenchmarkResolve(b *testing.B) {
	root := b.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(work, "src", "pkg"), 0o755); err != nil {
		b.Fatal(err)
	}
	env := &tools.Env{Cwd: work, Home: root}
	for _, c := range []struct {
		name, tool string
		args       any
	}{
		{"bash_grep", "bash", map[string]any{"command": "grep -rn TODO src | head -20"}},
		{"bash_redirect_cwd", "bash", map[string]any{"command": "go test ./... 2>&1 > out.log", "cwd": "src"}},
		{"write", "write", map[string]any{"path": "src/pkg/new.go", "content": "package pkg\n"}},
	} {
		raw, _ := json.Marshal(c.args)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tools.Resolve(c.tool, raw, env)
			}
		})
	}
}

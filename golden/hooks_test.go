package golden_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The side effects behind the hook goldens: a call a PreToolUse hook
// denied (by timing out) never ran, the updatedInput path is the one
// written, the untrusted project's file was named in a warning.
func TestHookSideEffects(t *testing.T) {
	t.Run("timeout deny runs nothing", func(t *testing.T) {
		r, _, _ := golden.RunCase(t, "../test/fixtures/rpc/hooks-timeout")
		if _, err := os.Stat(filepath.Join(r.Work, "marker")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the denied bash call ran: %v", err)
		}
	})
	t.Run("updatedInput decides the path", func(t *testing.T) {
		r, _, _ := golden.RunCase(t, "../test/fixtures/rpc/hooks-updated-input")
		if b, err := os.ReadFile(filepath.Join(r.Work, "b.txt")); err != nil || string(b) != "from hook" {
			t.Fatalf("b.txt: %q %v", b, err)
		}
		for _, name := range []string{"a.txt", "d.txt", "x.txt", "y.txt"} {
			if _, err := os.Stat(filepath.Join(r.Work, name)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s exists", name)
			}
		}
		if _, err := os.Stat(filepath.Join(r.Work, "c.txt")); err != nil {
			t.Fatal("two updatedInput: the model's c.txt must be written")
		}
	})
	t.Run("untrusted project warning", func(t *testing.T) {
		r, _, _ := golden.RunCase(t, "../test/fixtures/rpc/hooks-untrusted")
		if !strings.Contains(r.Stderr(), filepath.Join(r.Work, ".ama", "hooks.json")) {
			t.Fatalf("no warning naming the skipped file:\n%s", r.Stderr())
		}
	})
	t.Run("session start block", func(t *testing.T) {
		r, _, _ := golden.RunCase(t, "../test/fixtures/rpc/hooks-session-start-block")
		if !strings.Contains(r.Stderr(), "locked") {
			t.Fatalf("stderr:\n%s", r.Stderr())
		}
	})
	t.Run("session switch context", func(t *testing.T) {
		r, _, _ := golden.RunCase(t, "../test/fixtures/rpc/hooks-session-switch")
		files, _ := filepath.Glob(filepath.Join(r.Home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
		if len(files) != 1 {
			t.Fatalf("session files: %v", files)
		}
		b, _ := os.ReadFile(files[0])
		if !strings.Contains(string(b), `"hooks":"fresh session"`) {
			t.Fatalf("the new session's system prompt lacks the SessionStart context:\n%s", b)
		}
	})
}

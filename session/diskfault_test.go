package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/tools"
)

// Issue 36: a turn whose file backup could not be saved (here the
// checkpoint store's directory is a regular file, as unwritable as a full
// disk even for root) says so, and its rewind point has no checkpoint, so
// a rewind never silently restores nothing.
func TestCheckpointSaveFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cwd := t.TempDir()
		file := filepath.Join(cwd, "f.txt")
		if err := os.WriteFile(file, []byte("original"), 0o600); err != nil {
			t.Fatal(err)
		}
		blocked := filepath.Join(t.TempDir(), "file-history")
		if err := os.WriteFile(blocked, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		script := &fake.Script{Responses: []fake.Response{toolCall("put", `{"text":"changed"}`), reply("done")}}
		e := newEnv(t, setup{script: script, cwd: cwd, mode: "full-auto", tools: []tools.Tool{fileTool{}},
			deps: func(d *Deps) { d.Checkpoints = checkpoint.NewStore(blocked, 0) }})
		defer e.s.Close()
		e.runPrompt(t, "change it")
		if b, _ := os.ReadFile(file); string(b) != "changed" {
			t.Fatalf("the tool did not write: %q", b)
		}
		pts, _ := e.s.RewindPoints()
		if len(pts) != 1 || pts[0].HasCheckpoint {
			t.Fatalf("rewind points %+v, want one without a checkpoint", pts)
		}
		said := false
		for _, ev := range e.rec.all() {
			if n, ok := ev.(events.Notification); ok && n.Err != nil && strings.Contains(n.Message, file) {
				said = true
			}
		}
		if !said {
			t.Error("no notification named the file whose backup failed")
		}
	})
}

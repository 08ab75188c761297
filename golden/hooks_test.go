package golden_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The side effects behind the hook goldens, checked on their one play
// (TestFixtures/<fixture>/<check>): a call a PreToolUse hook denied (by
// timing out) never ran, the updatedInput path is the one written, the
// untrusted project's file was named in a warning.
var (
	_ = afterFixture("rpc/hooks-timeout", "timeout deny runs nothing", func(t *testing.T, r *golden.Run, _ *golden.Case) {
		if _, err := os.Stat(filepath.Join(r.Work, "marker")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the denied bash call ran: %v", err)
		}
	})
	_ = afterFixture("rpc/hooks-updated-input", "updatedInput decides the path", func(t *testing.T, r *golden.Run, _ *golden.Case) {
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
	_ = afterFixture("rpc/hooks-untrusted", "untrusted project warning", func(t *testing.T, r *golden.Run, _ *golden.Case) {
		if !strings.Contains(r.Stderr(), filepath.Join(r.Work, ".ama", "hooks.json")) {
			t.Fatalf("no warning naming the skipped file:\n%s", r.Stderr())
		}
	})
	_ = afterFixture("rpc/hooks-session-start-block", "session start block", func(t *testing.T, r *golden.Run, _ *golden.Case) {
		if !strings.Contains(r.Stderr(), "locked") {
			t.Fatalf("stderr:\n%s", r.Stderr())
		}
	})
	_ = afterFixture("rpc/hooks-session-switch", "session switch context", func(t *testing.T, r *golden.Run, _ *golden.Case) {
		files, _ := filepath.Glob(filepath.Join(r.Home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
		if len(files) != 1 {
			t.Fatalf("session files: %v", files)
		}
		b, _ := os.ReadFile(files[0])
		if !strings.Contains(string(b), `"hooks":"fresh session"`) {
			t.Fatalf("the new session's system prompt lacks the SessionStart context:\n%s", b)
		}
	})
	_ = afterFixture("rpc/hooks-subagent", "sub-agent hooks", func(t *testing.T, r *golden.Run, _ *golden.Case) {
		read := func(name string) []map[string]any {
			b, _ := os.ReadFile(filepath.Join(r.Work, name))
			var out []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("%s: %q: %v", name, l, err)
				}
				out = append(out, m)
			}
			return out
		}
		// The child's write went through the parent's PreToolUse hooks:
		// denied, nothing written, input with depth 1 and the child's id.
		if _, err := os.Stat(filepath.Join(r.Work, "note.txt")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the child's denied write ran: %v", err)
		}
		pre, stop, sub := read("pretool.jsonl"), read("stop.jsonl"), read("substop.jsonl")
		if len(pre) != 1 || pre[0]["depth"] != 1.0 || pre[0]["toolName"] != "write" {
			t.Fatalf("PreToolUse inputs: %v", pre)
		}
		// Stop fired once, for the parent (depth 0); SubagentStop twice for
		// the child: the block continued it once, then stopHookActive.
		if len(stop) != 1 || stop[0]["depth"] != 0.0 || stop[0]["hookEventName"] != "Stop" {
			t.Fatalf("Stop inputs: %v", stop)
		}
		if len(sub) != 2 || sub[0]["stopHookActive"] != false || sub[1]["stopHookActive"] != true {
			t.Fatalf("SubagentStop inputs: %v", sub)
		}
		child := pre[0]["sessionId"]
		for _, m := range sub {
			if m["depth"] != 1.0 || m["hookEventName"] != "SubagentStop" || m["sessionId"] != child {
				t.Fatalf("SubagentStop input: %v", m)
			}
		}
		if child == stop[0]["sessionId"] || child == "" {
			t.Fatalf("child hooks report the parent's session id %v", child)
		}
		if sub[1]["lastAssistantText"] != "checked again: still blocked" {
			t.Fatalf("lastAssistantText: %v", sub[1])
		}
	})
)

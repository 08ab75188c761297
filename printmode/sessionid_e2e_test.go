package printmode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --session-id id is ama's "the session with this id, else a new one with
// it": a second run with the same id continues the first session's file
// (the model sees the history) instead of writing a second file with the
// same id, and the flag excludes the other ways of naming the session.
func TestSessionIDReopens(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const id = "5f0c1a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	first := resultObject(t, e.run(nil, "-p", "one", "--model", "fake/echo", "--output-format", "json", "--session-id", id))
	second := resultObject(t, e.run(nil, "-p", "two", "--model", "fake/echo", "--output-format", "json", "--session-id", id))
	if first["sessionId"] != id || second["sessionId"] != id || second["sessionFile"] != first["sessionFile"] {
		t.Fatalf("first %v %v, second %v %v", first["sessionId"], first["sessionFile"], second["sessionId"], second["sessionFile"])
	}
	files, _ := filepath.Glob(filepath.Join(e.home, ".local", "share", "ama", "sessions", "*", "*"+id+"*.jsonl"))
	if len(files) != 1 {
		t.Errorf("session files with the id: %v", files)
	}
	b, _ := os.ReadFile(first["sessionFile"].(string))
	if !strings.Contains(string(b), `"content":"one"`) || !strings.Contains(string(b), `"content":"two"`) {
		t.Errorf("the session file lacks a prompt:\n%s", tail(string(b)))
	}
	rec, _ := os.ReadFile(e.vars["AMA_FAKE_RECORD"])
	lines := strings.Split(strings.TrimSpace(string(rec)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"one"`) {
		t.Errorf("the second run's request lacks the history: %s", tail(last))
	}
	for _, args := range [][]string{{"--resume", id}, {"-c"}, {"--session", "x.jsonl"}} {
		r := e.run(nil, append([]string{"-p", "x", "--model", "fake/echo", "--session-id", id}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "--session-id") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	other := filepath.Join(e.work, "sub")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := e.run(nil, "-p", "x", "--model", "fake/echo", "--session-id", id, "--cwd", other); r.code != 5 {
		t.Errorf("the id of another directory's session: exit %d %s", r.code, r.stderr)
	}
	files, _ = filepath.Glob(filepath.Join(e.home, ".local", "share", "ama", "sessions", "*", "*"+id+"*.jsonl"))
	if len(files) != 1 {
		t.Errorf("session files with the id after the refusals: %v", files)
	}
}

package printmode_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --fork id (or an id prefix) starts the run on a copy of that session up
// to its leaf: a new file whose header names the source as its
// parentSession, the history carried over, the source untouched.
func TestFork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := resultObject(t, e.run(nil, "-p", "one", "--model", "fake/echo", "--output-format", "json"))
	src := resultObject(t, e.run(nil, "-p", "two", "--model", "fake/echo", "--output-format", "json", "-c"))
	srcFile, id := src["sessionFile"].(string), src["sessionId"].(string)
	if first["sessionId"] != id {
		t.Fatalf("-c opened %v, not %v", id, first["sessionId"])
	}
	before, err := os.ReadFile(srcFile)
	if err != nil {
		t.Fatal(err)
	}
	r := e.run(nil, "-p", "three", "--fork", id[:8], "--model", "fake/echo", "--output-format", "json")
	fork := resultObject(t, r)
	if r.code != 0 || fork["text"] != "three" || fork["sessionId"] == id || fork["sessionFile"] == srcFile {
		t.Fatalf("fork: exit %d text %v id %v file %v; stderr %s", r.code, fork["text"], fork["sessionId"], fork["sessionFile"], r.stderr)
	}
	b, err := os.ReadFile(fork["sessionFile"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		ID            string `json:"id"`
		ParentSession string `json:"parentSession"`
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if err := json.Unmarshal(line, &head); err != nil || head.ID != fork["sessionId"] || head.ParentSession != srcFile {
		t.Errorf("fork header %s (%v)", line, err)
	}
	for _, want := range []string{`"content":"one"`, `"content":"two"`, `"content":"three"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the fork lacks %s", want)
		}
	}
	if after, _ := os.ReadFile(srcFile); !bytes.Equal(before, after) {
		t.Errorf("the source session changed")
	}
	if _, err := os.Stat(srcFile + ".lock"); err == nil {
		t.Errorf("the source's lock is still there")
	}
	// The model saw the copied history: the last request holds the
	// three prompts.
	rec, _ := os.ReadFile(e.vars["AMA_FAKE_RECORD"])
	lines := strings.Split(strings.TrimSpace(string(rec)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"one"`) || !strings.Contains(last, `"two"`) {
		t.Errorf("the forked run's request lacks the history: %s", tail(last))
	}

	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--fork", id, "-c"}, 2},
		{[]string{"--fork", id, "--resume", id}, 2},
		{[]string{"--fork", id, "--session-id", "5f0c1a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}, 2},
		{[]string{"--fork", id, "--no-session"}, 2},
		{[]string{"--fork="}, 2},
		{[]string{"--fork", "nosuch"}, 5},
		{[]string{"--fork", "*"}, 5},
	} {
		r := e.run(nil, append([]string{"-p", "x", "--model", "fake/echo"}, c.args...)...)
		if r.code != c.code || r.stdout != "" || !strings.Contains(r.stderr, "fork") {
			t.Errorf("%v: exit %d (want %d) stdout %q stderr %q", c.args, r.code, c.code, r.stdout, r.stderr)
		}
	}
	other := filepath.Join(e.work, "sub")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := e.run(nil, "-p", "x", "--model", "fake/echo", "--fork", id, "--cwd", other); r.code != 5 {
		t.Errorf("a session of another directory: exit %d %s", r.code, r.stderr)
	}
	if r := e.run(nil, "--mode", "acp", "--fork", id, "--model", "fake/echo"); r.code != 2 {
		t.Errorf("--mode acp --fork: exit %d %s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
	if len(files) != 2 {
		t.Errorf("session files after the refused forks: %v", files)
	}
	// The rpc server starts on a fork too, announced with reason fork.
	r = e.run(nil, "--fork", id, "--model", "fake/echo")
	objs := jsonLines(t, r.stdout)
	if r.code != 0 || len(objs) < 2 || objs[1]["type"] != "session_start" || objs[1]["reason"] != "fork" || objs[1]["sessionId"] == id {
		t.Errorf("rpc --fork: exit %d lines %v stderr %s", r.code, objs, r.stderr)
	}
}

// --from in a real process: the picked message's image reaches the model
// request, and a prefix of the id is enough.
func TestFromImage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82"
	e.file("shot.png", png)
	src := resultObject(t, e.run(nil, "-p", "what is in", "@shot.png", "--model", "fake/echo", "--output-format", "json"))
	id := src["sessionId"].(string)
	if err := os.Remove(filepath.Join(e.work, "shot.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(e.vars["AMA_FAKE_RECORD"]); err != nil {
		t.Fatal(err)
	}
	r := e.run(strings.NewReader("from stdin"), "-p", "--from", id[:6], "and", "more", "--model", "fake/echo")
	if r.code != 0 || r.stdout != "what is in @shot.png\n\nand more\n\nfrom stdin\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	rec, _ := os.ReadFile(e.vars["AMA_FAKE_RECORD"])
	if !bytes.Contains(rec, []byte(`"image/png"`)) {
		t.Errorf("the request carries no image: %s", tail(string(rec)))
	}
	// --from counts as prompt words: a pipe that never writes is given up
	// after AMA_STDIN_WAIT_MS, not read to its end.
	e.vars["AMA_STDIN_WAIT_MS"] = "50"
	c := e.cmd("-p", "--from", id, "--model", "fake/echo")
	pw, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(time.Minute, func() { _ = c.Process.Kill() })
	defer kill.Stop()
	if err := c.Wait(); err != nil || out.String() != "what is in @shot.png\n" || !strings.Contains(errb.String(), "50 ms") {
		t.Errorf("silent pipe: %v stdout %q stderr %q", err, out.String(), errb.String())
	}
}

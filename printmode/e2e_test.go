package printmode_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/test/testbin"
)

// bin is the ama-rpc binary built once by TestMain: these tests drive the
// real process (flags, stdin, signals, exit codes) with the fake model.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ama-print-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bin, err = testbin.Path(dir, "../cmd/ama-rpc"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's home and project directory.
type env struct {
	t          *testing.T
	home, work string
	vars       map[string]string
}

func newEnv(t *testing.T) *env {
	root := t.TempDir()
	e := &env{t: t, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"), vars: map[string]string{}}
	for _, d := range []string{e.home, e.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["AMA_FAKE_RECORD"] = filepath.Join(root, "record.jsonl")
	return e
}

func (e *env) file(rel, content string) string {
	p := filepath.Join(e.work, rel)
	if strings.HasPrefix(rel, "~/") {
		p = filepath.Join(e.home, rel[2:])
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) script(js string) { e.vars["AMA_FAKE_SCRIPT"] = e.file("../script.json", js) }

func (e *env) cmd(args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Dir = e.work
	c.Env = []string{"HOME=" + e.home, "XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(e.home, ".local", "share"), "PATH=" + os.Getenv("PATH"),
		"AMA_NO_AGENT_PROBE=1", "AMA_NO_SANDBOX_SELFTEST=1", "AMA_LANG=en"}
	for k, v := range e.vars {
		c.Env = append(c.Env, k+"="+v)
	}
	return c
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs ama-rpc to its end with stdin (nil: /dev/null).
func (e *env) run(stdin io.Reader, args ...string) result {
	e.t.Helper()
	c := e.cmd(args...)
	c.Stdin = stdin
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	return result{code: e.exitCode(c.Run()), stdout: out.String(), stderr: errb.String()}
}

// runGated runs ama-rpc to its end like run, and creates the file gate
// (a script's waitFile) once a stderr line contains cue; the process is
// killed if it has not ended in a minute.
func (e *env) runGated(cue, gate string, args ...string) result {
	e.t.Helper()
	c := e.cmd(args...)
	var out bytes.Buffer
	c.Stdout = &out
	stderr, err := c.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	kill := time.AfterFunc(time.Minute, func() { _ = c.Process.Kill() })
	defer kill.Stop()
	var errb strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		errb.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), cue) {
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	return result{code: e.exitCode(c.Wait()), stdout: out.String(), stderr: errb.String()}
}

// exitCode is the exit status of a finished command (Run or Wait's
// error); any other error fails the test.
func (e *env) exitCode(err error) int {
	e.t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return 0
}

// requests counts the model requests the fake recorded.
func (e *env) requests() int {
	b, err := os.ReadFile(e.vars["AMA_FAKE_RECORD"])
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// jsonLines checks that stdout is only JSON lines (valid UTF-8) and
// returns them decoded.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	if out == "" {
		return nil
	}
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout does not end in a newline: %q", tail(out))
	}
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if !utf8.ValidString(l) || json.Unmarshal([]byte(l), &m) != nil {
			t.Fatalf("stdout line %d is not one JSON object: %q", i+1, l)
		}
		objs = append(objs, m)
	}
	return objs
}

// resultObject is the one line of --output-format json.
func resultObject(t *testing.T, r result) map[string]any {
	t.Helper()
	objs := jsonLines(t, r.stdout)
	if len(objs) != 1 || objs[0]["type"] != "result" {
		t.Fatalf("stdout is not one result object: %s\nstderr: %s", tail(r.stdout), r.stderr)
	}
	return objs[0]
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

const (
	bashTouch = `{"responses":[{"steps":[{"toolCall":{"name":"bash","arguments":{"command":"touch marker"}}}],"stopReason":"toolUse"},{"text":"could not"}]}`
	// readTwice's tool replies cost $0.60 each (fake/echo: $2 per million
	// output tokens); noCompaction keeps their tokens from compacting.
	noCompaction = `{"compaction":{"enabled":false}}`
	readTwice    = `{"responses":[
	  {"steps":[{"toolCall":{"name":"read","arguments":{"path":"a.txt"}}}],"stopReason":"toolUse","usage":{"input":10,"output":300000}},
	  {"steps":[{"toolCall":{"name":"read","arguments":{"path":"a.txt","offset":1}}}],"stopReason":"toolUse","usage":{"input":10,"output":300000}},
	  {"text":"read it","usage":{"input":10,"output":1}}]}`
	planReply   = `{"responses":[{"text":"Here it is.\n<proposed_plan>\n# Fix\n1. change a\n2. test it\n</proposed_plan>"}]}`
	writeFile   = `{"responses":[{"steps":[{"toolCall":{"name":"write","arguments":{"path":"out.txt","content":"x"}}}],"stopReason":"toolUse"},{"text":"wrote it"}]}`
	modelError  = `{"responses":[{"error":{"kind":"auth"}}]}`
	denyHookCfg = `{"version":1,"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"echo '{\"decision\":\"deny\",\"reason\":\"no shell in CI\"}'"}]}]}}`
	blockPrompt = `{"version":1,"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo '{\"decision\":\"block\",\"reason\":\"not today\"}'"}]}]}}`
)

// The matrix: every outcome maps to its exit code, in the result object
// and in the process's exit status, and the side effects agree (a denied
// call did not run).
func TestOutcomeMatrix(t *testing.T) {
	cases := []struct {
		name     string
		script   string
		args     []string
		setup    func(e *env)
		code     int
		outcome  string
		requests int // model requests (0: not checked)
		denial   string
		check    func(t *testing.T, e *env, r result, obj map[string]any)
	}{
		{name: "success", script: `{"responses":[{"text":"all good"}]}`, code: 0, outcome: "completed", requests: 1},
		{name: "unattended ask denied", script: bashTouch, code: 7, outcome: "denied", denial: "bash mode unattended",
			check: func(t *testing.T, e *env, r result, obj map[string]any) {
				if _, err := os.Stat(filepath.Join(e.work, "marker")); err == nil {
					t.Error("the denied bash call ran: marker exists")
				}
				if !strings.HasPrefix(r.stderr, "ama: 1 tool call denied: bash ×1 (") {
					t.Errorf("stderr: %q", r.stderr)
				}
			}},
		{name: "deny rule", script: bashTouch, args: []string{"--permission-mode", "full-auto", "--deny", "bash(touch *)"}, code: 7, outcome: "denied", denial: "bash deny-rule denied",
			check: func(t *testing.T, e *env, _ result, _ map[string]any) {
				if _, err := os.Stat(filepath.Join(e.work, "marker")); err == nil {
					t.Error("the denied bash call ran: marker exists")
				}
			}},
		{name: "hook deny", script: bashTouch, args: []string{"--permission-mode", "full-auto"}, setup: func(e *env) { e.file("~/.config/ama/hooks.json", denyHookCfg) },
			code: 7, outcome: "denied", denial: "bash hook denied",
			check: func(t *testing.T, e *env, _ result, _ map[string]any) {
				if _, err := os.Stat(filepath.Join(e.work, "marker")); err == nil {
					t.Error("the hook-denied bash call ran: marker exists")
				}
			}},
		{name: "auto-edit allows write", script: writeFile, args: []string{"--permission-mode", "auto-edit"}, code: 0, outcome: "completed",
			check: func(t *testing.T, e *env, _ result, _ map[string]any) {
				if b, err := os.ReadFile(filepath.Join(e.work, "out.txt")); err != nil || string(b) != "x" {
					t.Errorf("the allowed write did not happen: %q %v", b, err)
				}
			}},
		{name: "max-turns", script: readTwice, args: []string{"--max-turns", "1"}, code: 8, outcome: "limit_reached", requests: 1,
			check: func(t *testing.T, _ *env, _ result, obj map[string]any) {
				l, _ := obj["limitReached"].(map[string]any)
				if l["kind"] != "turns" || l["value"] != 1.0 || l["limit"] != 1.0 || obj["maxTurnsReached"] != true || obj["stopReason"] != "toolUse" {
					t.Errorf("limit: %v maxTurnsReached %v stopReason %v", l, obj["maxTurnsReached"], obj["stopReason"])
				}
			}},
		{name: "max-turns not reached", script: readTwice, args: []string{"--max-turns", "3"}, code: 0, outcome: "completed", requests: 3},
		{name: "max-cost", script: readTwice, args: []string{"--max-cost", "1"}, code: 8, outcome: "limit_reached", requests: 2,
			check: func(t *testing.T, _ *env, r result, obj map[string]any) {
				if l, _ := obj["limitReached"].(map[string]any); l["kind"] != "cost" {
					t.Errorf("limit: %v", l)
				}
				if !strings.Contains(r.stderr, "cost limit $1.00") {
					t.Errorf("stderr: %q", r.stderr)
				}
			}},
		{name: "config limits.maxTurns", script: readTwice, setup: func(e *env) {
			e.file("~/.config/ama/config.json", `{"limits":{"maxTurns":2},"compaction":{"enabled":false}}`)
		},
			code: 8, outcome: "limit_reached", requests: 2},
		{name: "plan pending", script: planReply, args: []string{"--permission-mode", "plan"}, code: 9, outcome: "plan_pending",
			check: func(t *testing.T, _ *env, _ result, obj map[string]any) {
				p, _ := obj["planPending"].(map[string]any)
				if p["version"] != 1.0 || !strings.HasSuffix(fmt.Sprint(p["filePath"]), "-v1.md") {
					t.Errorf("planPending: %v", p)
				}
			}},
		{name: "model error", script: modelError, code: 1, outcome: "failed",
			check: func(t *testing.T, _ *env, r result, obj map[string]any) {
				if obj["stopReason"] != "error" || obj["error"] == nil || !strings.HasPrefix(r.stderr, "ama: ") {
					t.Errorf("stopReason %v error %v stderr %q", obj["stopReason"], obj["error"], r.stderr)
				}
			}},
		{name: "blocked prompt", script: `{"responses":[{"text":"never"}]}`, setup: func(e *env) { e.file("~/.config/ama/hooks.json", blockPrompt) },
			code: 1, outcome: "failed",
			check: func(t *testing.T, e *env, _ result, _ map[string]any) {
				if n := e.requests(); n != 0 {
					t.Errorf("%d model requests after a blocked prompt", n)
				}
			}},
		{name: "denied then budget: budget wins", script: `{"responses":[
			{"steps":[{"toolCall":{"name":"bash","arguments":{"command":"touch marker"}}}],"stopReason":"toolUse"},{"text":"x"}]}`,
			args: []string{"--max-turns", "1"}, code: 8, outcome: "limit_reached", denial: "bash mode unattended"},
		{name: "denied then plan: plan wins", script: `{"responses":[
			{"steps":[{"toolCall":{"name":"write","arguments":{"path":"x","content":"y"}}}],"stopReason":"toolUse"},
			{"text":"<proposed_plan>\n# P\n1. a\n</proposed_plan>"}]}`,
			args: []string{"--permission-mode", "plan"}, code: 9, outcome: "plan_pending", denial: "write plan denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.file("a.txt", "alpha\nbeta\n")
			e.file("~/.config/ama/config.json", noCompaction)
			e.script(tc.script)
			if tc.setup != nil {
				tc.setup(e)
			}
			args := append([]string{"-p", "do the task", "--model", "fake/echo", "--output-format", "json"}, tc.args...)
			r := e.run(nil, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, tail(r.stdout), r.stderr)
			}
			obj := resultObject(t, r)
			if obj["outcome"] != tc.outcome || obj["exitCode"] != float64(tc.code) {
				t.Errorf("outcome %v exitCode %v, want %s %d", obj["outcome"], obj["exitCode"], tc.outcome, tc.code)
			}
			if tc.requests > 0 && e.requests() != tc.requests {
				t.Errorf("%d model requests, want %d", e.requests(), tc.requests)
			}
			ds, _ := obj["denials"].([]any)
			if tc.denial == "" && len(ds) > 0 {
				t.Errorf("unexpected denials %v", ds)
			}
			if tc.denial != "" {
				if len(ds) != 1 {
					t.Fatalf("denials %v, want one %q", ds, tc.denial)
				}
				d := ds[0].(map[string]any)
				if got := fmt.Sprint(d["tool"], " ", d["layer"], " ", d["code"]); got != tc.denial || d["reason"] == "" {
					t.Errorf("denial %v, want %q with a reason", d, tc.denial)
				}
				if dt, _ := obj["deniedTools"].([]any); len(dt) != 1 {
					t.Errorf("deniedTools %v", dt)
				}
			}
			if code := obj["exitCode"].(float64); tc.denial != "" && code == 0 {
				t.Error("a run with a denied call exits 0")
			}
			if tc.check != nil {
				tc.check(t, e, r, obj)
			}
		})
	}
}

// The three formats: text prints the answer, json one result object with
// ama's keys in order, stream-json the rpc events, one per line, ending
// with agent_settled; stdout never carries anything else.
func TestFormats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.script(`{"responses":[{"text":"\n\n  indented\nnext","usage":{"input":10,"output":2,"cacheRead":30}}]}`)
	r := e.run(nil, "-p", "hi", "--model", "fake/echo")
	if r.code != 0 || r.stdout != "  indented\nnext\n" {
		t.Errorf("text: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}

	e = newEnv(t)
	e.script(`{"responses":[{"text":"\n\n  indented\nnext","usage":{"input":10,"output":2,"cacheRead":30}}]}`)
	r = e.run(nil, "-p", "hi", "--model", "fake/echo", "--output-format", "json")
	obj := resultObject(t, r)
	if obj["text"] != "\n\n  indented\nnext" || obj["cacheHitRate"] != 0.75 {
		t.Errorf("json: text %q cacheHitRate %v", obj["text"], obj["cacheHitRate"])
	}
	keys := topKeys(t, r.stdout)
	order := []string{"type", "outcome", "exitCode", "sessionId", "sessionFile", "model", "stopReason", "text", "usage", "cost",
		"cacheHitRate", "cache", "turns", "durationMs", "entries"}
	if strings.Join(keys, ",") != strings.Join(order, ",") {
		t.Errorf("json keys %v, want %v", keys, order)
	}

	e = newEnv(t)
	e.script(`{"responses":[{"error":{"kind":"rate_limit","retryAfterMs":1}},{"steps":[{"text":"ok after retry","chunkSize":3}]}]}`)
	e.file("~/.config/ama/config.json", `{"retry":{"baseDelayMs":1}}`)
	r = e.run(nil, "-p", "hi", "--model", "fake/echo", "--output-format", "stream-json")
	objs := jsonLines(t, r.stdout)
	if r.code != 0 || len(objs) == 0 || objs[len(objs)-1]["type"] != "agent_settled" {
		t.Fatalf("stream-json: exit %d, last line not agent_settled:\n%s\nstderr %s", r.code, tail(r.stdout), r.stderr)
	}
	seen := map[string]bool{}
	for _, o := range objs {
		seen[fmt.Sprint(o["type"])] = true
	}
	for _, want := range []string{"before_agent_start", "message_update", "auto_retry_start", "auto_retry_end", "agent_end"} {
		if !seen[want] {
			t.Errorf("stream-json lacks %s", want)
		}
	}
	for _, never := range []string{"notification", "response", "hello", "session_start"} {
		if seen[never] {
			t.Errorf("stream-json has a %s line", never)
		}
	}
	if strings.Contains(r.stdout, `"partial"`) || strings.Contains(r.stderr, "↻") {
		t.Errorf("partial on stdout or retry line on stderr: %q", r.stderr)
	}

	// The retry line goes to stderr in the other formats.
	e = newEnv(t)
	e.script(`{"responses":[{"error":{"kind":"rate_limit","retryAfterMs":1}},{"text":"ok"}]}`)
	e.file("~/.config/ama/config.json", `{"retry":{"baseDelayMs":1}}`)
	r = e.run(nil, "-p", "hi", "--model", "fake/echo")
	if r.code != 0 || r.stdout != "ok\n" || !strings.Contains(r.stderr, "ama: ↻ retry 1/") {
		t.Errorf("text with a retry: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// topKeys lists the keys of the one JSON object in s, in order.
func topKeys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v", err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// Usage errors exit 2 before anything runs.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{
		{"-p", "--model", "fake/echo"},                        // no prompt, stdin /dev/null
		{"--output-format", "json", "--model", "fake/echo"},   // without -p
		{"--max-turns", "2", "--model", "fake/echo"},          // without -p
		{"-p", "hi", "--mode", "rpc", "--model", "fake/echo"}, // a protocol mode
		{"-p", "hi", "--output-format", "xml", "--model", "fake/echo"},
		{"-p", "hi", "--max-turns", "0", "--model", "fake/echo"},
		{"-p", "hi", "--max-cost", "-1", "--model", "fake/echo"},
		{"-p", "hi", "-", "--no-stdin", "--model", "fake/echo"},
		{"hi", "--model", "fake/echo"},                         // a prompt without -p
		{"-p", "look", "@missing.png", "--model", "fake/echo"}, // an image that is not there
	} {
		r := e.run(nil, args...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%v: exit %d (want 2) stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if n := e.requests(); n != 0 {
		t.Errorf("%d model requests", n)
	}
	r := e.run(nil, "-p", "hi", "--model", "fake/none")
	if r.code != 4 {
		t.Errorf("--model fake/none: exit %d (want 4) %s", r.code, r.stderr)
	}
}

// The prompt: words and piped stdin joined by a blank line, "-" reads
// stdin, a silent pipe is given up after AMA_STDIN_WAIT_MS.
func TestPromptAssembly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run(strings.NewReader("piped text\n"), "-p", "question", "--model", "fake/echo")
	if r.code != 0 || r.stdout != "question\n\npiped text\n" {
		t.Errorf("words + pipe: exit %d stdout %q %s", r.code, r.stdout, r.stderr)
	}
	r = e.run(strings.NewReader("piped text\n"), "-p", "question", "-", "--model", "fake/echo")
	if r.code != 0 || r.stdout != "question\n\npiped text\n" {
		t.Errorf("words + -: exit %d stdout %q", r.code, r.stdout)
	}
	r = e.run(strings.NewReader("only stdin"), "-p", "--model", "fake/echo")
	if r.code != 0 || r.stdout != "only stdin\n" {
		t.Errorf("stdin only: exit %d stdout %q", r.code, r.stdout)
	}
	// A pipe that never writes (its writer stays open until the run ends).
	e.vars["AMA_STDIN_WAIT_MS"] = "50"
	c := e.cmd("-p", "hi", "--model", "fake/echo")
	pw, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	_ = pw.Close()
	if err != nil || out.String() != "hi\n" || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "50 ms") {
		t.Errorf("silent pipe: %v stdout %q stderr %q", err, out.String(), errb.String())
	}
}

// SIGINT and SIGTERM abort the run: exit 130/143, stdout still clean JSON
// lines, the session file intact (every line one JSON object).
func TestSignals(t *testing.T) {
	for _, sig := range []struct {
		s    syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(sig.s.String(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.script(`{"responses":[{"steps":[{"text":"working","chunkSize":7},{"waitFile":"never"}]}]}`)
			c := e.cmd("-p", "hi", "--model", "fake/echo", "--output-format", "stream-json")
			stdout, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			c.Stderr = &errb
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<24)
			sent := false
			for sc.Scan() {
				got.Write(sc.Bytes())
				got.WriteByte('\n')
				if !sent && strings.Contains(sc.Text(), `"delta":"working"`) { // the model is mid-reply
					_ = c.Process.Signal(sig.s)
					sent = true
				}
			}
			err = c.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != sig.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, sig.code, errb.String())
			}
			objs := jsonLines(t, got.String())
			if last := objs[len(objs)-1]["type"]; last != "agent_settled" {
				t.Errorf("last line %v", last)
			}
			files, _ := filepath.Glob(filepath.Join(e.home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("session files: %v", files)
			}
			b, _ := os.ReadFile(files[0])
			jsonLines(t, string(b))
			if !bytes.Contains(b, []byte(`"stopReason":"aborted"`)) {
				t.Errorf("the session file does not record the aborted reply")
			}
		})
	}
}

// A CI job continues its conversation: --continue resumes the session the
// last -p run wrote; --no-session writes none.
func TestContinue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := resultObject(t, e.run(nil, "-p", "one", "--model", "fake/echo", "--output-format", "json"))
	second := resultObject(t, e.run(nil, "-p", "two", "--model", "fake/echo", "--output-format", "json", "--continue"))
	if first["sessionId"] != second["sessionId"] || second["text"] != "two" {
		t.Errorf("continue: %v then %v (%v)", first["sessionId"], second["sessionId"], second["text"])
	}
	if n := len(second["entries"].([]any)); n <= len(first["entries"].([]any)) {
		t.Errorf("the continued session has %d entries", n)
	}
	e2 := newEnv(t)
	obj := resultObject(t, e2.run(nil, "-p", "x", "--model", "fake/echo", "--output-format", "json", "--no-session"))
	if _, ok := obj["sessionFile"]; ok {
		t.Errorf("--no-session reports a session file %v", obj["sessionFile"])
	}
}

// Images: --image and @file.png attach the file (the model request
// carries it); a file that is no image is a usage error.
func TestImages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82"
	e.file("shot.png", png)
	e.file("fake.png", "not an image")
	r := e.run(nil, "-p", "what is in", "@shot.png", "--model", "fake/echo")
	if r.code != 0 {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	rec, _ := os.ReadFile(e.vars["AMA_FAKE_RECORD"])
	if !bytes.Contains(rec, []byte(`"image/png"`)) {
		t.Errorf("the request carries no image: %s", tail(string(rec)))
	}
	if r := e.run(nil, "-p", "x", "--image", "fake.png", "--model", "fake/echo"); r.code != 2 {
		t.Errorf("a non-image: exit %d %s", r.code, r.stderr)
	}
}

// Sub-agents: a task runs in the foreground by default in -p; a task that
// moves to the background is awaited with its notification turn, whose
// reply is the final text.
func TestSubagents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.script(`{"responses":[{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"child work","agent":"explore","description":"one"}}}]}]}`)
	r := e.run(nil, "-p", "go", "--model", "fake/echo", "--tools", "+task", "--permission-mode", "full-auto", "--output-format", "stream-json")
	var start map[string]any
	for _, o := range jsonLines(t, r.stdout) {
		if o["type"] == "subagent_start" {
			start = o
		}
	}
	if r.code != 0 || start == nil || start["background"] != false || strings.Contains(r.stderr, "waiting for") {
		t.Errorf("foreground: exit %d subagent_start %v stderr %q", r.code, start, r.stderr)
	}

	// The child's reply waits for a gate file that the test creates only
	// once ama-rpc says it waits for the background task: the task must
	// have gone to the background (after 50 ms) for the run to end, on a
	// machine of any load. The reply is kept for the child's prompt
	// (forPrompt): on a loaded machine the parent's next request, once
	// the task went to the background, can come before the child's
	// first; it gets the echo.
	e = newEnv(t)
	e.file("~/.config/ama/config.json", `{"subagents":{"autoBackgroundAfterMs":50}}`)
	e.script(`{"responses":[{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"child work","agent":"explore","description":"one"}}}]},
		{"forPrompt":"child work","steps":[{"waitFile":"release"},{"text":"child done"}]}]}`)
	r = e.runGated("ama: waiting for 1 background task", filepath.Join(filepath.Dir(e.vars["AMA_FAKE_SCRIPT"]), "release"), "-p", "go", "--model", "fake/echo", "--tools", "+task", "--permission-mode", "full-auto", "--output-format", "json")
	obj := resultObject(t, r)
	tasks, _ := obj["tasks"].(map[string]any)
	by, _ := tasks["byStatus"].(map[string]any)
	if r.code != 0 || tasks["total"] != 1.0 || tasks["running"] != 0.0 || by["completed"] != 1.0 {
		t.Errorf("background: exit %d tasks %v stderr %q", r.code, tasks, r.stderr)
	}
	if !strings.Contains(r.stderr, "ama: waiting for 1 background task") {
		t.Errorf("no wait line: %q", r.stderr)
	}
	if text := fmt.Sprint(obj["text"]); !strings.Contains(text, "task-notification") || !strings.Contains(text, "child done") {
		t.Errorf("the final text is not the notification turn's reply: %q", text)
	}
}

// A reader that goes away (`| head -1`) aborts the run; that is no
// failure: exit 0 (no call was denied).
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.script(`{"responses":[{"steps":[{"text":"first"},{"delayMs":300},{"text":" second"},{"waitFile":"never"}]}]}`)
	c := e.cmd("-p", "hi", "--model", "fake/echo", "--output-format", "stream-json")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_ = stdout.Close()
	if err := c.Wait(); err != nil {
		t.Errorf("exit: %v (want 0)", err)
	}
}

// Ctrl+C while -p waits for a pipe that never ends stops the wait: 130.
func TestSignalWhileReadingStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.cmd("-p", "--model", "fake/echo")
	pw, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, "waiting for stdin") {
		t.Fatalf("stderr %q %v", line, err)
	}
	_ = c.Process.Signal(syscall.SIGINT)
	err = c.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit: %v (want 130)", err)
	}
}

package golden_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
)

// replayOut is what `ama-rpc explain --replay` printed.
type replayOut struct {
	code    int
	lines   []map[string]any
	summary struct {
		Records, Replayed, Unchanged, Changed int
		Skipped                               map[string]int
	}
	stderr string
}

// explainReplay runs `ama-rpc explain --replay` in r's environment (its
// HOME, config and data), reading nothing from stdin.
func explainReplay(t *testing.T, r *golden.Run, env map[string]string, args ...string) replayOut {
	t.Helper()
	vars := map[string]string{
		"HOME": r.Home, "XDG_CONFIG_HOME": filepath.Join(r.Home, ".config"), "XDG_DATA_HOME": filepath.Join(r.Home, ".local", "share"),
		"PATH": os.Getenv("PATH"), "AMA_NO_SANDBOX_SELFTEST": "1",
	}
	for k, v := range env {
		vars[k] = v
	}
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{Args: append([]string{"explain"}, args...), Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }, Cwd: r.Work})
	res := replayOut{code: code, stderr: errb.String()}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		if s, ok := m["summary"]; ok {
			b, _ := json.Marshal(s)
			_ = json.Unmarshal(b, &res.summary)
			continue
		}
		res.lines = append(res.lines, m)
	}
	return res
}

// sessionFiles are the session files a run wrote.
func sessionFiles(t *testing.T, r *golden.Run) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.Home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session files: %v", err)
	}
	return files
}

// `explain --replay` under the unchanged policy reproduces every
// recorded verdict of the permission goldens (issue 27), checked on their
// one play (TestFixtures/<fixture>/explain replay): every record of every
// session file replayed (or skipped as no call or a hook's) and none
// changed, with at least as many verdicts as the golden has.
var _ = func() bool {
	for name, min := range map[string]int{"permission-decisions": 5, "permission-gate-shadow": 3, "permission-gate-enforce": 3,
		"perm-cwd-escape": 5, "perm-symlink-write": 8, "perm-reply-race": 5} {
		afterFixture("rpc/"+name, "explain replay", func(t *testing.T, r *golden.Run, c *golden.Case) {
			total := 0
			for _, f := range sessionFiles(t, r) {
				out := explainReplay(t, r, c.Env, "--replay", f, "--all")
				if out.code != 0 || out.summary.Changed != 0 {
					t.Fatalf("%s: exit %d, %+v\n%v\n%s", f, out.code, out.summary, out.lines, out.stderr)
				}
				if out.summary.Replayed+out.summary.Skipped["no_call"]+out.summary.Skipped["hook"] != out.summary.Records {
					t.Errorf("%s: %+v", f, out.summary)
				}
				total += out.summary.Replayed
			}
			if total < min {
				t.Errorf("%d verdicts replayed, want at least %d", total, min)
			}
		})
	}
	return true
}()

// A changed policy reports exactly the calls it changes (table test), for
// the session file and for the decision log of the same run.
func TestExplainReplayReportsChanges(t *testing.T) {
	root := t.TempDir()
	logPath := filepath.Join(root, "permission.log")
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--permission-mode", "full-auto"},
		Env:  map[string]string{"AMA_SANDBOX": "off"},
		UserConfig: []byte(`{"permission":{"logPath":"` + logPath + `","deny":["bash(curl *)"],
			"candidate":{"deny":["write(notes/**)"]}, "gate":"shadow"}}`),
		Files: map[string]string{"a.txt": "alpha\n"},
		Script: turns(
			bashCall(`{"command":"echo hi > b.txt"}`),
			bashCall(`{"command":"curl https://example.invalid"}`),
			`{"name":"read","arguments":{"path":"a.txt"}}`,
			`{"name":"write","arguments":{"path":"notes/n.txt","content":"x"}}`,
			bashCall(`{"command":"git status"}`)),
	})
	settle(t, r)
	files := sessionFiles(t, r)
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	before, _ := os.ReadFile(files[0])
	// The echo ran once; a replay must not run it again.
	if err := os.Remove(filepath.Join(r.Work, "b.txt")); err != nil {
		t.Fatalf("the run's own echo did not run: %v", err)
	}
	env := map[string]string{"AMA_SANDBOX": "off"}
	for _, tc := range []struct {
		name    string
		args    []string
		changed []string // "<tool>:<recorded vote>-><replayed vote>" in order
	}{
		{"unchanged", nil, nil},
		{"deny rule", []string{"--deny", "bash(echo *)"}, []string{"bash:allow->deny"}},
		{"ask rule", []string{"--ask", "bash(git *)"}, []string{"bash:allow->ask"}},
		{"plan mode", []string{"--permission-mode", "plan"}, []string{"bash:allow->deny", "write:allow->deny"}},
		{"default mode", []string{"--permission-mode", "default"}, []string{"bash:allow->ask", "write:allow->ask", "bash:allow->ask"}},
		{"candidate", []string{"--candidate"}, []string{"write:allow->deny"}},
		{"unattended default", []string{"--permission-mode", "default", "--unattended"}, []string{"bash:allow->deny", "write:allow->deny", "bash:allow->deny"}},
		{"allow rule lifts nothing in full-auto", []string{"--allow", "bash(curl *)"}, nil},
	} {
		for _, input := range []string{"session", "log"} {
			t.Run(tc.name+"/"+input, func(t *testing.T) {
				file := files[0]
				if input == "log" {
					file = logPath
				}
				out := explainReplay(t, r, env, append([]string{"--replay", file}, tc.args...)...)
				var got []string
				for _, l := range out.lines {
					rec, rep := l["recorded"].(map[string]any), l["replayed"].(map[string]any)
					if l["changed"] != true {
						t.Errorf("unchanged line printed without --all: %v", l)
					}
					got = append(got, l["tool"].(string)+":"+rec["vote"].(string)+"->"+rep["vote"].(string))
				}
				if strings.Join(got, ",") != strings.Join(tc.changed, ",") {
					t.Errorf("changes %v, want %v\n%s", got, tc.changed, out.stderr)
				}
				wantCode := 0
				if len(tc.changed) > 0 {
					wantCode = 1
				}
				if out.code != wantCode || out.summary.Records != 5 || out.summary.Replayed != 5 || out.summary.Changed != len(tc.changed) {
					t.Errorf("exit %d, summary %+v", out.code, out.summary)
				}
			})
		}
	}
	if after, _ := os.ReadFile(files[0]); !bytes.Equal(before, after) {
		t.Error("the replay changed the session file")
	}
	if _, err := os.Stat(filepath.Join(r.Work, "b.txt")); err == nil {
		t.Error("a replay ran the echo")
	}
	if lines := explainReplay(t, r, env, "--replay", logPath, "--permission-mode", "plan", "--all").lines; len(lines) != 5 {
		t.Errorf("--all printed %d lines, want 5", len(lines))
	} else {
		t.Logf("plan mode replay:\n%v", lines)
	}
}

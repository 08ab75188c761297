//go:build unix

package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// Red-team tests of ama-rpc as a confused deputy (issue 24): ama-rpc runs
// outside the sandbox with the user's rights and opens files at paths a
// command or the model can change. Each test plants the link (or hard
// link, or swapped directory) an attacker would, runs the model's calls
// unattended, and checks the side effect: the secret marker is absent from
// stdout, the session file and the recorded model requests; the file
// outside is unchanged.

const deputySecret = "DEPUTY-SECRET-7f3a9"

// plantKey writes a private key holding the marker under the run's HOME
// (the harness creates HOME before the server starts reading anything
// the tests plant later).
func plantKey(t *testing.T, home string) string {
	t.Helper()
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("-----BEGIN KEY-----\n"+deputySecret+"\n-----END KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return key
}

// noSecret checks stdout, every session file and the recorded model
// requests for the marker.
func noSecret(t *testing.T, r *golden.Run, marker string) {
	t.Helper()
	for _, l := range r.Lines() {
		if strings.Contains(string(l), marker) {
			t.Errorf("the secret reached stdout: %s", l)
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(r.Home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
	for _, f := range sessions {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), marker) {
			t.Errorf("the secret reached the session file %s", f)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl")); err == nil && strings.Contains(string(b), marker) {
		t.Errorf("the secret reached a model request")
	}
}

func settle(t *testing.T, r *golden.Run) { settleWith(t, r, "go") }

func settleWith(t *testing.T, r *golden.Run, message string) {
	t.Helper()
	b, _ := json.Marshal(message)
	r.Send(`{"id":"p","type":"prompt","message":` + string(b) + `}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" && o.String("sessionId") == "" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
}

// toolTexts are the texts of the model's tool results in order.
func toolTexts(t *testing.T, r *golden.Run) []string {
	t.Helper()
	var out []string
	for _, l := range r.Lines() {
		var m struct {
			Type, ParentToolCallID string
			Result                 struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(l, &m) == nil && m.Type == "tool_execution_end" && m.ParentToolCallID == "" {
			var s []string
			for _, c := range m.Result.Content {
				s = append(s, c.Text)
			}
			out = append(out, strings.Join(s, "\n"))
		}
	}
	return out
}

func bashCall(args string) string { return `{"name":"bash","arguments":` + args + `}` }

// A background job replaces its own log with a link (or a hard link) to a
// private key; wait and output read the log ama-rpc created, through the
// descriptor it holds, so they show the job's real output and never the
// key. Everyday use is the same run: the job's own lines come back.
func TestDeputyJobLogSwap(t *testing.T) {
	for _, tc := range []struct {
		name, swap string
		sandbox    string
	}{
		{"symlink", `ln -s "$KEY" "$log"`, "off"},
		{"hard link", `ln "$KEY" "$log"`, "off"},
		{"symlink to environ", `ln -s /proc/self/environ "$log"`, "off"},
		{"symlink, sandboxed", `ln -s "$KEY" "$log"`, "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// /proc/self/environ of this process holds the marker.
			t.Setenv("DEPUTY_PROBE", deputySecret)
			// The run's HOME is the part of the log's path before ama's data
			// directory (the command's own HOME is this process's).
			cmd := `echo job-line-one; log=$(readlink /proc/$$/fd/1); KEY="${log%%/.local/share/ama/*}/.ssh/id_rsa"; rm -f "$log"; ` +
				tc.swap + `; echo job-line-two`
			args, _ := json.Marshal(map[string]any{"command": cmd, "background": true})
			env := map[string]string{}
			if tc.sandbox == "off" {
				env["AMA_SANDBOX"] = "off"
			}
			r := golden.Start(t, golden.Config{
				Args:       []string{"--model", "fake/echo", "--permission-mode", "full-auto"},
				Env:        env,
				UserConfig: []byte(`{"sandbox":{"bash":"auto","network":"deny"}}`),
				Script: turns(bashCall(string(args)), bashCall(`{"job":"j1","action":"wait","timeoutMs":30000}`),
					bashCall(`{"job":"j1","action":"output"}`)),
			})
			plantKey(t, r.Home)
			settle(t, r)
			noSecret(t, r, deputySecret)
			texts := toolTexts(t, r)
			if len(texts) != 3 {
				t.Fatalf("tool results: %q", texts)
			}
			if !strings.Contains(texts[2], "job-line-one") || !strings.Contains(texts[2], "job-line-two") {
				t.Errorf("output lost the job's own lines: %q", texts[2])
			}
			if tc.sandbox == "off" { // the attack did happen: the log's name is no longer ama's file
				logs, _ := filepath.Glob(filepath.Join(r.Home, ".local", "share", "ama", "tool-output", "*", "job-j1-*.log"))
				if len(logs) != 1 {
					t.Fatalf("job logs: %v\n%q", logs, texts)
				}
				if fi, err := os.Lstat(logs[0]); err == nil && fi.Mode().IsRegular() && !strings.Contains(tc.name, "hard") {
					t.Errorf("the job did not swap its log (%v): the test proves nothing", fi.Mode())
				}
			}
		})
	}
}

// Project context files read at startup and by new_session: a link out of
// the project, to a key inside a project that holds one, or a hard link
// to a key is refused (with a warning); a normal file and a link inside
// the project still reach the system prompt.
func TestDeputyContextFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, r *golden.Run, key string)
		want  string // text that must reach the system prompt ("" none)
	}{
		{"AGENTS.md link out", func(t *testing.T, r *golden.Run, key string) {
			must(t, os.Symlink(key, filepath.Join(r.Work, "AGENTS.md")))
		}, ""},
		{"CLAUDE.md relative link out", func(t *testing.T, r *golden.Run, key string) {
			must(t, os.Symlink("../home/.ssh/id_rsa", filepath.Join(r.Work, "CLAUDE.md")))
		}, ""},
		{"AGENTS.md hard link", func(t *testing.T, r *golden.Run, key string) {
			if err := os.Link(key, filepath.Join(r.Work, "AGENTS.md")); err != nil {
				t.Skipf("hard link: %v", err)
			}
		}, ""},
		{"AGENTS.md to a secret inside the project", func(t *testing.T, r *golden.Run, key string) {
			must(t, os.WriteFile(filepath.Join(r.Work, ".env"), []byte("TOKEN="+deputySecret+"\n"), 0o600))
			must(t, os.Symlink(".env", filepath.Join(r.Work, "AGENTS.md")))
		}, ""},
		{"AGENTS.md is a fifo", func(t *testing.T, r *golden.Run, key string) {
			if err := syscall.Mkfifo(filepath.Join(r.Work, "AGENTS.md"), 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, ""},
		{"everyday: AGENTS.md", func(t *testing.T, r *golden.Run, key string) {
			must(t, os.WriteFile(filepath.Join(r.Work, "AGENTS.md"), []byte("Use tabs, said AGENTS.md."), 0o644))
		}, "Use tabs, said AGENTS.md."},
		{"everyday: AGENTS.md link inside the project", func(t *testing.T, r *golden.Run, key string) {
			must(t, os.MkdirAll(filepath.Join(r.Work, "docs"), 0o755))
			must(t, os.WriteFile(filepath.Join(r.Work, "docs", "agents.md"), []byte("Linked instructions."), 0o644))
			must(t, os.Symlink("docs/agents.md", filepath.Join(r.Work, "AGENTS.md")))
		}, "Linked instructions."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: turns()})
			key := plantKey(t, r.Home)
			tc.plant(t, r, key)
			// The planted files are read by the next session.
			r.Send(`{"id":"n","type":"new_session"}`)
			r.WaitFor("new_session", 1, func(o *golden.Object) bool { return o.String("id") == "n" })
			settle(t, r)
			noSecret(t, r, deputySecret)
			rec, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && !strings.Contains(string(rec), tc.want) {
				t.Errorf("the project instructions did not reach the model")
			}
			if tc.want == "" && !strings.Contains(tc.name, "skills") && !strings.Contains(r.Stderr(), "project instructions skipped") {
				t.Errorf("no warning on stderr:\n%s", r.Stderr())
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A project skill found at startup is swapped for a link to a key (or its
// directory for a link out of the project) before /skill:<name> reads its
// body: the body is refused, the key stays out of the prompt.
func TestDeputySkillBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, r *golden.Run, key string)
	}{
		{"file link", func(t *testing.T, r *golden.Run, key string) {
			p := filepath.Join(r.Work, ".ama", "skills", "evil", "SKILL.md")
			must(t, os.Remove(p))
			must(t, os.Symlink(key, p))
		}},
		{"directory swapped for a link", func(t *testing.T, r *golden.Run, key string) {
			out := filepath.Join(r.Root, "outside", "evil")
			must(t, os.MkdirAll(out, 0o700))
			must(t, os.Symlink(key, filepath.Join(out, "SKILL.md")))
			d := filepath.Join(r.Work, ".ama", "skills", "evil")
			must(t, os.RemoveAll(d))
			must(t, os.Symlink(out, d))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// --trust: an untrusted project's skills are not loaded at all.
			r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo", "--trust"}, Script: turns(),
				Files: map[string]string{".ama/skills/evil/SKILL.md": "---\nname: evil\ndescription: A skill.\n---\nSkill body.\n"}})
			key := plantKey(t, r.Home)
			tc.plant(t, r, key)
			r.Send(`{"id":"p","type":"prompt","message":"/skill:evil"}`)
			r.WaitFor("reply", 1, func(o *golden.Object) bool { return o.String("id") == "p" })
			r.CloseStdin()
			if code := r.Wait(); code != 0 {
				t.Fatalf("exit %d\n%s", code, r.Stderr())
			}
			noSecret(t, r, deputySecret)
		})
	}
}

// A task report written under $TMPDIR/ama-outputs (--no-session) never
// follows a link planted there by an earlier command: neither at the
// report's name nor for the directory itself.
func TestDeputyTaskReport(t *testing.T) {
	const parent = "00000000-0000-4000-8000-000000000001" // the harness's first id
	for _, tc := range []struct {
		name    string
		plant   func(t *testing.T, tmp, bashrc string)
		written bool // the report is written (in $TMPDIR/ama-outputs)
	}{
		{"link at the report's name", func(t *testing.T, tmp, bashrc string) {
			must(t, os.MkdirAll(filepath.Join(tmp, "ama-outputs"), 0o700))
			must(t, os.Symlink(bashrc, filepath.Join(tmp, "ama-outputs", parent+"-t1.md")))
		}, true},
		{"directory is a link out", func(t *testing.T, tmp, bashrc string) {
			must(t, os.Symlink(filepath.Dir(bashrc), filepath.Join(tmp, "ama-outputs")))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			long, _ := json.Marshal(strings.Repeat("report line of the child\n", 3000)) // over the result limit: a report file
			r := golden.Start(t, golden.Config{
				Args:       []string{"--model", "fake/echo", "--permission-mode", "full-auto", "--no-session", "--tools", "read,task"},
				UserConfig: []byte(`{"subagents":{"background":"never"}}`),
				Script: []byte(`{"version":1,"responses":[` +
					`{"steps":[{"toolCall":{"name":"task","arguments":{"prompt":"look","description":"child"}}}]},` +
					`{"text":` + string(long) + `},{"text":"Done."}]}`),
			})
			bashrc := filepath.Join(r.Home, ".bashrc")
			must(t, os.WriteFile(bashrc, []byte("# my bashrc\n"), 0o644))
			tc.plant(t, tmp, bashrc)
			settle(t, r)
			if b, _ := os.ReadFile(bashrc); string(b) != "# my bashrc\n" {
				t.Errorf("~/.bashrc was replaced: %.80q", b)
			}
			if strays, _ := filepath.Glob(filepath.Join(r.Home, "*.md")); len(strays) > 0 {
				t.Errorf("report written outside $TMPDIR: %v", strays)
			}
			var out string
			for _, l := range r.Lines() {
				out += string(l)
			}
			report := filepath.Join(tmp, "ama-outputs", parent+"-t1.md")
			if tc.written != strings.Contains(out, `"outputFile":"`+report+`"`) {
				t.Errorf("report written = %v, want %v", !tc.written, tc.written)
			}
			if tc.written {
				if b, err := os.ReadFile(report); err != nil || !strings.HasPrefix(string(b), "report line of the child") {
					t.Errorf("report: %.80q, %v", b, err)
				}
			} else if !strings.Contains(r.Stderr(), "task output file") {
				t.Errorf("no warning about the refused report:\n%s", r.Stderr())
			}
		})
	}
}

// Plan files under a plan.directory inside the project never follow a
// link planted at the plan's name, nor a plan directory that is a link out
// of the project. Everyday: the plan file is written.
func TestDeputyPlanFile(t *testing.T) {
	const id = "00000000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name   string
		plant  func(t *testing.T, r *golden.Run, bashrc string)
		landed bool // the plan file is written in the project
	}{
		{"link at the plan's name", func(t *testing.T, r *golden.Run, bashrc string) {
			must(t, os.MkdirAll(filepath.Join(r.Work, "plans"), 0o755))
			must(t, os.Symlink(bashrc, filepath.Join(r.Work, "plans", id+"-v1.md")))
		}, true},
		{"plan directory is a link out", func(t *testing.T, r *golden.Run, bashrc string) {
			must(t, os.Symlink(filepath.Dir(bashrc), filepath.Join(r.Work, "plans")))
		}, false},
		{"everyday", func(t *testing.T, r *golden.Run, bashrc string) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{
				Args:       []string{"--model", "fake/echo", "--permission-mode", "plan"},
				UserConfig: []byte(`{"plan":{"directory":"plans"}}`),
				Script:     []byte(`{"version":1,"responses":[{"text":"<proposed_plan>\n# Plan\n1. Change the thing.\n</proposed_plan>"}]}`),
			})
			bashrc := filepath.Join(r.Home, ".bashrc")
			must(t, os.WriteFile(bashrc, []byte("# my bashrc\n"), 0o644))
			tc.plant(t, r, bashrc)
			settle(t, r)
			if b, _ := os.ReadFile(bashrc); string(b) != "# my bashrc\n" {
				t.Errorf("~/.bashrc was replaced: %.80q", b)
			}
			if strays, _ := filepath.Glob(filepath.Join(r.Home, "*.md")); len(strays) > 0 {
				t.Errorf("plan written outside the project: %v", strays)
			}
			p := filepath.Join(r.Work, "plans", id+"-v1.md")
			fi, err := os.Lstat(p)
			if tc.landed && (err != nil || !fi.Mode().IsRegular()) {
				t.Fatalf("plan file %s: %v %v", p, fi, err)
			}
			if tc.landed {
				if b, _ := os.ReadFile(p); !strings.Contains(string(b), "Change the thing.") {
					t.Errorf("plan file: %q", b)
				}
			}
		})
	}
}

// ama's safety files (seed 003): no tool writes them in any mode, however
// the path is spelled; reads of ama's config (it can hold apiKey) ask, so
// unattended they are refused.
func TestDeputySafetyFiles(t *testing.T) {
	for _, tc := range []struct {
		name, mode, call string
		link             bool // work/cfg.json -> ~/.config/ama/hooks.json
	}{
		{"write hooks.json in auto-edit", "auto-edit", `{"name":"write","arguments":{"path":"~/.config/ama/hooks.json","content":"{}"}}`, false},
		{"write config.json in full-auto", "full-auto", `{"name":"write","arguments":{"path":"~/.config/ama/config.json","content":"{\"permission\":{\"mode\":\"full-auto\"}}"}}`, false},
		{"edit config.json in full-auto", "full-auto", `{"name":"edit","arguments":{"path":"~/.config/ama/config.json","edits":[{"oldText":"openai","newText":"x"}]}}`, false},
		{"bash writes hooks.json in full-auto", "full-auto", `{"name":"bash","arguments":{"command":"echo '{}' > ~/.config/ama/hooks.json"}}`, false},
		{"write project .ama/hooks.json in full-auto", "full-auto", `{"name":"write","arguments":{"path":".ama/hooks.json","content":"{}"}}`, false},
		{"write through a link in the project", "full-auto", `{"name":"write","arguments":{"path":"cfg.json","content":"{}"}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := `{"providers":{"openai":{"apiKey":"` + deputySecret + `"}}}`
			r := golden.Start(t, golden.Config{
				Args:       []string{"--model", "fake/echo", "--permission-mode", tc.mode},
				Env:        map[string]string{"AMA_SANDBOX": "off"},
				UserConfig: []byte(cfg),
				Script:     turns(tc.call),
			})
			dir := filepath.Join(r.Home, ".config", "ama")
			if tc.link {
				must(t, os.Symlink(filepath.Join(dir, "hooks.json"), filepath.Join(r.Work, "cfg.json")))
			}
			settle(t, r)
			if b, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(b) != cfg {
				t.Errorf("config.json changed: %q", b)
			}
			for _, p := range []string{filepath.Join(dir, "hooks.json"), filepath.Join(r.Work, ".ama", "hooks.json")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			if texts := toolTexts(t, r); len(texts) != 1 || !strings.Contains(texts[0], "safety controls") {
				t.Errorf("tool results: %q", texts)
			}
		})
	}
	t.Run("read config.json in auto", func(t *testing.T) {
		r := golden.Start(t, golden.Config{
			Args:       []string{"--model", "fake/echo", "--permission-mode", "auto"},
			UserConfig: []byte(`{"providers":{"openai":{"apiKey":"` + deputySecret + `"}}}`),
			Script:     turns(`{"name":"read","arguments":{"path":"~/.config/ama/config.json"}}`),
		})
		settle(t, r)
		noSecret(t, r, deputySecret)
	})
}

// A job swaps the session's tool-output directory for a link to ~/.ssh:
// the next job's log (and any cut output) is not created there.
func TestDeputyJobDirSwap(t *testing.T) {
	swap := `log=$(readlink /proc/$$/fd/1); d=$(dirname "$log"); KEY="${log%%/.local/share/ama/*}/.ssh"; mv "$d" "$d.old" && ln -s "$KEY" "$d"`
	args, _ := json.Marshal(map[string]any{"command": swap, "background": true})
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--permission-mode", "full-auto"},
		Env:  map[string]string{"AMA_SANDBOX": "off"},
		Script: turns(bashCall(string(args)), bashCall(`{"job":"j1","action":"wait","timeoutMs":30000}`),
			bashCall(`{"command":"echo second","background":true}`), bashCall(`{"command":"seq 1 40000"}`)),
	})
	key := plantKey(t, r.Home)
	settle(t, r)
	ents, _ := os.ReadDir(filepath.Dir(key))
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files created in ~/.ssh: %v", names)
	}
	texts := toolTexts(t, r)
	if len(texts) != 4 || !strings.Contains(texts[2], "start job") {
		t.Errorf("the second job was not refused: %q", texts)
	}
	noSecret(t, r, deputySecret)
}

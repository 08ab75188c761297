package golden_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// Issue 24 §2 and §4, end to end through the fake model, unattended: the
// programs ama-rpc runs itself (hooks, its own git) get no provider key
// and run nothing of the repository; a sub-agent never does more than its
// parent's current mode allows. Each test checks the side effect.

// fakeScript is a fake-model script of the given responses.
func fakeScript(t *testing.T, responses ...any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": 1, "responses": responses})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func toolCallStep(name string, args map[string]any) map[string]any {
	return map[string]any{"toolCall": map[string]any{"name": name, "arguments": args}}
}

func callReply(name string, args map[string]any) map[string]any {
	return map[string]any{"steps": []any{toolCallStep(name, args)}}
}

func textReply(s string) map[string]any { return map[string]any{"text": s} }

// records returns the lines of the run's AMA_FAKE_RECORD file (one per
// model request).
func records(r *golden.Run) [][]byte {
	b, _ := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}

// filesContaining lists the files under dir whose content contains s.
func filesContaining(t *testing.T, dir, s string) []string {
	t.Helper()
	var hits []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=a",
		"GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// The README's Stop hook (`make test`, the failure text back to the model)
// with a Makefile that prints its environment: the tests ran and their
// output reached the model, the provider keys did not reach the model
// request, stdout or any file of the run (session file included).
func TestStopHookGetsNoProviderKey(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	const key, amaKey = "sk-fake-deputy-4242", "ama-key-deputy-1717"
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("AMA_API_KEY_WORK", amaKey)
	hooks := `{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"command",` +
		`"command":"if [ -e .hook-ran ]; then exit 0; fi; touch .hook-ran; make test >&2; exit 2"}]}]}}`
	r := golden.Start(t, golden.Config{
		Args:   []string{"--mode", "rpc", "--model", "fake/echo", "--trust"},
		Script: fakeScript(t, textReply("all done"), textReply("fixed it")),
		Files: map[string]string{
			".ama/hooks.json": hooks,
			"Makefile":        "test:\n\t@echo TESTS-RAN-OK; env\n",
		},
	})
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Send(`{"id":"p","type":"prompt","message":"finish"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	req := records(r)
	if len(req) != 2 || !bytes.Contains(req[1], []byte("TESTS-RAN-OK")) {
		t.Fatalf("the Stop hook's make test output did not reach the model (%d requests):\n%s", len(req), bytes.Join(req, []byte("\n")))
	}
	for _, s := range []string{key, amaKey} {
		if hits := filesContaining(t, r.Root, s); len(hits) > 0 {
			t.Errorf("%s reached %v", s, hits)
		}
		for _, l := range r.Lines() {
			if bytes.Contains(l, []byte(s)) {
				t.Errorf("%s reached stdout: %s", s, l)
			}
		}
	}
}

// isolation:"worktree" in default mode still works (the child's write
// lands in the kept worktree), but git runs none of the repository's
// programs: the planted post-checkout hook and core.fsmonitor leave no
// marker outside the project.
func TestWorktreeIsolationRunsNoRepositoryProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := golden.Start(t, golden.Config{
		Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "full-auto", "--tools", "read,write,task"},
		Script: fakeScript(t,
			callReply("task", map[string]any{"prompt": "change it", "agent": "general", "background": false, "isolation": "worktree"}),
			callReply("write", map[string]any{"path": "new.txt", "content": "from the child\n"}),
			textReply("wrote new.txt"),
			textReply("done")),
		Files: map[string]string{"a.txt": "a\n"},
		Dirs:  []string{"outside"},
	})
	marker := filepath.Join(r.Root, "outside")
	gitIn(t, r.Work, "init", "-q", "-b", "main")
	gitIn(t, r.Work, "add", "a.txt")
	gitIn(t, r.Work, "commit", "-q", "-m", "base")
	hook := filepath.Join(r.Work, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+filepath.Join(marker, "post-checkout")+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, r.Work, "config", "core.fsmonitor", "touch '"+filepath.Join(marker, "fsmonitor")+"'; false")
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Send(`{"id":"p","type":"prompt","message":"isolate"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	kept, _ := filepath.Glob(filepath.Join(r.Work, ".ama", "worktrees", "*", "new.txt"))
	if len(kept) != 1 {
		t.Fatalf("the child's write is not in a kept worktree: %v\nstdout:\n%s", kept, bytes.Join(r.Lines(), []byte("\n")))
	}
	if _, err := os.Stat(filepath.Join(r.Work, "new.txt")); err == nil {
		t.Error("the child's write reached the main tree")
	}
	for _, m := range []string{"post-checkout", "fsmonitor"} {
		if _, err := os.Stat(filepath.Join(marker, m)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ama-rpc's own git ran the repository's %s", m)
		}
	}
}

// In plan mode isolation:"worktree" is refused and creates nothing: no
// .ama/worktrees, no branch, no hook run.
func TestWorktreeIsolationInPlanModeCreatesNothing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := golden.Start(t, golden.Config{
		Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "plan", "--tools", "read,write,task"},
		Script: fakeScript(t,
			callReply("task", map[string]any{"prompt": "look", "agent": "general", "background": false, "isolation": "worktree"}),
			textReply("ok")),
		Files: map[string]string{"a.txt": "a\n"},
		Dirs:  []string{"outside"},
	})
	gitIn(t, r.Work, "init", "-q", "-b", "main")
	gitIn(t, r.Work, "add", "a.txt")
	gitIn(t, r.Work, "commit", "-q", "-m", "base")
	marker := filepath.Join(r.Root, "outside", "post-checkout")
	if err := os.WriteFile(filepath.Join(r.Work, ".git", "hooks", "post-checkout"), []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("session_start", 1, isType("session_start"))
	r.Send(`{"id":"p","type":"prompt","message":"isolate"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	if _, err := os.Stat(filepath.Join(r.Work, ".ama")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("plan mode left .ama behind (%v)", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the post-checkout hook ran")
	}
	if b := gitIn(t, r.Work, "branch", "--list", "ama/*"); strings.TrimSpace(b) != "" {
		t.Errorf("branches created: %s", b)
	}
	req := records(r)
	if len(req) != 2 || !bytes.Contains(req[1], []byte("which plan mode does not allow")) {
		t.Errorf("the model was not told why (%d requests):\n%s", len(req), bytes.Join(req, []byte("\n")))
	}
}

// A background child keeps its parent's current mode: the parent runs in
// full-auto, the child waits, the host switches the parent to plan, and
// the child's next write does not happen. The control run without the
// switch writes the file (the test can fail).
//
// The same for a switch to default: the write now needs an approval, and
// nobody answers (no approvals capability), so it is denied.
func TestBackgroundChildFollowsParentToPlan(t *testing.T) {
	for _, mode := range []string{"plan", "default", ""} {
		name, switchToPlan := mode, mode != ""
		if !switchToPlan {
			name = "control"
		}
		t.Run(name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{
				Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "full-auto", "--tools", "read,write,task"},
				Script: fakeScript(t,
					callReply("task", map[string]any{"prompt": "write it", "agent": "general", "description": "w", "background": false}),
					map[string]any{"steps": []any{map[string]any{"waitFile": "go"},
						toolCallStep("write", map[string]any{"path": "bg.txt", "content": "written\n"})}},
					textReply("parent continues"),
					textReply("child finished"),
					textReply("noted")),
			})
			r.WaitFor("session_start", 1, isType("session_start"))
			r.Send(`{"id":"p","type":"prompt","message":"delegate"}`)
			r.WaitFor("subagent_start", 1, isType("subagent_start"))
			r.Poll("the child's request", func() bool { return len(records(r)) >= 2 })
			r.Send(`{"id":"b","type":"background_task"}`)
			r.WaitFor("background_task", 1, isResponse("b"))
			r.WaitFor("agent_settled", 1, isType("agent_settled"))
			if switchToPlan {
				r.Send(`{"id":"m","type":"set_permission_mode","mode":"` + mode + `"}`)
				r.WaitFor("set_permission_mode", 1, isResponse("m"))
			}
			if err := os.WriteFile(filepath.Join(r.Root, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r.WaitFor("subagent_end", 1, isType("subagent_end"))
			r.WaitFor("the notification turn", 2, isType("agent_settled"))
			_, err := os.Stat(filepath.Join(r.Work, "bg.txt"))
			switch {
			case switchToPlan && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("the background child wrote after the parent switched to %s (%v)", mode, err)
			case !switchToPlan && err != nil:
				t.Fatalf("control: the child's write did not happen: %v", err)
			}
			if mode == "plan" {
				req := records(r)
				if len(req) < 4 || !bytes.Contains(req[3], []byte("Plan mode")) {
					t.Errorf("the child was not told plan mode stopped it:\n%s", bytes.Join(req, []byte("\n")))
				}
			}
		})
	}
}

// task{taskId} continues an open child: in plan mode the continued child
// is bound by plan mode, not by the mode it was started in.
func TestContinuedChildFollowsParentToPlan(t *testing.T) {
	for _, switchToPlan := range []bool{true, false} {
		name := "plan"
		if !switchToPlan {
			name = "control"
		}
		t.Run(name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{
				Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "full-auto", "--tools", "read,write,task"},
				Script: fakeScript(t,
					callReply("task", map[string]any{"prompt": "look", "agent": "general", "background": false}),
					textReply("looked"),
					textReply("ok"),
					callReply("task", map[string]any{"taskId": "t1", "prompt": "now write", "background": false}),
					callReply("write", map[string]any{"path": "cont.txt", "content": "written\n"}),
					textReply("child answered"),
					textReply("done")),
			})
			r.WaitFor("session_start", 1, isType("session_start"))
			r.Send(`{"id":"p1","type":"prompt","message":"delegate"}`)
			r.WaitFor("agent_settled", 1, isType("agent_settled"))
			if switchToPlan {
				r.Send(`{"id":"m","type":"set_permission_mode","mode":"plan"}`)
				r.WaitFor("set_permission_mode", 1, isResponse("m"))
			}
			r.Send(`{"id":"p2","type":"prompt","message":"continue it"}`)
			r.WaitFor("agent_settled", 2, isType("agent_settled"))
			req := records(r)
			if len(req) != 7 {
				t.Fatalf("%d model requests, want 7 (the continued child ran):\n%s", len(req), bytes.Join(req, []byte("\n")))
			}
			_, err := os.Stat(filepath.Join(r.Work, "cont.txt"))
			switch {
			case switchToPlan && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("the continued child wrote in plan mode (%v)", err)
			case !switchToPlan && err != nil:
				t.Fatalf("control: the continued child's write did not happen: %v", err)
			}
			if switchToPlan && !bytes.Contains(req[5], []byte("Plan mode")) {
				t.Errorf("the child was not told plan mode stopped it:\n%s", req[5])
			}
		})
	}
}

// The switch reaches a child between two calls of one batch: the child's
// bash call blocks until the test releases it, the host switches the
// parent to plan meanwhile, and the write that follows in the same batch
// is judged again and refused. Control: without the switch it is written.
func TestChildMidBatchFollowsParentToPlan(t *testing.T) {
	for _, switchToPlan := range []bool{true, false} {
		name := "plan"
		if !switchToPlan {
			name = "control"
		}
		t.Run(name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{
				Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "full-auto", "--tools", "read,write,bash,task"},
				Script: fakeScript(t,
					callReply("task", map[string]any{"prompt": "work", "agent": "general", "background": false}),
					map[string]any{"steps": []any{
						toolCallStep("bash", map[string]any{"command": "head -c1 gofifo"}),
						toolCallStep("write", map[string]any{"path": "mid.txt", "content": "written\n"})}},
					textReply("child finished"),
					textReply("done")),
				Fifos: []string{"gofifo"},
			})
			r.WaitFor("session_start", 1, isType("session_start"))
			r.Send(`{"id":"p","type":"prompt","message":"delegate"}`)
			r.WaitFor("the child's bash call", 1, func(o *golden.Object) bool {
				return o.String("type") == "subagent_update" && o.String("toolName") == "bash"
			})
			if switchToPlan {
				r.Send(`{"id":"m","type":"set_permission_mode","mode":"plan"}`)
				r.WaitFor("set_permission_mode", 1, isResponse("m"))
			}
			// O_RDWR does not wait for the reader (Linux); the byte ends head.
			f, err := os.OpenFile(filepath.Join(r.Work, "gofifo"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			r.WaitFor("agent_settled", 1, isType("agent_settled"))
			_, err = os.Stat(filepath.Join(r.Work, "mid.txt"))
			switch {
			case switchToPlan && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("the child's write ran after the parent switched to plan (%v)", err)
			case !switchToPlan && err != nil:
				t.Fatalf("control: the child's write did not happen: %v\n%s", err, bytes.Join(records(r), []byte("\n")))
			}
		})
	}
}

// A host program (--host-cmd) is a child like the others: the environment
// it starts with, which is also the adapter's api.env, has no provider key
// while ordinary variables are kept.
func TestHostProgramGetsNoProviderKey(t *testing.T) {
	const key = "sk-fake-host-9191"
	r := golden.Start(t, golden.Config{
		Args: []string{"--mode", "rpc", "--model", "fake/echo", "--host-cmd", "env > ../host-env.txt; exit 1"},
		Env:  map[string]string{"OPENAI_API_KEY": key, "AMA_API_KEY_WORK": key, "KEEP_ME": "plain"},
	})
	r.Wait()
	b, err := os.ReadFile(filepath.Join(r.Root, "host-env.txt"))
	if err != nil {
		t.Fatalf("the host program did not start: %v\n%s", err, r.Stderr())
	}
	if bytes.Contains(b, []byte(key)) || !bytes.Contains(b, []byte("KEEP_ME=plain")) {
		t.Fatalf("host program environment:\n%s", b)
	}
}

// ama-rpc creates .ama/worktrees on its own account: a link planted at
// .ama that leads out of the repository, or a core.worktree that names
// another directory, makes the task fail and nothing is created outside.
func TestWorktreeIsolationCreatesNothingOutside(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, r *golden.Run)
	}{
		// Planted after start-up (as a command would): a project .ama that
		// leads out at start-up is refused as configuration already.
		{name: "link at .ama", setup: func(t *testing.T, r *golden.Run) {
			if err := os.Symlink(filepath.Join(r.Root, "outside"), filepath.Join(r.Work, ".ama")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "core.worktree elsewhere", setup: func(t *testing.T, r *golden.Run) {
			other := filepath.Join(r.Root, "outside", "other") // another repository
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			gitIn(t, other, "init", "-q", "-b", "main")
			gitIn(t, other, "commit", "-q", "--allow-empty", "-m", "other")
			gitIn(t, r.Work, "config", "core.worktree", other)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{
				Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "full-auto", "--tools", "read,write,task"},
				Script: fakeScript(t,
					callReply("task", map[string]any{"prompt": "change it", "agent": "general", "background": false, "isolation": "worktree"}),
					textReply("child"),
					textReply("done")),
				Files: map[string]string{"a.txt": "a\n"},
				Dirs:  []string{"outside"},
			})
			gitIn(t, r.Work, "init", "-q", "-b", "main")
			gitIn(t, r.Work, "add", "a.txt")
			gitIn(t, r.Work, "commit", "-q", "-m", "base")
			r.WaitFor("session_start", 1, isType("session_start"))
			if c.setup != nil {
				c.setup(t, r)
			}
			r.Send(`{"id":"p","type":"prompt","message":"isolate"}`)
			r.WaitFor("agent_settled", 1, isType("agent_settled"))
			_ = filepath.WalkDir(filepath.Join(r.Root, "outside"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && (d.Name() == ".ama" || d.Name() == "worktrees") {
					t.Errorf("ama-rpc created %s outside the repository", p)
				}
				return nil
			})
			if b := gitIn(t, r.Work, "branch", "--list", "ama/*"); strings.TrimSpace(b) != "" {
				t.Errorf("branches created: %s", b)
			}
			if req := records(r); len(req) != 2 || !bytes.Contains(req[1], []byte("The sub-agent could not start")) {
				t.Errorf("the task did not fail (%d requests)", len(req))
			}
		})
	}
}

//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/sandbox"
)

// TestJailGitRedirectStopsTheCommand: a .git/commondir, config.worktree
// or missing config cannot be planted at all: the jail made them before
// the command started, with content that changes nothing for git, and
// read-only, so the write, rename, link or symlink is refused outright
// (no instant exists in which a git outside could follow a planted one);
// the rest of the command (a block on a FIFO nobody writes, then a marker)
// never runs, the placeholders hold their harmless content, and git
// outside runs nothing of the attacker's.
func TestJailGitRedirectStopsTheCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, tc := range []struct{ name, plant string }{
		{"commondir", "printf '../evil\\n' > .git/commondir"},
		{"commondir renamed in", "printf '../evil\\n' > x && mv x .git/commondir"},
		{"commondir hard link", "printf '../evil\\n' > x && ln x .git/commondir"},
		{"commondir symlink", "ln -s ../evil/.x .git/commondir"},
		{"config.worktree", "printf '[core]\\n\\tfsmonitor = \"touch MARK\"\\n' > .git/config.worktree"},
		{"missing config", "rm -f .git/config 2>/dev/null; printf '[core]\\n\\tfsmonitor = \"touch MARK\"\\n' > .git/config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			rt := runtimeFor(t, bashSettings, w)
			if !rt.Status().Namespaces {
				t.Skipf("no user namespaces: %s", rt.Status().Detail)
			}
			writeFile(t, filepath.Join(w.home, ".gitconfig"), "[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
			if err := os.RemoveAll(filepath.Join(w.project, ".git")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(w.project, "a.txt"), "a\n")
			w.git(t, "init", "-q")
			w.git(t, "add", "a.txt")
			w.git(t, "commit", "-qm", "first")
			if tc.name == "missing config" {
				if err := os.Remove(filepath.Join(w.project, ".git", "config")); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mkfifo(filepath.Join(w.project, "fifo"), 0o600); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(w.root, "ran")
			plant := strings.ReplaceAll(tc.plant, "MARK", marker)
			script := strings.Join([]string{
				"mkdir -p evil/hooks && cp -r .git/objects .git/refs .git/HEAD evil/",
				`printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ` + marker + `; false"\n' > evil/config`,
				plant + " || exit 3", // refused outright (a hard link into the .git mount: EXDEV)
				"read x < fifo",      // blocks: only a kill ends it
				"touch after",
			}, "\n")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
			cmd.Dir = w.project
			cmd.Env = append(os.Environ(), "HOME="+w.home)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			release, err := rt.For(w.project, "", false).Wrap(cmd)
			if err != nil {
				t.Fatal(err)
			}
			err = cmd.Start()
			release()
			if err == nil {
				err = cmd.Wait()
			}
			if ctx.Err() != nil {
				t.Fatalf("the command was not stopped when it planted the file: %s", out.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Errorf("want the plant refused (exit 3), got %v: %s", err, out.String())
			}
			t.Logf("exit %v: %s", err, out.String())
			if exists(filepath.Join(w.project, "after")) {
				t.Error("the command went on after planting")
			}
			for rel, want := range sandbox.PlaceholderFiles {
				if rel == ".git/config" && tc.name != "missing config" {
					continue
				}
				if b, err := os.ReadFile(filepath.Join(w.project, rel)); err != nil || string(b) != want {
					t.Errorf("%s = %q (%v), want the placeholder %q", rel, b, err, want)
				}
			}
			w.git(t, "status")
			w.git(t, "commit", "-q", "--allow-empty", "-m", "after")
			if exists(marker) {
				t.Error("git outside ran the attacker's program")
			}
		})
	}
}

// TestProjectAmaUncreatable: a project without .ama cannot get one from a
// sandboxed command (it would plant project config, hooks, agents or
// skills that ama-rpc reads at its next start), in the jail (an empty,
// read-only .ama is made) and without namespaces (the project root takes
// no new entries).
func TestProjectAmaUncreatable(t *testing.T) {
	w0 := newWorld(t)
	modes(t, w0, func(t *testing.T, rt *sandbox.Runtime, jail bool) {
		w := newWorld(t)
		if err := os.RemoveAll(filepath.Join(w.project, ".ama")); err != nil {
			t.Fatal(err)
		}
		rt = sandbox.New(bashSettings, selfExe(t), w.dirs())
		if !jail {
			rt = sandbox.NewWithoutNamespaces(bashSettings, selfExe(t), w.dirs())
		}
		c := rt.For(w.project, "", false)
		for _, script := range []string{
			"mkdir -p .ama && echo '{}' > .ama/hooks.json",
			"mkdir -p x/skills && echo '{}' > x/hooks.json && mv x .ama",
			"rmdir .ama; mkdir .ama; echo '{}' > .ama/config.json",
			"ln -s x .ama; mkdir -p x; echo '{}' > x/hooks.json",
			"echo ok > plain.txt",
		} {
			out, _ := w.sh(t, c, script)
			for _, p := range []string{"hooks.json", "config.json", "skills"} {
				if exists(filepath.Join(w.project, ".ama", p)) {
					t.Errorf("%q planted .ama/%s: %s", script, p, out)
				}
			}
		}
		if fi, err := os.Lstat(filepath.Join(w.project, ".ama")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t.Error(".ama became a link")
		}
		if jail && !exists(filepath.Join(w.project, "plain.txt")) {
			t.Error("an ordinary write in the project failed")
		}
	})
}

// TestProjectAmaLinkKept: a project whose .ama is a link inside it (to
// conf/ama) keeps it: the link cannot be swapped for a directory holding
// planted hooks (the command is stopped and the link put back).
func TestProjectAmaLinkKept(t *testing.T) {
	w := newWorld(t)
	rt := runtimeFor(t, bashSettings, w)
	if !rt.Status().Namespaces {
		t.Skipf("no user namespaces: %s", rt.Status().Detail)
	}
	ama := filepath.Join(w.project, ".ama")
	if err := os.RemoveAll(ama); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.project, "conf", "ama"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("conf/ama", ama); err != nil {
		t.Fatal(err)
	}
	c := rt.For(w.project, "", false)
	for _, script := range []string{
		"rm .ama && mkdir .ama && echo '{}' > .ama/hooks.json",
		"mkdir x && echo '{}' > x/hooks.json && mv -T x .ama",
		"ln -sfn x .ama; mkdir -p x; echo '{}' > x/hooks.json",
		"echo '{}' > .ama/hooks.json",
	} {
		out, _ := w.sh(t, c, script)
		t.Logf("%q: %s", script, out)
		if target, err := os.Readlink(ama); err != nil || target != "conf/ama" {
			t.Errorf("%q replaced the .ama link (%q, %v): %s", script, target, err, out)
			_ = os.RemoveAll(ama)
			_ = os.Symlink("conf/ama", ama)
		}
		if exists(filepath.Join(w.project, "conf", "ama", "hooks.json")) {
			t.Errorf("%q wrote through the link: %s", script, out)
		}
	}
}

// TestJailGitInitKept: in a project without .git, a repository the command
// makes with git init is its own: nothing guards or removes its config.
func TestJailGitInitKept(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	w := newWorld(t)
	rt := runtimeFor(t, bashSettings, w)
	if !rt.Status().Namespaces {
		t.Skipf("no user namespaces: %s", rt.Status().Detail)
	}
	writeFile(t, filepath.Join(w.home, ".gitconfig"), "[user]\n\tname = T\n\temail = t@example.com\n")
	if err := os.RemoveAll(filepath.Join(w.project, ".git")); err != nil {
		t.Fatal(err)
	}
	out, code := w.sh(t, rt.For(w.project, "", false), "git init -q && echo a > a && git add a && git commit -qm one")
	if code != 0 || !exists(filepath.Join(w.project, ".git", "config")) {
		t.Errorf("git init in the sandbox lost its config (%d): %s", code, out)
	}
	if log := w.git(t, "log", "--oneline"); !strings.Contains(log, "one") {
		t.Errorf("the commit is not there: %s", log)
	}
}

// TestAgentConfigUnplantable: the project files through which an external
// agent CLI (started outside the sandbox) runs programs cannot be created
// or changed by a sandboxed command, whether they are missing (the jail's
// init stops the command and removes what it made; nothing is created in
// advance) or present (read-only): .claude/settings.json hooks,
// .claude/settings.local.json, .mcp.json, .gemini/settings.json,
// .codex/config.toml, .opencode/plugins, opencode.json. Both with
// namespaces and with Landlock only.
func TestAgentConfigUnplantable(t *testing.T) {
	const evil = `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch MARK"}]}]}}`
	plants := []struct{ path, script string }{
		{".claude/settings.json", "mkdir -p .claude && echo '" + evil + "' > .claude/settings.json"},
		{".claude/settings.local.json", "mkdir -p .claude && echo '" + evil + "' > .claude/settings.local.json"},
		{".claude/settings.json", "mkdir -p x && echo '" + evil + "' > x/settings.json && mv x .claude"},
		{".claude/settings.json", "mkdir -p x && echo '" + evil + "' > x/settings.json && ln -s x .claude"},
		{".mcp.json", `echo '{"mcpServers":{"x":{"command":"touch","args":["MARK"]}}}' > .mcp.json`},
		{".gemini/settings.json", `mkdir -p .gemini && echo '{"mcpServers":{"x":{"command":"touch MARK"}}}' > .gemini/settings.json`},
		{".gemini/.env", `mkdir -p .gemini && echo 'GEMINI_CLI_SYSTEM_SETTINGS_PATH=/x' > .gemini/.env`},
		{".qwen/settings.json", `mkdir -p .qwen && echo '{}' > .qwen/settings.json`},
		{".codex/config.toml", `mkdir -p .codex && printf '[mcp_servers.x]\ncommand = "touch"\n' > .codex/config.toml`},
		{".opencode/plugins/x.js", `mkdir -p .opencode/plugins && echo 'x' > .opencode/plugins/x.js`},
		{"opencode.json", `echo '{"plugin":["x"]}' > opencode.json`},
		{"opencode.jsonc", `echo '{"plugin":["x"]}' > opencode.jsonc`},
	}
	w0 := newWorld(t)
	modes(t, w0, func(t *testing.T, _ *sandbox.Runtime, jail bool) {
		for _, present := range []bool{false, true} {
			w := newWorld(t)
			if present { // the project has its own agent settings
				for _, d := range []string{".claude", ".gemini", ".qwen", ".codex", ".opencode"} {
					if err := os.MkdirAll(filepath.Join(w.project, d), 0o755); err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(w.project, d, "keep"), "mine\n")
				}
				for _, f := range []string{".mcp.json", "opencode.json", "opencode.jsonc"} {
					writeFile(t, filepath.Join(w.project, f), "{}\n")
				}
			}
			rt := sandbox.New(bashSettings, selfExe(t), w.dirs())
			if !jail {
				rt = sandbox.NewWithoutNamespaces(bashSettings, selfExe(t), w.dirs())
			}
			c := rt.For(w.project, "", false)
			for _, pl := range plants {
				out, _ := w.sh(t, c, pl.script)
				b, err := os.ReadFile(filepath.Join(w.project, pl.path))
				if err == nil && string(b) != "{}\n" {
					t.Errorf("present=%v: %q planted %s: %s", present, pl.script, pl.path, out)
				}
			}
			for _, d := range []string{".claude", ".gemini", ".qwen", ".codex", ".opencode", ".mcp.json", "opencode.json", "opencode.jsonc"} {
				fi, err := os.Lstat(filepath.Join(w.project, d))
				switch {
				case !present && err == nil:
					t.Errorf("%s exists in a project that had none (littered or planted)", d)
				case present && (err != nil || fi.Mode()&os.ModeSymlink != 0):
					t.Errorf("present=%v: %s was removed or replaced (%v)", present, d, err)
				}
			}
			if present && readOr(filepath.Join(w.project, ".claude", "keep")) != "mine\n" {
				t.Error(".claude/keep changed")
			}
			if out, _ := w.sh(t, c, "echo ok > plain.txt"); jail && !exists(filepath.Join(w.project, "plain.txt")) {
				t.Errorf("an ordinary write in the project failed: %s", out)
			}
		}
	})
}

func readOr(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/internal/secrets"
	"github.com/armadra/ama-rpc/sandbox"
	"github.com/armadra/ama-rpc/sandbox/launcher"
)

// TestAgentEnvUnplantable: the dotenv files an external agent CLI loads at
// start outside the sandbox (secrets.AgentEnvFiles: Gemini CLI and Qwen
// Code read .env, Bun-built CLIs also .env.local and .env.<NODE_ENV>
// [.local]) cannot be written or created by a sandboxed command, however it
// names or reaches them: a redirect, python with the name built from
// pieces, mv, cp, ln -s or ln onto it, a link to it made first, a hard
// link to it, a directory in its place, renaming it away. The command
// fails: missing, the jail's init stops it (exit 126) and removes what it
// made; present, the file (or the target of a .env link) is read-only and
// keeps its content. Templates (.env.example, .env.sample) stay writable.
// Both with namespaces and with Landlock only (where the project root takes
// no new entries at all).
func TestAgentEnvUnplantable(t *testing.T) {
	const evil = "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9/"
	type plant struct {
		script  string // {T} is the target's name, {E} the line
		needsIt bool   // does nothing when the target is missing
	}
	plants := []plant{
		{script: "echo {E} > {T}"},
		{script: "echo {E} >> {T}"},
		{script: "echo {E} > {S}/y && mv -f {S}/y {T}"},
		{script: "echo {E} > {S}/y && cp {S}/y {T}"},
		{script: "echo {E} > {S}/y && ln -sf {S}/y {T}"},
		{script: "echo {E} > {S}/y && ln -f {S}/y {T}"},
		{script: `ln -s "$PWD/{T}" {S}/lnk; echo {E} > {S}/lnk`},
		{script: "rm -rf {T}; mkdir {T}"},
		{script: "ln {T} {S}/hard && echo {E} >> {S}/hard", needsIt: true},
		{script: "mv {T} {S}/away && echo {E} > {T}", needsIt: true},
	}
	if py, err := exec.LookPath("python3"); err == nil {
		plants = append(plants, plant{script: py + ` -c "n = '.e' + 'nv'; open(n, 'a').write('{E}\n')"`})
	}
	w0 := newWorld(t)
	modes(t, w0, func(t *testing.T, _ *sandbox.Runtime, jail bool) {
		for _, state := range []string{"missing", "present", "link"} {
			w := newWorld(t)
			// Written before the command by the user; each must survive.
			writeFile(t, filepath.Join(w.project, ".env.example"), "A=1\n")
			switch state {
			case "present":
				for _, f := range secrets.AgentEnvFiles {
					writeFile(t, filepath.Join(w.project, f), "KEEP=1\n")
				}
			case "link": // .env -> cfg/dev.env, made by the project
				if err := os.Mkdir(filepath.Join(w.project, "cfg"), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(w.project, "cfg", "dev.env"), "KEEP=1\n")
				if err := os.Symlink("cfg/dev.env", filepath.Join(w.project, ".env")); err != nil {
					t.Fatal(err)
				}
			}
			rt := sandbox.New(bashSettings, selfExe(t), w.dirs())
			if !jail {
				rt = sandbox.NewWithoutNamespaces(bashSettings, selfExe(t), w.dirs())
			}
			c := rt.For(w.project, "", false)
			type attempt struct{ target, script string }
			var attempts []attempt
			for _, pl := range plants {
				if !pl.needsIt || state != "missing" {
					attempts = append(attempts, attempt{".env", pl.script})
				}
			}
			if state != "link" {
				for _, f := range secrets.AgentEnvFiles[1:] {
					attempts = append(attempts, attempt{f, plants[0].script})
				}
			}
			for i := range attempts { // {S}: a scratch directory of its own
				a := &attempts[i]
				a.script = "mkdir -p src/" + strconv.Itoa(i) + "; " + strings.NewReplacer("{E}", evil, "{T}", a.target, "{S}", "src/"+strconv.Itoa(i)).Replace(a.script)
			}
			if jail && state != "present" {
				// The init stops the command at a plant (a missing
				// file created, the .env link replaced): one command
				// each.
				for _, a := range attempts {
					out, code := w.sh(t, c, a.script)
					switch {
					case code == 0:
						t.Errorf("%s: %q succeeded: %s", state, a.script, out)
					case state == "missing" && code != 126:
						t.Errorf("%s: %q was not stopped by the jail's guard (exit %d, want 126): %s", state, a.script, code, out)
					}
					w.checkEnvFile(t, state, a.target, a.script)
				}
			} else {
				// Nothing stops the command: one command makes every
				// attempt, each in a subshell, and reports each status.
				var b strings.Builder
				for i, a := range attempts {
					fmt.Fprintf(&b, "(%s) >/dev/null 2>&1; echo \"rc %d $?\"\n", a.script, i)
				}
				out, _ := w.sh(t, c, b.String())
				for i, a := range attempts {
					if !strings.Contains(out, fmt.Sprintf("rc %d ", i)) || strings.Contains(out, fmt.Sprintf("rc %d 0\n", i)) {
						t.Errorf("%s: %q did not fail: %s", state, a.script, out)
					}
					w.checkEnvFile(t, state, a.target, a.script)
				}
			}
			// Templates are loaded by none of the CLIs: everyday content.
			if out, code := w.sh(t, c, "echo B=2 >> .env.example"); code != 0 || readOr(filepath.Join(w.project, ".env.example")) != "A=1\nB=2\n" {
				t.Errorf("%s: .env.example is not writable (exit %d): %s", state, code, out)
			}
			if jail {
				if out, code := w.sh(t, c, "cp .env.example .env.sample"); code != 0 || !exists(filepath.Join(w.project, ".env.sample")) {
					t.Errorf("%s: .env.sample cannot be created (exit %d): %s", state, code, out)
				}
			}
		}
	})
}

// checkEnvFile fails the test when target is not as the world's state made
// it: missing, KEEP=1 in a regular file, or (.env in state link) the same
// link to a file that still holds KEEP=1.
func (w world) checkEnvFile(t *testing.T, state, target, script string) {
	t.Helper()
	p := filepath.Join(w.project, target)
	fi, err := os.Lstat(p)
	switch {
	case state == "missing":
		if err == nil {
			t.Errorf("%q created %s (%v)", script, target, fi.Mode())
			_ = os.RemoveAll(p)
		}
	case err != nil:
		t.Errorf("%s: %q removed %s: %v", state, script, target, err)
	case state == "link" && target == ".env":
		if l, err := os.Readlink(p); err != nil || l != "cfg/dev.env" {
			t.Errorf("%s: %q replaced the .env link (%q, %v)", state, script, l, err)
		}
		if b := readOr(filepath.Join(w.project, "cfg", "dev.env")); b != "KEEP=1\n" {
			t.Errorf("%s: %q changed the .env link's target: %q", state, script, b)
		}
	case !fi.Mode().IsRegular():
		t.Errorf("%s: %q replaced %s by %v", state, script, target, fi.Mode())
	default:
		if b := readOr(p); b != "KEEP=1\n" {
			t.Errorf("%s: %q changed %s: %q", state, script, target, b)
		}
	}
}

// TestParentAgentEnvUnplantable: with a writable tree above the project (a
// sandbox.writable ~/code for the project ~/code/sub/proj), a sandboxed
// command can neither plant what Gemini CLI and Qwen Code read in the
// directories above their working directory (.env, .gemini/.env,
// .qwen/.env: secrets.AgentParentPaths) nor rename a directory leading to
// the project away to put one of its own, with planted settings, at the
// session's path. The rest of the tree stays writable. Both with namespaces
// (pinned directories, the init's guard) and with Landlock only (the
// directories leading to the project take no new entries).
func TestParentAgentEnvUnplantable(t *testing.T) {
	const evil = "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9/"
	w0 := newWorld(t)
	modes(t, w0, func(t *testing.T, _ *sandbox.Runtime, jail bool) {
		w := newWorld(t)
		tree := filepath.Join(w.root, "code")
		for _, d := range []string{filepath.Join(tree, "sub"), filepath.Join(tree, "other")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(w.project, filepath.Join(tree, "sub", "proj")); err != nil {
			t.Fatal(err)
		}
		w.project = filepath.Join(tree, "sub", "proj")
		s := bashSettings
		s.Writable = []string{tree}
		rt := sandbox.New(s, selfExe(t), w.dirs())
		if !jail {
			rt = sandbox.NewWithoutNamespaces(s, selfExe(t), w.dirs())
		}
		c := rt.For(w.project, "", false)
		for _, tc := range []struct{ script, planted string }{
			{"echo " + evil + " > ../.env", "sub/.env"},
			{"echo " + evil + " > ../../.env", ".env"},
			{"mkdir -p ../.gemini && echo " + evil + " > ../.gemini/.env", "sub/.gemini"},
			{"mkdir -p ../../.qwen && echo " + evil + " > ../../.qwen/.env", ".qwen"},
			{"echo " + evil + " > ../../other/x && mv ../../other/x ../.env", "sub/.env"},
			{"cd ../.. && mv sub sub.old && mkdir -p sub/proj && echo " + evil + " > sub/proj/.env", "sub.old"},
			{"cd .. && mv proj proj.old && mkdir proj && echo " + evil + " > proj/.env", "sub/proj.old"},
		} {
			out, code := w.sh(t, c, tc.script)
			switch {
			case code == 0:
				t.Errorf("%q succeeded: %s", tc.script, out)
			case jail && strings.Contains(tc.script, "> ../") && code != 126:
				t.Errorf("%q was not stopped by the jail's guard (exit %d, want 126): %s", tc.script, code, out)
			}
			if exists(filepath.Join(tree, tc.planted)) {
				t.Errorf("%q left %s", tc.script, tc.planted)
			}
			if !exists(filepath.Join(w.project, ".git", "config")) || exists(filepath.Join(w.project, ".env")) {
				t.Errorf("%q moved or replaced the project", tc.script)
			}
		}
		if out, code := w.sh(t, c, "echo ok > ../../other/y && echo ok > src/z"); code != 0 {
			t.Errorf("the rest of the writable tree is not writable (exit %d): %s", code, out)
		}
	})
}

// TestGuardKeepsWhatOthersWrote: a .env written outside the sandbox (the
// user, an approved write tool) while a sandboxed job that started without
// one runs stops that job, as a plant would (the guard cannot tell who made
// it), but is moved aside, not lost.
func TestGuardKeepsWhatOthersWrote(t *testing.T) {
	w := newWorld(t)
	rt := runtimeFor(t, bashSettings, w)
	if !rt.Status().Namespaces {
		t.Skipf("no user namespaces: %s", rt.Status().Detail)
	}
	for _, f := range []string{"ready", "go"} {
		if err := syscall.Mkfifo(filepath.Join(w.project, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := rt.For(w.project, "", false)
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, code := w.sh(t, c, "echo ready > ready; read x < go")
		done <- result{out, code}
	}()
	ready, err := os.ReadFile(filepath.Join(w.project, "ready")) // blocks until the job runs
	if err != nil || string(ready) != "ready\n" {
		t.Fatalf("ready: %q %v", ready, err)
	}
	writeFile(t, filepath.Join(w.project, ".env"), "USER=1\n")
	// The job is stopped by now or soon; if it still reads, let it end.
	if f, err := os.OpenFile(filepath.Join(w.project, "go"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		_, _ = f.WriteString("go\n")
		f.Close()
	}
	r := <-done
	if r.code != 126 {
		t.Errorf("exit %d, want 126: %s", r.code, r.out)
	}
	if exists(filepath.Join(w.project, ".env")) {
		t.Error(".env stands after the job")
	}
	if b := readOr(filepath.Join(w.project, ".env"+launcher.AsideSuffix)); b != "USER=1\n" {
		t.Errorf("the .env written outside was lost: %q (%s)", b, r.out)
	}
}

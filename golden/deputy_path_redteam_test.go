//go:build unix

package golden_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The programs ama-rpc starts on its own account (the host adapter's node,
// the bash tool's shell, the probe of external agent CLIs, its own git)
// are looked up on PATH. A project's own directories are often on it (an
// activated .venv/bin, direnv's bin, node_modules/.bin, or a relative
// entry), and the model or a sandboxed command writes there: a program
// planted in them would run outside the sandbox and outside any verdict.
// The real binary runs in the project directory (so relative PATH entries
// mean the project, as for a user) with such a PATH; every planted program
// leaves a marker outside the project when it runs. Everyday: the host
// adapter started, the bash call ran and get_agents answered.
func TestDeputyPlantedProgramsOnPath(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns the binary")
	}
	for _, p := range []string{"node", "bash"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed", p)
		}
	}
	bin := buildBinary(t)
	root := t.TempDir()
	home, work, marks := filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "marks")
	for _, d := range []string{home, work, marks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Planted in an absolute and in a relative PATH entry of the project.
	for _, dir := range []string{".venv/bin", "bin"} {
		d := filepath.Join(work, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, prog := range []string{"node", "bash", "sh", "git", "codex", "claude"} {
			mark := filepath.Join(marks, strings.ReplaceAll(dir, "/", "_")+"-"+prog)
			script := "#!/bin/sh\ntouch '" + mark + "'\n"
			if real, err := exec.LookPath(prog); err == nil {
				script += "exec '" + real + "' \"$@\"\n" // the attack keeps things working
			}
			if err := os.WriteFile(filepath.Join(d, prog), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	started := filepath.Join(marks, "..", "adapter-created")
	adapter := filepath.Join(root, "adapter.cjs")
	if err := os.WriteFile(adapter, []byte(`module.exports = {hostApi: 1, create(api) {
  require("fs").writeFileSync(`+jsString(started)+`, "ok");
}};
`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "script.json")
	record := filepath.Join(root, "record.jsonl")
	if err := os.WriteFile(script, fakeScript(t,
		callReply("bash", map[string]any{"command": "echo everyday-$((40+2))"}),
		textReply("done")), 0o644); err != nil {
		t.Fatal(err)
	}
	sep := string(os.PathListSeparator)
	cmd := exec.Command(bin, "--model", "fake/echo", "--host", adapter, "--tools", "read,bash,task", "--permission-mode", "full-auto")
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "AMA_LANG=en", "AMA_NO_SANDBOX_SELFTEST=1",
		"AMA_FAKE_SCRIPT=" + script, "AMA_FAKE_RECORD=" + record,
		"PATH=" + filepath.Join(work, ".venv", "bin") + sep + "bin" + sep + os.Getenv("PATH")}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	send(`{"id":"p","type":"prompt","message":"run it"}`)
	asked := 0
	probed := false
	for !probed && sc.Scan() {
		var v struct {
			Type string          `json:"type"`
			ID   string          `json:"id"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		switch {
		case v.Type == "agent_settled":
			asked++
			send(`{"id":"ag","type":"get_agents"}`)
		case v.Type == "response" && v.ID == "ag":
			// The probe runs in the background: ask until it answered.
			if bytes.Contains(v.Data, []byte(`"installed"`)) {
				probed = true
				break
			}
			if asked++; asked > 5000 {
				t.Fatal("the probe never finished")
			}
			send(`{"id":"ag","type":"get_agents"}`)
		}
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	if !probed {
		t.Fatalf("no get_agents answer with the probe's result\nstderr:\n%s", stderr.String())
	}
	if ents, _ := os.ReadDir(marks); len(ents) > 0 {
		var ran []string
		for _, e := range ents {
			ran = append(ran, e.Name())
		}
		t.Errorf("ama-rpc ran programs planted on PATH inside the project: %s", strings.Join(ran, ", "))
	}
	if _, err := os.Stat(started); err != nil {
		t.Errorf("everyday: the host adapter did not start (%v)\nstderr:\n%s", err, stderr.String())
	}
	if b, _ := os.ReadFile(record); !bytes.Contains(b, []byte("everyday-42")) {
		t.Errorf("everyday: the bash call's output did not reach the model:\n%s\nstderr:\n%s", b, stderr.String())
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

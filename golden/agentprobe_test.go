package golden_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// With the probe on, a codex program on the session's PATH is described in
// the task tool and listed by get_agents with installed and version once
// the background probe is done; drivers.json keeps the version.
func TestGetAgentsProbesPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho 'codex-cli 0.171.3'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--tools", "read,task"},
		Env:  map[string]string{"AMA_NO_AGENT_PROBE": "0", "PATH": bin + string(os.PathListSeparator) + os.Getenv("PATH")},
	})
	r.Send(`{"id":"tl","type":"get_tools"}`)
	r.WaitFor("tools", 1, func(o *golden.Object) bool { return o.String("id") == "tl" })
	// The probe runs in the background: ask until it has answered.
	for i := 0; ; i++ {
		id := "ag" + strconv.Itoa(i)
		r.Send(`{"id":"` + id + `","type":"get_agents"}`)
		r.WaitFor("agents", 1, func(o *golden.Object) bool { return o.String("id") == id })
		if strings.Contains(string(r.Lines()[len(r.Lines())-1]), `"installed"`) {
			break
		}
		if i == 2000 {
			t.Fatal("the probe never finished")
		}
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	lines := r.Lines()
	last := string(lines[len(lines)-1])
	for _, want := range []string{
		`{"name":"general",`,
		`{"name":"codex","description":"External Codex CLI: it works with its own login, model and permission settings; put the full instructions in the prompt.","runner":"codex","source":"builtin","installed":true,"version":"0.171.3"}`,
		`{"name":"claude","description":"Claude Code","runner":"claude","source":"builtin","installed":false}`,
		`{"name":"acp:ama","description":"ama","runner":"acp:ama","source":"builtin","installed":false}`,
	} {
		if !strings.Contains(last, want) {
			t.Errorf("missing %s in\n%s", want, last)
		}
	}
	var tools string
	for _, l := range lines {
		if strings.Contains(string(l), `"id":"tl"`) {
			tools = string(l)
		}
	}
	if !strings.Contains(tools, `- codex: External Codex CLI`) || strings.Contains(tools, `- claude:`) {
		t.Errorf("task description: %s", tools)
	}
	data, err := os.ReadFile(filepath.Join(r.Home, ".local", "share", "ama", "drivers.json"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(r.Home, "*", "*", "*", "drivers.json"))
		t.Fatalf("drivers.json: %v (found %v)", err, matches)
	}
	if !strings.Contains(string(data), `"version": "0.171.3"`) {
		t.Errorf("drivers.json %s", data)
	}
}

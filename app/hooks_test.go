package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

// explain --hooks runs the PreToolUse hooks and shows their verdict folded
// into the pipeline's.
func TestExplainHooks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hooks.json")
	doc := `{"version":1,"hooks":{"PreToolUse":[
		{"matcher":"bash(git push*)","hooks":[{"type":"command","command":"echo no pushes >&2; exit 2"}]},
		{"matcher":"write","hooks":[{"type":"command","command":"echo '{\"decision\":\"allow\",\"reason\":\"ok\"}'"}]},
		{"matcher":"read","hooks":[{"type":"command","command":"echo '{\"decision\":\"ask\",\"reason\":\"check\"}'"}]}]}}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runExplain(t, []string{"--hooks", file}, `{"tool":"bash","input":{"command":"git push origin main"}}
{"tool":"write","input":{"path":"a.txt","content":"x"}}
{"tool":"read","input":{"path":"a.txt"}}
{"tool":"bash","input":{"command":"git push --force"}}
{"tool":"grep","input":{"pattern":"x"}}
`)
	want := []struct{ decision, layer, hook string }{
		{"deny", "hook", "deny"}, {"allow", "hook", "allow"}, {"ask", "hook", "ask"}, {"deny", "hook", "deny"}, {"allow", "mode", ""},
	}
	for i, w := range want {
		h, _ := got[i]["hook"].(map[string]any)
		hd, _ := h["decision"].(string)
		if got[i]["decision"] != w.decision || got[i]["layer"] != w.layer || hd != w.hook {
			t.Errorf("line %d: %v", i, got[i])
		}
	}
	if got[0]["reason"] != "no pushes" {
		t.Errorf("deny reason: %v", got[0]["reason"])
	}
	// Unattended, the hook's ask is a deny.
	got = runExplain(t, []string{"--hooks", file, "--unattended"}, `{"tool":"read","input":{"path":"a.txt"}}`+"\n")
	if got[0]["decision"] != "deny" {
		t.Errorf("unattended ask: %v", got[0])
	}
}

// A hooks file error is exit 3 naming the file and the JSON path.
func TestHooksFileErrorExit3(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "ama")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(cfg, "hooks.json")
	os.WriteFile(file, []byte(`{"version":1,"hooks":{"PreToolUse":[{"matcher":"/(/","hooks":[]}]}}`), 0o644)
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{
		Args: []string{"--model", "fake/echo"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, Cwd: t.TempDir(),
	})
	if code != app.ExitConfig || !strings.Contains(errb.String(), file+": hooks.PreToolUse[0].matcher:") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

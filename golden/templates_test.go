package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// Prompt templates (issue 33): the notices of skipped files, the links a
// project or an attacker can plant, edits after startup, the hook's view
// and ACP's command list. The expansions and get_commands themselves are
// the goldens templates and templates-untrusted.

const templateSecret = "TEMPLATE-SECRET-51c2e"

// promptAndSettle sends a prompt and waits for the n-th agent_settled.
func promptAndSettle(r *golden.Run, id, text string, n int) {
	b, _ := json.Marshal(text)
	r.Send(`{"id":"` + id + `","type":"prompt","message":` + string(b) + `}`)
	r.WaitFor("settled", n, func(o *golden.Object) bool { return o.String("type") == "agent_settled" && o.String("sessionId") == "" })
}

// prompts are the before_agent_start prompts of the run, in order.
func prompts(r *golden.Run) []string {
	var out []string
	for _, l := range r.Lines() {
		var m struct{ Type, Prompt string }
		if json.Unmarshal(l, &m) == nil && m.Type == "before_agent_start" {
			out = append(out, m.Prompt)
		}
	}
	return out
}

func finish(t *testing.T, r *golden.Run) {
	t.Helper()
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
}

// Each skipped file is reported once on stderr and the run goes on; an
// untrusted project's directory is one warning.
func TestTemplateNotices(t *testing.T) {
	files := map[string]string{
		"../home/.config/ama/prompts/Bad Name.md": "x\n",
		"../home/.config/ama/prompts/fix.md":      "user fix\n",
		"../home/.config/ama/prompts/latin1.md":   "caf\xe9\n",
		"../home/.config/ama/prompts/huge.md":     strings.Repeat("x", 300<<10),
		".ama/prompts/fix.md":                     "project fix\n",
	}
	for _, tc := range []struct {
		name  string
		args  []string
		once  []string
		never []string
	}{
		{"trusted", []string{"--trust"},
			[]string{`invalid command name "Bad Name"`, `prompt "/fix" already defined at`, "latin1.md: skipped: not valid UTF-8", "huge.md: skipped: file too large"},
			[]string{"not trusted"}},
		{"untrusted", nil,
			[]string{`invalid command name "Bad Name"`, "prompts are skipped: the project is not trusted"},
			[]string{"already defined"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{Args: append([]string{"--model", "fake/echo"}, tc.args...), Files: files})
			r.Send(`{"id":"c","type":"get_commands"}`)
			r.WaitFor("get_commands", 1, func(o *golden.Object) bool { return o.String("id") == "c" })
			finish(t, r)
			stderr := r.Stderr()
			for _, w := range tc.once {
				if n := strings.Count(stderr, w); n != 1 {
					t.Errorf("%q reported %d times, want once; stderr:\n%s", w, n, stderr)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(stderr, w) {
					t.Errorf("%q reported; stderr:\n%s", w, stderr)
				}
			}
			for _, l := range r.Lines() {
				if strings.Contains(string(l), `"get_commands"`) && (strings.Contains(string(l), "Bad Name") || strings.Contains(string(l), "latin1") || strings.Contains(string(l), "huge")) {
					t.Errorf("a skipped template is listed: %s", l)
				}
			}
		})
	}
}

// A template that is a link to a private key, to a file outside the
// project, or (in the user's directory) to the API key next door is never
// read: the secret reaches neither stdout nor the model; the prompt goes
// to the model as typed.
func TestTemplateSecretLinks(t *testing.T) {
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--trust"},
		Script: []byte(`[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"}]`),
		Files: map[string]string{
			"../home/.ssh/id_rsa":              templateSecret,
			"../outside.md":                    templateSecret,
			"../home/.config/ama/auth.json":    `{"fake":{"key":"` + templateSecret + `"}}`,
			"../home/.config/ama/prompts/u.md": "user $1\n",
			".ama/prompts/ok.md":               "fine $1\n",
		},
		Links: map[string]string{
			".ama/prompts/key.md":                 "<root>/home/.ssh/id_rsa",
			".ama/prompts/out.md":                 "<root>/outside.md",
			"../home/.config/ama/prompts/auth.md": "<root>/home/.config/ama/auth.json",
		},
	})
	for i, p := range []string{"/key a", "/out a", "/auth a", "/ok a"} {
		promptAndSettle(r, "p"+string(rune('0'+i)), p, i+1)
	}
	finish(t, r)
	noSecret(t, r, templateSecret)
	if b, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl")); err != nil || !strings.Contains(string(b), "fine a") {
		t.Errorf("the plain template did not reach the model (record %v): %.300s", err, b)
	}
	want := []string{"/key a", "/out a", "/auth a", "fine a\n"}
	if got := prompts(r); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("prompts %q, want %q", got, want)
	}
}

// The body is read again at each expansion (an edit applies at once), a
// file added after startup is not a command until a restart, and the
// UserPromptSubmit hook sees the expanded text.
func TestTemplateEditAndHook(t *testing.T) {
	hooks := `{"version":1,"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"cat >> hook-in.jsonl; echo >> hook-in.jsonl"}]}]}}`
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--trust"},
		Script: []byte(`[{"text":"a"},{"text":"b"},{"text":"c"}]`),
		Files:  map[string]string{".ama/prompts/t.md": "first $1\n", ".ama/hooks.json": hooks},
	})
	promptAndSettle(r, "a", "/t x", 1)
	if err := os.WriteFile(filepath.Join(r.Work, ".ama", "prompts", "t.md"), []byte("second $1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Work, ".ama", "prompts", "new.md"), []byte("new body\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	promptAndSettle(r, "b", "/t y", 2)
	promptAndSettle(r, "c", "/new z", 3)
	finish(t, r)
	want := []string{"first x\n", "second y\n", "/new z"}
	if got := prompts(r); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("prompts %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(r.Work, "hook-in.jsonl"))
	if err != nil {
		t.Fatalf("the hook did not run: %v\n%s", err, r.Stderr())
	}
	if !strings.Contains(string(b), `"prompt":"first x\n"`) || strings.Contains(string(b), `"/t x"`) {
		t.Errorf("the hook saw %s", b)
	}
}

// ACP lists skills, then templates with their argument hint, after
// session/new; a session/prompt text "/fix 42" reaches the model expanded.
func TestTemplateACPCommands(t *testing.T) {
	r := golden.Start(t, golden.Config{
		Args:   []string{"--mode", "acp", "--model", "fake/echo"},
		Script: []byte(`[{"text":"ok"}]`),
		Files: map[string]string{
			"../home/.config/ama/prompts/fix.md":   "---\ndescription: Fix an issue\nargument-hint: <issue>\n---\nFix $1\n",
			"../home/.config/ama/prompts/plain.md": "Summarize.\n",
		},
	})
	sid := acpNewSession(t, r)
	r.WaitFor("commands", 1, func(o *golden.Object) bool {
		p, _ := o.Get("params")
		po, ok := p.(*golden.Object)
		if !ok {
			return false
		}
		u, _ := po.Get("update")
		uo, ok := u.(*golden.Object)
		return ok && uo.String("sessionUpdate") == "available_commands_update"
	})
	var got string
	for _, l := range r.Lines() {
		if strings.Contains(string(l), "available_commands_update") {
			got = string(l)
		}
	}
	want := `"availableCommands":[{"name":"skill:ama-docs","description":"How to configure and use ama itself."},{"name":"fix","description":"Fix an issue","input":{"hint":"<issue>"}},{"name":"plain","description":"Summarize."}]`
	if !strings.Contains(got, want) {
		t.Errorf("available_commands_update:\n%s\nwant it to contain\n%s", got, want)
	}
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"/fix 42"}]}}`)
	r.WaitFor("session/prompt", 1, acpResponse("3"))
	r.CloseStdin()
	r.Wait()
	b, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
	if err != nil || !strings.Contains(string(b), "Fix 42") || strings.Contains(string(b), "/fix 42") {
		t.Errorf("the model request (%v): %.400s", err, b)
	}
}

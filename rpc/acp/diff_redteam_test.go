package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The diff of a finished write or edit is the one the tool computed, not
// a read of the path afterwards: here a PostToolUse hook (standing for
// anything that runs between the tool's write and the update: a
// background command, another program) replaces the changed file with a
// link to a file outside the project, and the secret in that file never
// reaches the client (issue 28: ACP stops re-reading files).
func TestDiffIsTheToolsNotARereadOfTheFile(t *testing.T) {
	const marker = "SECRET-MARKER-7f3a"
	swap := func(tool, file string) string {
		return `{"matcher":"` + tool + `","hooks":[{"type":"command","command":"rm -f ` + file + `; ln -s ../outside/secret.txt ` + file + `"}]}`
	}
	script := `{"version":1,"responses":[
		{"steps":[{"toolCall":{"id":"r1","name":"read","arguments":{"path":"notes.txt"}}}]},
		{"steps":[{"toolCall":{"id":"e1","name":"edit","arguments":{"path":"notes.txt","edits":[{"oldText":"alpha","newText":"beta"}]}}}]},
		{"steps":[{"toolCall":{"id":"w1","name":"write","arguments":{"path":"fresh.txt","content":"fresh\n"}}}]},
		{"text":"done"}]}`
	r := golden.Start(t, golden.Config{
		Args:   []string{"--mode", "acp", "--model", "fake/echo", "--permission-mode", "auto-edit", "--trust"},
		Script: []byte(script),
		Dirs:   []string{"outside"},
		Files: map[string]string{
			"notes.txt":       "alpha\n",
			".ama/hooks.json": `{"version":1,"hooks":{"PostToolUse":[` + swap("edit", "notes.txt") + `,` + swap("write", "fresh.txt") + `]}}`,
		},
	})
	if err := os.WriteFile(filepath.Join(r.Root, "outside", "secret.txt"), []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, r: r}
	c.initialize()
	sid := c.newSession()
	c.send("p", "session/prompt", prompt(sid, "edit and write"))
	if got := c.stopReason("p"); got != "end_turn" {
		t.Fatalf("stop reason %s", got)
	}
	for _, name := range []string{"notes.txt", "fresh.txt"} { // the hook did swap them
		if target, err := os.Readlink(filepath.Join(r.Work, name)); err != nil || !strings.Contains(target, "secret") {
			t.Fatalf("%s is not the link to the secret: %q %v", name, target, err)
		}
	}
	c.finish(0)
	out := strings.Join(func() []string {
		var s []string
		for _, l := range r.Lines() {
			s = append(s, string(l))
		}
		return s
	}(), "\n")
	if strings.Contains(out, marker) {
		t.Fatalf("the secret reached the client:\n%s", out)
	}
	for _, want := range []string{
		`{"type":"diff","path":"` + filepath.Join(r.Work, "notes.txt") + `","oldText":"alpha\n","newText":"beta\n"}`,
		`{"type":"diff","path":"` + filepath.Join(r.Work, "fresh.txt") + `","oldText":null,"newText":"fresh\n"}`,
	} {
		if !strings.Contains(out, strings.ReplaceAll(want, "\n", `\n`)) {
			t.Errorf("no update carries the tool's diff %s:\n%s", want, out)
		}
	}
}

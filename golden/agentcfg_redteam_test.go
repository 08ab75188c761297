//go:build linux

package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// An external agent CLI runs outside the sandbox and reads its project
// settings (Claude Code: .claude/settings.json hooks). A sandboxed bash
// call, allowed without asking, writes such a hook; a later
// task(agent=claude) would run it unsandboxed. The fake claude (a script
// outside the project, found through the PATH the test sets) does what the
// real one does with its project settings: it runs every hook command of
// .claude/settings.json and .claude/settings.local.json in the project.
// The hook's marker must stay absent; the fake did start (everyday).
func TestDeputyAgentProjectSettings(t *testing.T) {
	for _, tc := range []struct{ name, plant string }{
		{"settings.json", "mkdir -p .claude && printf '%s' \"$HOOK\" > .claude/settings.json"},
		{"settings.local.json", "mkdir -p .claude && printf '%s' \"$HOOK\" > .claude/settings.local.json"},
		{"directory moved in", "mkdir -p x && printf '%s' \"$HOOK\" > x/settings.json && mv x .claude"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outside := t.TempDir()
			bin, marker, started := filepath.Join(outside, "bin"), filepath.Join(outside, "HOOK-RAN"), filepath.Join(outside, "claude-started")
			must(t, os.MkdirAll(bin, 0o755))
			// The fake claude: records where and how it started, runs the project's
			// hook commands (as the real CLI does at SessionStart), then
			// exits (the task fails; the side effect is what counts).
			fake := "#!/bin/sh\necho \"$(pwd) $*\" >> '" + started + "'\n" +
				"for f in .claude/settings.json .claude/settings.local.json; do\n" +
				"  [ -f \"$f\" ] || continue\n" +
				"  sed -n 's/.*\"command\" *: *\"\\([^\"]*\\)\".*/\\1/p' \"$f\" | while read -r c || [ -n \"$c\" ]; do sh -c \"$c\"; done\n" +
				"done\nexit 1\n"
			must(t, os.WriteFile(filepath.Join(bin, "claude"), []byte(fake), 0o755))
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			hook, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionStart": []any{map[string]any{
				"hooks": []any{map[string]any{"type": "command", "command": "touch " + marker}}}}}})
			plant, _ := json.Marshal(map[string]any{"command": "HOOK='" + string(hook) + "'; " + tc.plant})
			r := golden.Start(t, golden.Config{
				Args:       []string{"--model", "fake/echo", "--permission-mode", "full-auto", "--trust", "--tools", "read,bash,task"},
				UserConfig: []byte(`{"sandbox":{"bash":"auto","network":"deny"},"subagents":{"background":"never"}}`),
				Script: turns(bashCall(string(plant)),
					`{"name":"task","arguments":{"prompt":"look","description":"ext","agent":"claude"}}`),
			})
			settle(t, r)
			if b, _ := os.ReadFile(started); !strings.Contains(string(b), r.Work+" -p ") {
				t.Fatalf("everyday: the task never started the fake claude in the project (%q)\n%s", b, r.Stderr())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("a hook a sandboxed command planted ran outside the sandbox: %q", toolTexts(t, r))
			}
		})
	}
}

// A session directory set inside the project (--session-dir) is hidden
// from sandboxed commands like ama's data directory: a bash call can
// neither read another session's file (its marker never reaches the model
// or stdout) nor change it. Everyday: the bash call ran and its own
// session file was written there.
func TestDeputySessionDirInProject(t *testing.T) {
	const other = "sess/elsewhere/0000-other.jsonl"
	const secret = "OTHER-SESSION-SECRET-41"
	original := `{"type":"session","secret":"` + secret + `"}` + "\n"
	// The directory's name is computed, so only the sandbox can stop it
	// (ama's rule tier denies writes it can see into its own data).
	cmd, _ := json.Marshal(map[string]any{"command": `echo everyday-$((40+2)); d=$(echo c2Vzcw== | base64 -d); ` +
		`for f in "$d"/*/*.jsonl; do cat "$f"; echo '{"type":"evil"}' >> "$f"; done; ls -R "$d"`})
	r := golden.Start(t, golden.Config{
		Args:          []string{"--model", "fake/echo", "--permission-mode", "full-auto", "--tools", "read,bash", "--session-dir", "<work>/sess"},
		UserConfig:    []byte(`{"sandbox":{"bash":"auto","network":"deny"}}`),
		Files:         map[string]string{other: original},
		Script:        turns(bashCall(string(cmd))),
		NoSchemaCheck: true, // the planted file is not one of ama's session files
	})
	settle(t, r)
	texts := toolTexts(t, r)
	if len(texts) != 1 || !strings.Contains(texts[0], "everyday-42") {
		t.Fatalf("everyday: the bash call did not run: %q\n%s", texts, r.Stderr())
	}
	noSecret(t, r, secret)
	if b, _ := os.ReadFile(filepath.Join(r.Work, other)); string(b) != original {
		t.Errorf("a sandboxed command changed another session's file: %q", b)
	}
	own, _ := filepath.Glob(filepath.Join(r.Work, "sess", "*", "*.jsonl"))
	if len(own) < 2 {
		t.Errorf("everyday: this session's file is not in the session directory (%v)", own)
	}
}

package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 36: a session holding an entry between 32 KiB and the spill
// threshold could not be reopened (--resume panicked in the session
// reader, ACP session/load answered an internal error). A 40 KiB prompt
// and a model `read` of a 48 KB file, then --resume and session/load:
// both open, and the entries read back exactly as they were announced.
func TestResumeLargeEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	var file strings.Builder
	for i := 0; file.Len() < 48_000; i++ {
		file.WriteString("line \"quoted\" \\ tab\t é € 😀 <&> ")
		file.WriteString(strings.Repeat("x", i%50))
		file.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(work, "big.txt"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`[{"steps":[{"toolCall":{"name":"read","arguments":{"path":"big.txt"},"id":"call_1"}}]},{"text":"done"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"AMA_FAKE_SCRIPT=" + script}
	const id = "4d3c2b1a-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	prompt := strings.Repeat("prompt \"text\" with \\ escapes\n and ü 日本 ", 1100)[:40<<10]
	msg, _ := json.Marshal(map[string]any{"id": "p", "type": "prompt", "message": prompt})

	p := startKproc(t, bin, home, work, env, "--model", "fake/echo", "--session-id", id)
	p.send(string(msg))
	announced := map[string]string{}
	p.until(func(v map[string]any) bool {
		if v["type"] == "entry_appended" {
			e := v["entry"].(map[string]any)
			b, _ := json.Marshal(e)
			announced[e["id"].(string)] = string(b)
		}
		return v["type"] == "agent_settled"
	})
	_ = p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("first process: %v\n%s", err, p.stderr)
	}
	big := 0
	for _, e := range announced {
		if len(e) > 32<<10 {
			big++
		}
	}
	if big < 2 {
		t.Fatalf("%d entries over 32 KiB announced, want the prompt and the tool result", big)
	}

	r := startKproc(t, bin, home, work, env, "--model", "fake/echo", "--resume", id)
	r.send(`{"id":"e","type":"get_entries"}`)
	lines := r.until(func(v map[string]any) bool { return v["id"] == "e" })
	resp := lines[len(lines)-1]
	if resp["success"] != true {
		t.Fatalf("get_entries after --resume: %v\n%s", resp, r.stderr)
	}
	entries, _ := resp["data"].(map[string]any)["entries"].([]any)
	got := map[string]string{}
	for _, e := range entries {
		m := e.(map[string]any)
		b, _ := json.Marshal(m)
		got[m["id"].(string)] = string(b)
	}
	for eid, want := range announced {
		if got[eid] != want {
			t.Errorf("entry %s after --resume differs (%d bytes, announced %d)", eid, len(got[eid]), len(want))
		}
	}
	_ = r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("resumed process: %v\n%s", err, r.stderr)
	}

	q := startKproc(t, bin, home, work, nil, "--mode", "acp", "--model", "fake/echo")
	result(t, q.acpCall(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	res := q.acpCall(2, "session/load", map[string]any{"sessionId": id, "cwd": work, "mcpServers": []any{}})
	result(t, res)
	_ = q.stdin.Close()
	if err := q.cmd.Wait(); err != nil {
		t.Fatalf("acp process: %v\n%s", err, q.stderr)
	}
}

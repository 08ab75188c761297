package golden_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// acpCall sends one JSON-RPC request and returns its response (result or
// error), skipping the notifications before it.
func (p *kproc) acpCall(id int, method string, params any) map[string]any {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	p.send(string(b))
	lines := p.until(func(v map[string]any) bool {
		n, ok := v["id"].(float64)
		_, hasMethod := v["method"]
		return ok && int(n) == id && !hasMethod
	})
	return lines[len(lines)-1]
}

func result(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	r, ok := res["result"].(map[string]any)
	if !ok {
		t.Fatalf("request failed: %v", res)
	}
	return r
}

func currentMode(t *testing.T, res map[string]any) string {
	t.Helper()
	modes, _ := result(t, res)["modes"].(map[string]any)
	m, _ := modes["currentModeId"].(string)
	return m
}

// Issue 13: a session made over ACP and never prompted exists for later
// processes. Process 1 creates it (with mcpServers, which start only at a
// first prompt) and sets its mode; process 2 resumes it, process 3
// loads it, process 4 opens it over RPC with --resume: each sees the mode.
func TestACPSessionAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary")
	}
	bin := buildBinary(t)
	home, work := t.TempDir(), t.TempDir()
	acp := []string{"--mode", "acp", "--model", "fake/echo"}
	init := map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}

	p := startKproc(t, bin, home, work, nil, acp...)
	result(t, p.acpCall(1, "initialize", init))
	mcp := []any{map[string]any{"name": "fs", "command": "mcp-fs", "args": []any{}, "env": []any{}}}
	created := p.acpCall(2, "session/new", map[string]any{"cwd": work, "mcpServers": mcp})
	id, _ := result(t, created)["sessionId"].(string)
	if id == "" || currentMode(t, created) != "default" {
		t.Fatalf("session/new: %v", created)
	}
	result(t, p.acpCall(3, "session/set_mode", map[string]any{"sessionId": id, "modeId": "auto-edit"}))
	result(t, p.acpCall(4, "session/new", map[string]any{"cwd": work, "mcpServers": mcp}))
	_ = p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("process 1: %v", err)
	}
	if strings.Contains(p.stderr.String(), "mcp server") {
		t.Errorf("an MCP server started although no session was prompted:\n%s", p.stderr)
	}

	for i, method := range []string{"session/resume", "session/load"} {
		q := startKproc(t, bin, home, work, nil, acp...)
		result(t, q.acpCall(1, "initialize", init))
		res := q.acpCall(2, method, map[string]any{"sessionId": id, "cwd": work, "mcpServers": []any{}})
		if got := currentMode(t, res); got != "auto-edit" {
			t.Errorf("process %d %s: currentModeId %q, want auto-edit (%v)", i+2, method, got, res)
		}
		_ = q.stdin.Close()
		if err := q.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i+2, err)
		}
	}

	r := startKproc(t, bin, home, work, nil, "--model", "fake/echo", "--resume", id)
	r.send(`{"id":"s","type":"get_state"}`)
	lines := r.until(func(v map[string]any) bool { return v["id"] == "s" })
	state, _ := lines[len(lines)-1]["data"].(map[string]any)
	if state["permissionMode"] != "auto-edit" || state["sessionId"] != id {
		t.Errorf("rpc --resume: state %v", state)
	}
	_ = r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("process 4: %v", err)
	}
	// An explicit --permission-mode wins over the recorded mode.
	r = startKproc(t, bin, home, work, nil, "--model", "fake/echo", "--resume", id, "--permission-mode", "plan")
	r.send(`{"id":"s","type":"get_state"}`)
	lines = r.until(func(v map[string]any) bool { return v["id"] == "s" })
	if m := lines[len(lines)-1]["data"].(map[string]any)["permissionMode"]; m != "plan" {
		t.Errorf("--permission-mode plan on resume: %v", m)
	}
	_ = r.stdin.Close()
	_ = r.cmd.Wait()
}

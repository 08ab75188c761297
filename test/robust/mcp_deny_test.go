package robust_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A deny rule with a pattern on an MCP tool that has no path argument
// (mcp__t__slow(prod*)) fails closed (approvals/rules.go): the pattern has
// nothing to match, so the rule hits every call of the tool, in
// full-auto too. Judged by the server's own side effect: slow writes
// <marker>.started in its cwd as soon as it is called; a denied call must
// leave none. Without the rule the same call writes it (the check can
// fail). The decision log records each denial as deny_rule.
func TestMCPDenyPatternNeverReachesServer(t *testing.T) {
	srv := mcpServerBin(t)
	for _, tc := range []struct {
		name string
		deny []string
		ran  bool
	}{
		{"deny pattern", []string{"mcp__t__slow(prod*)"}, false},
		{"deny pattern, other server's glob", []string{"mcp__*__slow(prod*)"}, false},
		{"no rule", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			logPath := filepath.Join(home, "permission.log")
			perm := map[string]any{"logPath": logPath}
			if tc.deny != nil {
				perm["deny"] = tc.deny
			}
			b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{"command": srv}}, "permission": perm})
			writeUserConfig(t, home, string(b))
			script := toolCalls(
				call("mcp__t__slow", `{"ms":1,"marker":"prod-db"}`),
				call("mcp__t__slow", `{"ms":1,"marker":"staging"}`),
				call("mcp__t__echo", `{"text":"alive"}`),
			)
			p := start(t, procConfig{home: home, script: script, args: []string{"--model", "fake/echo", "--permission-mode", "full-auto"}})
			p.send(`{"id":"p","type":"prompt","message":"use the mcp tools"}`)
			p.waitFor("agent_end", 60*time.Second, event("agent_end"))
			var ends []toolEnd
			for _, l := range p.rawLines() {
				var e toolEnd
				if json.Unmarshal([]byte(l), &e) == nil && e.Type == "tool_execution_end" {
					ends = append(ends, e)
				}
			}
			if len(ends) != 3 {
				t.Fatalf("%d tool ends, want 3:\n%s", len(ends), strings.Join(p.rawLines(), "\n"))
			}
			for i, marker := range []string{"prod-db", "staging"} {
				_, err := os.Stat(filepath.Join(p.work, marker+".started"))
				if reached := err == nil; reached != tc.ran {
					t.Errorf("%s: the server was called: %v, want %v", marker, reached, tc.ran)
				}
				if ends[i].Denied == tc.ran {
					t.Errorf("call %d: denied %v: %s", i, ends[i].Denied, ends[i].text())
				}
			}
			if ends[2].IsError || ends[2].text() != "echo: alive" {
				t.Errorf("the unruled call after the denials: %+v", ends[2])
			}
			_ = p.stdin.Close()
			if code, _ := p.wait(30 * time.Second); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			logb, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, l := range strings.Split(strings.TrimSpace(string(logb)), "\n") {
				var rec struct {
					Code  string
					Shape struct{ Tool string }
				}
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				codes = append(codes, rec.Shape.Tool+":"+rec.Code)
			}
			want := "mcp__t__slow:deny_rule,mcp__t__slow:deny_rule,mcp__t__echo:"
			if tc.ran {
				want = "mcp__t__slow:,mcp__t__slow:,mcp__t__echo:"
			}
			if got := strings.Join(codes, ","); got != want {
				t.Errorf("records %s, want %s", got, want)
			}
		})
	}
}

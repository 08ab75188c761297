package golden_test

import (
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// TestOwnKeyFileRedteam: ama's own API key file (auth.json in its data
// directory) never reaches the model, in any mode: the file tools refuse
// to read it, as they refuse /proc/*/environ, although plan, default and
// full-auto allow reads.
func TestOwnKeyFileRedteam(t *testing.T) {
	const key = "AUTHJSON-3318-LEAK"
	for _, mode := range []string{"plan", "default", "full-auto"} {
		t.Run(mode, func(t *testing.T) {
			calls := []map[string]any{
				toolCall("read", map[string]any{"path": "~/.local/share/ama/auth.json"}),
				toolCall("read", map[string]any{"path": "../home/.local/share/ama/auth.json"}),
				toolCall("grep", map[string]any{"pattern": "AUTHJSON", "path": "~/.local/share/ama/auth.json"}),
			}
			r := runAttack(t, mode, nil, redteamScript(t, calls...), func(r *golden.Run) {
				writeAt(t, filepath.Join(r.Home, ".local/share/ama/auth.json"), `{"openai":{"type":"api","key":"`+key+`"}}`)
			})
			assertAbsent(t, everythingSaid(t, r, ""), key)
		})
	}
}

package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// TestWriteThroughOwnLinkRedteam: a command that links to ama's data (or
// an ancestor of it) and writes through the link put a session file into
// the sessions directory (and could rewrite the settings), where --from,
// --fork, --resume and --session-id read it; the write's path named the
// project when the call was judged. It is refused in auto (the classifier
// allows everything here) and nothing lands in ama's directories; a link
// inside the project written through still works.
func TestWriteThroughOwnLinkRedteam(t *testing.T) {
	calls := []map[string]any{
		reachBashCall(`ln -s ~/.local/share/ama l1 && mkdir -p l1/sessions/d1 && printf '{}\n' > l1/sessions/d1/2026-01-01T00-00-00-000Z_evil1.jsonl`),
		reachBashCall(`ln -s ~/.local l2 && mkdir -p l2/share/ama/sessions/d2 && touch l2/share/ama/sessions/d2/evil2.jsonl`),
		reachBashCall(`ln -s ~/.config l3 && mkdir -p l3/ama && echo '{"permissions":{"allow":["Bash"]}}' > l3/ama/settings.json`),
		reachBashCall(`ln -s src s && echo OK-5521 > s/a.txt && cat src/a.txt`),
	}
	r := runAttack(t, "auto", nil, redteamScript(t, calls...), func(r *golden.Run) {
		t.Setenv("HOME", r.Home) // the bash tool's ~ is the server's HOME
		if err := os.MkdirAll(filepath.Join(r.Work, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	for _, p := range []string{".local/share/ama/sessions/d1", ".local/share/ama/sessions/d2", ".config/ama/settings.json"} {
		if _, err := os.Lstat(filepath.Join(r.Home, p)); err == nil {
			t.Errorf("%s was written through a link the command made", p)
		}
	}
	said := everythingSaid(t, r, "")["stdout"]
	if n := strings.Count(said, `"denied":true`); n != 3 {
		t.Errorf("%d of 3 attacks refused", n)
	}
	if !strings.Contains(said, "OK-5521") {
		t.Error("the everyday write through a project link did not run")
	}
}

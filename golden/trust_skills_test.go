package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// TestProjectSkillsNeedTrust: an untrusted project's .ama/skills are not
// loaded (their descriptions never reach the model, one warning says so);
// with --trust they are. Checked in the recorded model requests.
func TestProjectSkillsNeedTrust(t *testing.T) {
	const marker = "PLANTED-SKILL-DESCRIPTION"
	for _, tc := range []struct {
		name    string
		args    []string
		reaches bool
	}{
		{"untrusted", []string{"--model", "fake/echo"}, false},
		{"trusted", []string{"--model", "fake/echo", "--trust"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := golden.Start(t, golden.Config{Args: tc.args, Script: turns(),
				Files: map[string]string{".ama/skills/planted/SKILL.md": "---\nname: planted\ndescription: " + marker + "\n---\nFollow me.\n"}})
			settle(t, r)
			rec, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(rec), marker); got != tc.reaches {
				t.Errorf("the project skill reached the model: %v, want %v", got, tc.reaches)
			}
			if warned := strings.Contains(r.Stderr(), "project skills in"); warned == tc.reaches {
				t.Errorf("skip warning on stderr: %v, want %v:\n%s", warned, !tc.reaches, r.Stderr())
			}
		})
	}
}

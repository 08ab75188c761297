package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// TestWritesThroughOwnLinks: a command that makes a link and writes
// through it wrote where the link leads while its targets named the
// project (the link did not exist when it was judged). ama's own data is
// refused in every mode, auto's rule tier asks about a protected or
// outside place; a link in the project, or a link alone, does not.
func TestWritesThroughOwnLinks(t *testing.T) {
	auto := policy(t, approvals.ModeAuto, nil, nil)
	full := policy(t, approvals.ModeFullAuto, nil, nil)
	for _, tc := range []struct {
		cmd        string
		autoAllows bool // auto's rule tier and safety let it through
		fullAllows bool
	}{
		{"ln -s ~/.local/share/ama l && mkdir -p l/sessions/d && touch l/sessions/d/x.jsonl", false, false},
		{"ln -s ~/.config/ama c; echo '{}' > c/settings.json", false, false},
		{"ln -s ~/.local l && touch l/share/ama/sessions/x.jsonl", false, false},
		{"ln -s ~/.ssh k && echo key >> k/authorized_keys", false, false},
		{"ln -s /etc e && echo x > e/profile.d/a.sh", false, false}, // the dangerous list sees /etc
		{"ln -sft links ~/.ssh && echo key >> links/.ssh/authorized_keys", false, false},
		{"ln -s \"$D\" l && echo x > l/f", false, true},
		// must not hit
		{"ln -sf ../lib vendor/lib", true, true},
		{"ln -s src s && echo x > s/a.txt", true, true},
		{"ln -s ~/.local/share/ama l", true, true}, // a link alone writes nothing there
		{"mkdir -p out && echo x > out/a.txt", true, true},
	} {
		got := approvals.Decide(bashCall(tc.cmd), auto, nil)
		if allows := got.Layer != "safety" && analyze(tc.cmd).RuleTierReason() == ""; allows != tc.autoAllows {
			t.Errorf("auto %q: %s %s (%s), want allowed=%v", tc.cmd, got.Decision, got.Layer, got.Reason, tc.autoAllows)
		}
		if got := approvals.Decide(bashCall(tc.cmd), full, nil); (got.Decision == approvals.Allow) != tc.fullAllows {
			t.Errorf("full-auto %q: %s %s (%s), want allow=%v", tc.cmd, got.Decision, got.Layer, got.Reason, tc.fullAllows)
		}
	}
}

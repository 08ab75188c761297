package approvals

import (
	"strings"
	"testing"
)

func TestOperatorChain(t *testing.T) {
	cases := []struct {
		src  string
		want int
	}{
		{"ls -la", 0},
		{"ls ????.go", 4},
		{"echo $((a ? b : c))", 1},
		{"[[ ! -e x ]] && ! grep -q y z", 1},
		{"echo '!!!'", 3},
		{"[[ ! ! ! a ]]", 3},
		{"let !!x !!y", 2},
		{"echo $((" + strings.Repeat("1?", 5000) + "1))", 5000},
		{"[[ " + strings.Repeat("! ", 5000) + "a ]]", 5000},
	}
	for _, c := range cases {
		if got := operatorChain(c.src); got != c.want {
			t.Errorf("operatorChain(%.40q) = %d, want %d", c.src, got, c.want)
		}
	}
}

// Chains past the bound are refused before the parser sees them, so a
// hostile command costs a scan, not seconds of recursion.
func TestOperatorChainRefused(t *testing.T) {
	for _, src := range []string{
		"echo $((" + strings.Repeat("1?", maxOperatorChain+1) + "1))",
		"[[ " + strings.Repeat("! ", maxOperatorChain+1) + "a ]]",
		"let " + strings.Repeat("!", maxOperatorChain+1) + "1",
	} {
		a := AnalyzeShell(src, "/tmp", "/root")
		if a.Err == nil || !strings.Contains(a.Err.Error(), "operators chained") {
			t.Errorf("%.30q: err = %v, want the chain refusal", src, a.Err)
		}
	}
	if a := AnalyzeShell("echo $(("+strings.Repeat("1?1:", 100)+"1))", "/tmp", "/root"); a.Err != nil {
		t.Errorf("a short chain is analysed: %v", a.Err)
	}
}

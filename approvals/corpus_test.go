package approvals_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// maxOverStrict is the number of everyday commands (testdata/everyday.txt)
// that auto mode may ask about. It was 6 of 136 before the option grammar
// (sort -o, make, make -j4 test, tree, tree -L 2, jq) and 0 after it; it
// must not grow.
const maxOverStrict = 0

// TestEverydayCorpus measures the over-strict rate: the share of everyday
// commands that auto mode does not allow on its own.
func TestEverydayCorpus(t *testing.T) {
	f, err := os.Open("testdata/everyday.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := policy(t, approvals.ModeAuto, nil, nil)
	total, strict := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cmd := sc.Text()
		if strings.TrimSpace(cmd) == "" || strings.HasPrefix(cmd, "#") {
			continue
		}
		total++
		if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision != approvals.Allow {
			strict++
			t.Logf("asks: %-50q %s (%s)", cmd, v.Layer, v.Reason)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("over-strict: %d of %d (%.1f%%)", strict, total, 100*float64(strict)/float64(total))
	if strict > maxOverStrict {
		t.Fatalf("over-strict rate grew: %d of %d commands ask (at most %d)", strict, total, maxOverStrict)
	}
}

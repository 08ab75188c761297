package golden_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The background reference asserts the answers it does not keep:
// background_task for a task already in the background and for an unknown
// id moves nothing, and a non-string taskId is invalid_arguments
// (background.setup.md; agents.md §12 item 6). Checked on the fixture's
// one play (TestReferenceShapes/background).
var _ = afterFixture("ama/background", "background task answers", func(t *testing.T, r *golden.Run, _ *golden.Case) {
	want := map[string]string{
		"again": `"data":{"backgrounded":[]}`,
		"none":  `"data":{"backgrounded":[]}`,
		"bad":   `"code":"invalid_arguments"`,
		"b":     `"data":{"backgrounded":["t1"]}`,
	}
	seen := map[string]bool{}
	for _, l := range r.Lines() {
		v, err := golden.Parse(l)
		if err != nil {
			continue
		}
		o, ok := v.(*golden.Object)
		if !ok || o.String("type") != "response" {
			continue
		}
		id := o.String("id")
		if w, ok := want[id]; ok {
			seen[id] = true
			if !strings.Contains(string(l), w) {
				t.Errorf("response %s: %s, want %s", id, l, w)
			}
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("no response %s", id)
		}
	}
})

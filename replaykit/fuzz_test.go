package replaykit_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/replaykit"
)

// ParseSteps takes any input without panicking, and Check finds no
// difference between a transcript and itself.
func FuzzParseSteps(f *testing.F) {
	f.Add([]byte("{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"hi\"}\n{\"@wait\":{\"type\":\"agent_settled\"}}\n"))
	f.Add([]byte("# comment\n\n{\"@bind\":{\"X\":{\"id\":\"2\",\"path\":\"data.a.0\"}}}\nnot json\n"))
	f.Add([]byte("{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u2028\"}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, err := replaykit.ParseSteps(bytes.NewReader(in)); err != nil {
			return
		}
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 && !json.Valid(l) {
				return // Check reports lines that are not JSON
			}
		}
		if d := replaykit.Check(in, in); len(d) != 0 {
			t.Errorf("input against itself: %v", d)
		}
	})
}

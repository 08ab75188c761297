package acp

import (
	"encoding/json"
	"testing"
)

func TestDurableDeclared(t *testing.T) {
	for _, tc := range []struct {
		caps string
		want bool
	}{
		{``, false},
		{`{}`, false},
		{`{"_meta":{}}`, false},
		{`{"_meta":{"ama/durableApprovals":true}}`, true},
		{`{"_meta":{"ama/durableApprovals":"true"}}`, false},
		{`{"_meta":{"ama/durableApprovals":1}}`, false},
		{`{"_meta":{"ama/durableApprovals":false}}`, false},
		{`{"_meta":[]}`, false},
		{`{"fs":{"readTextFile":true},"_meta":{"ama/sandbox":true,"ama/durableApprovals":true}}`, true},
		{`not json`, false},
	} {
		if got := durableDeclared(json.RawMessage(tc.caps)); got != tc.want {
			t.Errorf("durableDeclared(%s) = %v, want %v", tc.caps, got, tc.want)
		}
	}
}

func FuzzDurableDeclared(f *testing.F) {
	f.Add(`{"_meta":{"ama/durableApprovals":true}}`)
	f.Add(`{"_meta":{"ama/durableApprovals": true }}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, caps string) {
		got := durableDeclared(json.RawMessage(caps))
		var c struct {
			Meta map[string]any `json:"_meta"`
		}
		want := json.Unmarshal([]byte(caps), &c) == nil && c.Meta["ama/durableApprovals"] == true
		if got != want {
			t.Fatalf("durableDeclared(%q) = %v, want %v", caps, got, want)
		}
	})
}

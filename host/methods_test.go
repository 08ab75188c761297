package host

import (
	"encoding/json"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"
)

// A bridge call whose params do not decode answers -32602 and changes
// nothing (the handlers used to read such a member as "" or false); an
// unknown method answers -32601.
func TestMethodParams(t *testing.T) {
	h := &Host{log: zap.NewNop(), disabled: map[string]bool{}, subs: map[string]bool{}, status: map[string]string{"k": "before"}}
	for _, tc := range []struct {
		method, params string
		code           int64 // 0: success
	}{
		{"tools.disable", `{"name":7}`, jsonrpc2.CodeInvalidParams},
		{"events.subscribe", `[]`, jsonrpc2.CodeInvalidParams},
		{"ui.setStatus", `{"key":"k","text":["x"]}`, jsonrpc2.CodeInvalidParams},
		{"cache.decider", `{"active":"yes"}`, jsonrpc2.CodeInvalidParams},
		{"runners.provide", `{"id":1}`, jsonrpc2.CodeInvalidParams},
		{"tools.register", `{"name":"x","permission":3}`, jsonrpc2.CodeInvalidParams},
		{"no.such", `{}`, jsonrpc2.CodeMethodNotFound},
		{"tools.disable", `{"name":"bash"}`, 0},
		{"ui.setStatus", `{"key":"k"}`, 0},
	} {
		raw := json.RawMessage(tc.params)
		_, err := h.handle(&jsonrpc2.Request{Method: tc.method, Params: &raw})
		var code int64
		if je, ok := err.(*jsonrpc2.Error); ok {
			code = je.Code
		} else if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.params, err)
		}
		if code != tc.code {
			t.Errorf("%s %s: code %d, want %d (%v)", tc.method, tc.params, code, tc.code, err)
		}
	}
	if len(h.disabled) != 1 || !h.disabled["bash"] || len(h.subs) != 0 || h.warmDecider || len(h.runners) != 0 || len(h.status) != 0 {
		t.Errorf("state after the calls: disabled %v, subs %v, warm %v, runners %v, status %v", h.disabled, h.subs, h.warmDecider, h.runners, h.status)
	}
}

package golden_test

import (
	"encoding/json"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// acpResponse matches the response (not a request) with the numeric id.
func acpResponse(id string) func(o *golden.Object) bool {
	return func(o *golden.Object) bool {
		v, ok := o.Get("id")
		_, method := o.Get("method")
		n, isNum := v.(json.Number)
		return ok && isNum && string(n) == id && !method
	}
}

// acpNewSession initialises an ACP run (request ids 1 and 2) and returns
// the new session's id.
func acpNewSession(t *testing.T, r *golden.Run) string {
	t.Helper()
	r.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	r.WaitFor("initialize", 1, acpResponse("1"))
	r.Send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + r.Work + `","mcpServers":[]}}`)
	r.WaitFor("session/new", 1, acpResponse("2"))
	var sid string
	for _, l := range r.Lines() {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(l, &m) == nil && m.ID == 2 {
			sid = m.Result.SessionID
		}
	}
	return sid
}

// acpAnswerPermission answers the session/request_permission on output
// line n with optionID.
func acpAnswerPermission(r *golden.Run, n int, optionID string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(r.Lines()[n], &req)
	r.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"outcome":{"outcome":"selected","optionId":"` + optionID + `"}}}`)
}

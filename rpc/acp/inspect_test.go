package acp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// _ama/permission_inspect answers the native command's read-only views
// for one ACP session: a refused write shows in the counters and as a
// denial without its path or reason; bad params fail with -32602 and an
// unknown session with -32002.
func TestInspectOverACP(t *testing.T) {
	c := startACP(t, writeScript)
	c.initialize()
	sid := c.newSession()
	c.send("p", "session/prompt", prompt(sid, "write it"))
	i := c.r.WaitFor("session/request_permission", 1, func(o *golden.Object) bool { return o.String("method") == "session/request_permission" })
	v, _ := golden.Parse(c.r.Lines()[i])
	c.r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"reject_once"}}}`,
		golden.Encode(v.(*golden.Object).Values["id"])))
	if got := c.stopReason("p"); got != "end_turn" {
		t.Fatalf("stop reason %s", got)
	}
	status := c.call("s", "_ama/permission_inspect", map[string]any{"sessionId": sid, "action": "status"})
	counts, _ := status.Values["counts"].(*golden.Object)
	if status.String("mode") != "default" || counts == nil || string(golden.Encode(counts.Values["denied"])) != "1" ||
		string(golden.Encode(counts.Values["asked"])) != "1" {
		t.Errorf("status %s", golden.Encode(status))
	}
	c.send("d", "_ama/permission_inspect", map[string]any{"sessionId": sid, "action": "denials"})
	res := c.response("d")
	denials := string(golden.Encode(res.Values["result"]))
	if !strings.Contains(denials, `"tool":"write"`) || !strings.Contains(denials, `"code":"declined"`) || strings.Contains(denials, "out.txt") {
		t.Errorf("denials %s", denials)
	}
	cfg := c.call("c", "_ama/permission_inspect", map[string]any{"sessionId": sid, "action": "config"})
	if cfg.String("gate") != "enforce" {
		t.Errorf("config %s", golden.Encode(cfg))
	}
	if code := c.callErr("bad", "_ama/permission_inspect", map[string]any{"sessionId": sid, "action": "reset"}); code != -32602 {
		t.Errorf("unknown action: %d, want -32602", code)
	}
	if code := c.callErr("nos", "_ama/permission_inspect", map[string]any{"sessionId": "nope"}); code != -32002 {
		t.Errorf("unknown session: %d, want -32002", code)
	}
	c.finish(0)
}

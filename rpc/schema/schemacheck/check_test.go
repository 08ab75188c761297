package schemacheck

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/sandbox"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ama-rpc's ACP extensions: what the Go types write validates; a changed
// member, an unknown ama key or extension method does not.
func TestACPLine(t *testing.T) {
	counts := mustJSON(t, permlog.Counts{})
	report := mustJSON(t, sandbox.Report{})
	for _, ok := range []string{
		`{"jsonrpc":"2.0","method":"_ama/notice","params":{"sessionId":"s","level":"warn","message":"m"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"totalTokens":1,"_meta":{"ama/permissions":` + counts + `}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"_meta":{"ama/sandbox":` + report + `}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","_meta":{"ama":{"parentToolCallId":"c1"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"other/key":1}}}`,
	} {
		if err := ACPLine([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","method":"_ama/notice","params":{"sessionId":"s","message":"m"}}`,
		`{"jsonrpc":"2.0","method":"_ama/unknown","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"usage":{"_meta":{"ama/permissions":{"allowed":"many"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"_meta":{"ama":{"parent":"c1"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"_meta":{"ama/made_up":true}}}}`,
		`not json`,
	} {
		if err := ACPLine([]byte(bad)); err == nil {
			t.Errorf("%s validates", bad)
		}
	}
}

func TestRPCAndPrintLines(t *testing.T) {
	if err := RPCLine([]byte(`{"type":"agent_end","stopReason":"stop","willRetry":false}`)); err != nil {
		t.Error(err)
	}
	if err := RPCLine([]byte(`{"type":"agent_end","stopReason":"stop"}`)); err == nil {
		t.Error("agent_end without willRetry validates")
	}
	if err := Command([]byte(`{"id":"1","type":"set_model","provider":"fake","modelId":"echo"}`)); err != nil {
		t.Error(err)
	}
	if err := Command([]byte(`{"id":"1","type":"set_model","provider":"fake"}`)); err == nil {
		t.Error("set_model without modelId validates")
	}
	if err := PrintLine([]byte(`{"type":"agent_settled"}`)); err != nil {
		t.Error(err)
	}
	if err := PrintLine([]byte(`{"type":"result"}`)); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a bare result line: %v", err)
	}
}

// A line is validated once per check (valid): a passed line passes that
// check again, but not another check, and a failed line fails every time.
func TestMemo(t *testing.T) {
	cmd := []byte(`{"id":"1","type":"set_model","provider":"fake","modelId":"echo"}`)
	for range 2 {
		if err := Command(cmd); err != nil {
			t.Fatal(err)
		}
		if RPCLine(cmd) == nil || SessionLine(cmd) == nil || ACPLine([]byte(`{"jsonrpc":"2.0","method":"_ama/unknown","params":{}}`)) == nil {
			t.Fatal("a command passed as an output line, a session line or an ACP message")
		}
	}
	// Over maxMemo: validated every time, with the same verdict.
	long := []byte(`{"type":"agent_end","stopReason":"` + strings.Repeat("x", maxMemo) + `","willRetry":false}`)
	for range 2 {
		if err := RPCLine(long); err != nil {
			t.Fatal(err)
		}
		if RPCLine([]byte(`{"type":"agent_end","stopReason":"`+strings.Repeat("x", maxMemo)+`"}`)) == nil {
			t.Fatal("a long line without willRetry passed")
		}
	}
}

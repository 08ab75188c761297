package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// refScripts holds ama's own fake-provider scripts (read, never copied).
const refScripts = "../../shared/reference/ama-goldens/scripts"

// events returns the parsed output lines of type typ.
func eventsOf(r *golden.Run, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range r.Lines() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

func num(v any) float64 { f, _ := v.(float64); return f }

// Issue 13: a context overflow on the very first turn recovers with ama's
// own script (overflow, a summary, the answer): the compaction runs, the
// request is retried once, the run ends well and no error is reported;
// tokensAfter never exceeds tokensBefore.
func TestOverflowOnFirstTurnRecovers(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(refScripts, "overflow-then-ok.json"))
	if err != nil {
		t.Skipf("reference script not available: %v", err)
	}
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: script})
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.WaitFor("agent_settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.Stderr())
	}
	if n := eventsOf(r, "notification"); len(n) != 0 {
		t.Errorf("notifications: %v", n)
	}
	ends := eventsOf(r, "compaction_end")
	if len(ends) != 1 || ends[0]["error"] != nil || ends[0]["willRetry"] != true {
		t.Fatalf("compaction_end: %v", ends)
	}
	// The summary of a lone "hi" is longer than "hi": the compaction is
	// not recorded and reports the unchanged size; the retry still runs.
	res := ends[0]["result"].(map[string]any)
	if num(res["tokensAfter"]) != num(res["tokensBefore"]) || res["summary"] != "" {
		t.Errorf("result %v: want an unrecorded compaction with equal numbers", res)
	}
	agentEnd := eventsOf(r, "agent_end")
	if len(agentEnd) != 1 || agentEnd[0]["stopReason"] != "stop" {
		t.Errorf("agent_end: %v", agentEnd)
	}
	var last string
	for _, m := range eventsOf(r, "message_end") {
		if msg := m["message"].(map[string]any); msg["role"] == "assistant" {
			b, _ := json.Marshal(msg["content"])
			last = string(b)
		}
	}
	if !strings.Contains(last, "Answer after compaction.") {
		t.Errorf("last assistant content %s", last)
	}
}

// A run that fails after the prompt response sends an error notification
// (the spec's rule for post-response failures), before agent_settled.
func TestRunFailureNotifies(t *testing.T) {
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: []byte(`[{"error":{"kind":"auth"}}]`)})
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.WaitFor("agent_settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	r.Wait()
	n := eventsOf(r, "notification")
	if len(n) != 1 || n[0]["level"] != "error" || !strings.Contains(n[0]["message"].(string), "401") {
		t.Fatalf("notifications %v", n)
	}
	var order []string
	for _, l := range r.Lines() {
		var m map[string]any
		_ = json.Unmarshal(l, &m)
		if ty, _ := m["type"].(string); ty == "notification" || ty == "agent_settled" || ty == "response" {
			order = append(order, ty)
		}
	}
	if strings.Join(order, ",") != "response,notification,agent_settled" {
		t.Errorf("order %v", order)
	}
}

// Issue 13: compacting three short turns is not an invalid argument. The
// first compact summarises what precedes the last cut point and reports a
// smaller context; the second finds nothing left to summarise and answers
// the unchanged size without a model call. tokensAfter
// never exceeds tokensBefore, and the next tokensBefore is the previous
// tokensAfter (one computation). Checked on the one play of the fixture
// rpc/compact-short.
var _ = afterFixture("rpc/compact-short", "compact short session", func(t *testing.T, r *golden.Run, _ *golden.Case) {
	var res []map[string]any
	for _, l := range r.Lines() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "response" && m["command"] == "compact" {
			if m["success"] != true {
				t.Fatalf("compact failed: %v", m)
			}
			res = append(res, m["data"].(map[string]any))
		}
	}
	if len(res) != 2 {
		t.Fatalf("compact responses %v", res)
	}
	b1, a1 := num(res[0]["tokensBefore"]), num(res[0]["tokensAfter"])
	b2, a2 := num(res[1]["tokensBefore"]), num(res[1]["tokensAfter"])
	if !(a1 < b1) || res[0]["summary"] == "" {
		t.Errorf("first compact: %v", res[0])
	}
	if b2 != a1 || a2 != b2 || res[1]["summary"] != "" {
		t.Errorf("second compact (nothing to summarise): %v after %v", res[1], res[0])
	}
	if n := len(eventsOf(r, "compaction_start")); n != 1 {
		t.Errorf("%d compaction_start events, want 1 (the no-op makes no model call)", n)
	}
})

// A first-turn overflow whose request is large: the whole context is
// summarised (nothing before the compaction is kept, firstKeptEntryId is
// the compaction itself) and the retry is answered from the summary.
func TestOverflowOnFirstTurnSummarisesTheRequest(t *testing.T) {
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"},
		Script: []byte(`[{"error":{"kind":"overflow"}},{"text":"## Summary\nThe user pasted a long log."},{"text":"answered"}]`)})
	big := strings.Repeat("log line ", 2000)
	r.Send(`{"id":"p","type":"prompt","message":"` + big + `"}`)
	r.WaitFor("agent_settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"m","type":"get_messages"}`)
	i := r.WaitFor("messages", 1, func(o *golden.Object) bool { return o.String("id") == "m" })
	r.CloseStdin()
	r.Wait()
	ends := eventsOf(r, "compaction_end")
	if len(ends) != 1 {
		t.Fatalf("compaction_end %v", ends)
	}
	res := ends[0]["result"].(map[string]any)
	if res["summary"] == "" || num(res["tokensAfter"]) >= num(res["tokensBefore"]) {
		t.Errorf("result %v", res)
	}
	var resp struct {
		Data struct {
			Messages []map[string]any `json:"messages"`
		} `json:"data"`
	}
	_ = json.Unmarshal(r.Lines()[i], &resp)
	var roles []string
	for _, m := range resp.Data.Messages {
		roles = append(roles, m["role"].(string))
	}
	if strings.Join(roles, ",") != "compactionSummary,assistant" {
		t.Errorf("context after recovery: %v", roles)
	}
}

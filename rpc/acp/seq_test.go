package acp_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// seqLines returns every session/update of sid with its _meta "ama/seq"
// (0: none), in output order.
func (c *client) seqLines(sid string) (seqs []uint64, updates int) {
	for _, l := range c.r.Lines() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string                     `json:"sessionId"`
				Meta      map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) != nil || m.Method != "session/update" || m.Params.SessionID != sid {
			continue
		}
		updates++
		var n uint64
		_ = json.Unmarshal(m.Params.Meta["ama/seq"], &n)
		seqs = append(seqs, n)
	}
	return seqs, updates
}

// A client that opts in (clientCapabilities._meta["ama/seq"]) gets a
// number on every session/update, chunks included, growing by one per
// line; a session loaded by a later process continues above it. A client
// that does not opt in gets none.
func TestACPSeqMeta(t *testing.T) {
	script := `[{"steps":[{"thinking":"hmm, let me think","chunkSize":3},{"text":"streamed in many small chunks","chunkSize":2}]},{"text":"second"}]`
	c := startACP(t, script)
	c.call(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"_meta": map[string]any{"ama/seq": true}}})
	sid := c.newSession()
	c.send("p", "session/prompt", prompt(sid, "hi"))
	c.stopReason("p")
	seqs, n := c.seqLines(sid)
	if n < 5 {
		t.Fatalf("only %d updates", n)
	}
	for i, s := range seqs {
		if s == 0 {
			t.Fatalf("update %d has no ama/seq: %v", i, seqs)
		}
		if i > 0 && s != seqs[i-1]+1 {
			t.Fatalf("ama/seq not consecutive: %v", seqs)
		}
	}
	chunks := 0
	for _, l := range c.r.Lines() {
		if strings.Contains(string(l), `"agent_message_chunk"`) {
			chunks++
			if !strings.Contains(string(l), `"_meta":{"ama/seq":`) {
				t.Fatalf("chunk without ama/seq: %s", l)
			}
		}
	}
	if chunks == 0 {
		t.Fatal("no agent_message_chunk")
	}
	last := seqs[len(seqs)-1]
	// Closed and loaded again: a new stream, numbered above the old one
	// (the reservation in the session file).
	c.call("close", "session/close", map[string]any{"sessionId": sid})
	before := len(seqs)
	c.call("load", "session/load", map[string]any{"sessionId": sid, "cwd": c.r.Work, "mcpServers": []any{}})
	seqs, _ = c.seqLines(sid)
	if len(seqs) <= before || seqs[before] <= last {
		t.Fatalf("after load the numbers %v do not continue above %d", seqs[before:], last)
	}
	c.finish(0)

	// Without the opt-in: no _meta on updates.
	c3 := startACP(t, script)
	c3.initialize()
	sid3 := c3.newSession()
	c3.send("p", "session/prompt", prompt(sid3, "hi"))
	c3.stopReason("p")
	for _, l := range c3.r.Lines() {
		if strings.Contains(string(l), "ama/seq") {
			t.Fatalf("ama/seq without opt-in: %s", l)
		}
	}
	c3.finish(0)
}

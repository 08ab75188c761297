package session

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/tools"
)

// BenchmarkDecisionRecord is what the record adds to one verdict: the
// shape of a bash call's resolved interpretation, the record, the
// counters, the tracker and the event (nobody subscribed), without and
// with the decision log. Issue 27's budget: 5 µs off, 50 µs on.
func BenchmarkDecisionRecord(b *testing.B) {
	for _, logged := range []bool{false, true} {
		name := "log off"
		if logged {
			name = "log on"
		}
		b.Run(name, func(b *testing.B) {
			fp := fake.New(fake.Options{Script: &fake.Script{}})
			deps := &Deps{Models: llm.NewRegistry(fp.Entry()), Dirs: Dirs{Data: b.TempDir(), Home: b.TempDir()},
				Policy: &approvals.Policy{Mode: approvals.ModeDefault}}
			if logged {
				l, err := permlog.OpenLog(filepath.Join(b.TempDir(), "permission.log"))
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				deps.Decisions = l
			}
			s, err := New(deps, Options{Cwd: b.TempDir(), Model: llm.ModelRef{Provider: fake.ProviderID, ID: "echo"}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			tenv := &tools.Env{Cwd: "/home/u/proj", Home: "/home/u"}
			args := json.RawMessage(`{"command":"git status && grep -rn TODO src | head -5 > /tmp/out.txt"}`)
			tc := &llm.ToolCall{ID: "call_1", Name: "bash", Arguments: args}
			bash := tools.Default().Tools()
			var tool tools.Tool
			for _, t := range bash {
				if t.Decl().Name == "bash" {
					tool = t
				}
			}
			p := &preparedCall{call: tc, tool: tool, res: tools.Resolve("bash", args, tenv)}
			env := &toolEnv{env: tenv, policy: permissionSnapshot{policy: approvals.Policy{Mode: approvals.ModeDefault}}}
			r := &runState{}
			for b.Loop() {
				rec := s.newRecord(r, env, p, "execute")
				rec.Votes = append(rec.Votes, permlog.Vote{Layer: "rule", Vote: "allow", Step: "mode"})
				rec.Effect = "allow"
				_ = s.record(rec, tc, false)
			}
		})
	}
}

// BenchmarkDecisionTraceEntry is what a record adds to the session file:
// its share of the reply's ama.trace step entry (ten records a reply,
// marshalled as the store does; per record).
func BenchmarkDecisionTraceEntry(b *testing.B) {
	rec := &permlog.Record{V: 1, Time: "2026-01-02T03:04:05.000Z", SessionID: "00000000-0000-4000-8000-000000000001", Turn: 3,
		ToolCallID: "call_1", Mode: "auto", Gate: "enforce",
		Shape:  permlog.Shape{Tool: "bash", Class: "execute", Programs: []string{"git", "grep", "head"}, Paths: []string{"project", "temp"}},
		Votes:  []permlog.Vote{{Layer: "rule", Vote: "classify", Step: "classifier"}, {Layer: "classifier", Vote: "allow", Stage: "fast", LatencyMs: 420}},
		Effect: "allow"}
	step := traceStep{Kind: "step", Attempt: 1, AssistantEntryID: "0000000a", OutputTokens: 7}
	for range 10 {
		step.Permissions = append(step.Permissions, rec)
	}
	for b.Loop() {
		if _, err := json.Marshal(step); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/record")
}

package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/tools"
)

// records are the permission_decision events' records in order.
func records(e *env) []*permlog.Record {
	var out []*permlog.Record
	for _, d := range eventsOf[events.PermissionDecision](e.rec) {
		out = append(out, d.Record.(*permlog.Record))
	}
	return out
}

// logRecords reads the decision log.
func logRecords(t *testing.T, path string) []permlog.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []permlog.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r permlog.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func layers(r *permlog.Record) string {
	var s []string
	for _, v := range r.Votes {
		s = append(s, v.Layer+":"+v.Vote)
	}
	return strings.Join(s, " ")
}

// TestDecisionRecord pins one record per verdict: its effect, code, the
// layers that voted, in the log and as the event, and the side effect
// (whether the tool ran).
func TestDecisionRecord(t *testing.T) {
	const secret = "MARKER-sk-live-0123456789abcdef"
	args := `{"token":"` + secret + `"}`
	for _, tc := range []struct {
		name     string
		mode     string
		deny     string
		approver Approver
		runs     int32
		effect   string
		code     string
		votes    string
	}{
		{"mode allows", "full-auto", "", nil, 1, "allow", "", "rule:allow"},
		{"person allows", "default", "", &answer{decision: "allow"}, 1, "allow", "", "rule:ask person:allow"},
		{"person declines", "default", "", &answer{decision: "deny"}, 0, "deny", permlog.CodeDeclined, "rule:ask person:deny"},
		{"nobody answers", "default", "", nil, 0, "deny", permlog.CodeNoAnswer, "rule:ask person:deny"},
		{"deny rule", "full-auto", "probe", nil, 0, "deny", permlog.CodeDenyRule, "rule:deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermWrite}
				logPath := filepath.Join(t.TempDir(), "permission.log")
				l, err := permlog.OpenLog(logPath)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", args), reply("done")}},
					mode: tc.mode, tools: []tools.Tool{p}, approver: tc.approver, deps: func(d *Deps) {
						d.Decisions = l
						if tc.deny != "" {
							r, _ := approvals.ParseRule(tc.deny)
							d.Policy.Deny = append(d.Policy.Deny, r)
						}
					}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if got := p.runs.Load(); got != tc.runs {
					t.Errorf("probe ran %d times, want %d", got, tc.runs)
				}
				recs := records(e)
				if len(recs) != 1 {
					t.Fatalf("%d records, want 1", len(recs))
				}
				r := recs[0]
				if r.Effect != tc.effect || r.Code != tc.code || layers(r) != tc.votes {
					t.Errorf("record effect %q code %q votes %q, want %q %q %q", r.Effect, r.Code, layers(r), tc.effect, tc.code, tc.votes)
				}
				if r.Shape.Tool != "probe" || r.Shape.Class != "write" || r.SessionID == "" || r.ToolCallID == "" || r.Mode != tc.mode || r.Gate != GateEnforce {
					t.Errorf("record ids/shape: %+v", r)
				}
				if tc.effect == "deny" && r.Rejections != 1 {
					t.Errorf("rejections %d, want 1", r.Rejections)
				}
				got := logRecords(t, logPath)
				if len(got) != 1 || got[0].Effect != tc.effect || got[0].Code != tc.code {
					t.Errorf("log %+v", got)
				}
				if b, _ := os.ReadFile(logPath); strings.Contains(strings.ToLower(string(b)), strings.ToLower(secret)) {
					t.Errorf("the argument reached the log: %s", b)
				}
				c := e.s.PermissionCounts()
				if c.Allowed+c.Denied != 1 || (tc.effect == "allow") != (c.Allowed == 1) {
					t.Errorf("counts %+v", c)
				}
			})
		})
	}
}

// A log that cannot be written under gate enforce: an allow nobody
// confirmed is asked instead (declined here: the tool does not run), the
// failure is announced once, and the record still reaches the event.
func TestDecisionLogFailureAsks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		l, err := permlog.OpenLog(filepath.Join(t.TempDir(), "permission.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		l.FailWith(func() error { return errors.New("disk full") })
		ap := &answer{decision: "deny"}
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{}`), toolCall("probe", `{"a":1}`), reply("done")}},
			mode: "full-auto", tools: []tools.Tool{p}, approver: ap, deps: func(d *Deps) { d.Decisions = l }})
		defer e.s.Close()
		e.runPrompt(t, "go")
		if p.runs.Load() != 0 || ap.asks.Load() != 2 {
			t.Errorf("probe ran %d times, %d asks; want 0 and 2", p.runs.Load(), ap.asks.Load())
		}
		recs := records(e)
		if len(recs) != 2 || layers(recs[0]) != "rule:allow log:ask person:deny" || recs[0].Asked != permlog.AskLog {
			t.Fatalf("records %d, first %q", len(recs), layers(recs[0]))
		}
		n := 0
		for _, ev := range eventsOf[events.Notification](e.rec) {
			if errors.Is(ev.Err, permlog.ErrLogWrite) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d log-failure notifications, want 1", n)
		}
	})
	t.Run("shadow gate goes on", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := &probe{name: "probe", perm: tools.PermWrite}
			l, _ := permlog.OpenLog(filepath.Join(t.TempDir(), "permission.log"))
			defer l.Close()
			l.FailWith(func() error { return errors.New("disk full") })
			e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{}`), reply("done")}},
				mode: "full-auto", tools: []tools.Tool{p}, settings: Settings{PermissionGate: GateShadow}, deps: func(d *Deps) { d.Decisions = l }})
			defer e.s.Close()
			e.runPrompt(t, "go")
			if p.runs.Load() != 1 {
				t.Errorf("probe ran %d times, want 1", p.runs.Load())
			}
		})
	})
}

// The same refused action, again and again: the count grows, and from
// MaxRejections on the model is told to stop retrying.
func TestRepeatedRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		call := toolCall("probe", `{"x": 1}`)
		call2 := toolCall("probe", `{"x":1}`) // the same action, other white space
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{call, call2, call, reply("done")}},
			mode: "default", tools: []tools.Tool{p}, approver: &answer{decision: "deny"}})
		defer e.s.Close()
		e.runPrompt(t, "go")
		recs := records(e)
		if len(recs) != 3 {
			t.Fatalf("%d records", len(recs))
		}
		for i, r := range recs {
			if r.Rejections != i+1 {
				t.Errorf("record %d: rejections %d", i, r.Rejections)
			}
		}
		ends := eventsOf[events.ToolExecutionEnd](e.rec)
		for i, end := range ends {
			stop := strings.Contains(resultText(end), "Do not retry it")
			if stop != (i == 2) {
				t.Errorf("result %d: %q", i, resultText(end))
			}
		}
	})
}

// permission_inspect: the views, as a method and as the model's tool; the
// denials view carries no argument.
func TestInspectPermissions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &probe{name: "probe", perm: tools.PermWrite}
		const secret = "MARKER-inspect-secret"
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{
			toolCall("probe", `{"s":"`+secret+`"}`), toolCall(InspectToolName, `{"action":"status"}`), reply("done")}},
			mode: "default", tools: []tools.Tool{p}, settings: Settings{InspectTool: true}, approver: &answer{decision: "deny"},
			deps: func(d *Deps) {
				r, _ := approvals.ParseRule("bash(rm *)")
				d.Policy.Deny = append(d.Policy.Deny, r)
			}})
		defer e.s.Close()
		e.runPrompt(t, "go")
		ends := eventsOf[events.ToolExecutionEnd](e.rec)
		if len(ends) != 2 || ends[1].IsError || !strings.Contains(resultText(ends[1]), `"denied": 1`) {
			t.Fatalf("inspect tool result: %+v", ends)
		}
		v, err := e.s.InspectPermissions(InspectConfig)
		if err != nil {
			t.Fatal(err)
		}
		cfg := v.(InspectConfigView)
		if len(cfg.Deny) != 1 || cfg.Deny[0].ID != "deny:0" || cfg.Deny[0].Rule != "bash(rm *)" || cfg.Gate != GateEnforce || cfg.MaxRejections != 3 {
			t.Errorf("config view %+v", cfg)
		}
		den, _ := e.s.InspectPermissions(InspectDenials)
		b, _ := json.Marshal(den)
		if strings.Contains(string(b), secret) || !strings.Contains(string(b), permlog.CodeDeclined) {
			t.Errorf("denials view %s", b)
		}
		if _, err := e.s.InspectPermissions("reset"); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("unknown action: %v", err)
		}
		st, _ := e.s.Stats()
		if st.Permissions == nil || st.Permissions.Denied != 1 || st.Permissions.Allowed != 1 {
			t.Errorf("stats permissions %+v", st.Permissions)
		}
	})
}

// Shadow and enforce (seed 004): the same candidate (a deny rule for the
// probe) is only recorded under shadow — the probe runs — and decides
// under enforce — it does not; each record carries the other policy's
// verdict, so the two differ only in what was enforced.
func TestGateShadowEnforce(t *testing.T) {
	for _, tc := range []struct {
		gate           string
		runs           int32
		effect, shadow string
		shadowPolicy   string
	}{
		{GateShadow, 1, "allow", "deny", "candidate"},
		{GateEnforce, 0, "deny", "allow", "current"},
		{GateOff, 1, "allow", "", ""},
	} {
		t.Run(tc.gate, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermWrite}
				r, _ := approvals.ParseRule("probe")
				cand := &approvals.Policy{Deny: []approvals.Rule{r}}
				e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{}`), reply("done")}},
					mode: "full-auto", tools: []tools.Tool{p}, settings: Settings{PermissionGate: tc.gate, Candidate: cand}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if p.runs.Load() != tc.runs {
					t.Errorf("probe ran %d times, want %d", p.runs.Load(), tc.runs)
				}
				recs := records(e)
				if len(recs) != 1 || recs[0].Effect != tc.effect || recs[0].Gate != tc.gate {
					t.Fatalf("records %+v", recs)
				}
				sh := recs[0].Shadow
				switch {
				case tc.shadow == "" && sh != nil:
					t.Errorf("gate off recorded a shadow %+v", sh)
				case tc.shadow != "" && (sh == nil || sh.Effect != tc.shadow || sh.Policy != tc.shadowPolicy || !sh.Differs):
					t.Errorf("shadow %+v, want %s from %s", sh, tc.shadow, tc.shadowPolicy)
				}
			})
		})
	}
	t.Run("candidate mode only tightens", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := &probe{name: "probe", perm: tools.PermWrite}
			cand := &approvals.Policy{Mode: approvals.ModeFullAuto}
			e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{toolCall("probe", `{}`), reply("done")}},
				mode: "default", tools: []tools.Tool{p}, settings: Settings{PermissionGate: GateEnforce, Candidate: cand}})
			defer e.s.Close()
			e.runPrompt(t, "go")
			if p.runs.Load() != 0 {
				t.Errorf("a looser candidate mode let the probe run")
			}
		})
	})
}

// An ask rule in auto mode (seed 003): the person is asked first; an
// accepted call still needs the classifier's allow; a declined one never
// reaches the classifier.
func TestAskRuleAutoMode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		person   events.Approval
		answer   string // the classifier's reply ("": no request expected)
		runs     int32
		requests int
		votes    string
		code     string
	}{
		{"accepted, classifier allows", "allow", `{"decision":"allow","reason":"fine"}`, 1, 3, "rule:classify person:allow classifier:allow", ""},
		{"accepted, classifier asks", "allow", `{"decision":"ask","reason":"unsure"}`, 0, 3, "rule:classify person:allow classifier:ask", permlog.CodeClassifierDeny},
		{"declined", "deny", "", 0, 2, "rule:classify person:deny", permlog.CodeDeclined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermExecute}
				a := &answer{decision: tc.person}
				resp := []fake.Response{toolCall("probe", `{"x":1}`)}
				if tc.answer != "" {
					resp = append(resp, reply(tc.answer))
				}
				resp = append(resp, reply("done"))
				e := newEnv(t, setup{mode: "auto", tools: []tools.Tool{p}, approver: a, script: &fake.Script{Responses: resp},
					deps: func(d *Deps) {
						r, _ := approvals.ParseRule("probe")
						d.Policy.Ask = []approvals.Rule{r}
					}})
				defer e.s.Close()
				e.runPrompt(t, "go")
				if p.runs.Load() != tc.runs || a.asks.Load() != 1 || e.fp.Calls() != tc.requests {
					t.Errorf("runs %d asks %d requests %d", p.runs.Load(), a.asks.Load(), e.fp.Calls())
				}
				recs := records(e)
				if len(recs) != 1 || layers(recs[0]) != tc.votes || recs[0].Code != tc.code || recs[0].Asked != permlog.AskRule {
					t.Errorf("records %d: votes %q code %q asked %q", len(recs), layers(recs[0]), recs[0].Code, recs[0].Asked)
				}
			})
		})
	}
}

// A nested call (a host tool's ExecuteTool) and a sub-agent's call pass
// the same gate: each verdict leaves its record, with the calling call and
// the task named.
func TestNestedAndChildRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		task string
	}{
		{"nested", Options{PermissionMode: "full-auto"}, ""},
		{"sub-agent", Options{PermissionMode: "full-auto", Parent: &ParentLink{TaskID: "task-7"}}, "task-7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{name: "probe", perm: tools.PermWrite}
				nest := &nester{target: "probe", args: `{}`}
				s := newNestedEnv(t, tc.opts, nest, p, nil, nil)
				defer s.Close()
				rec := &recorder{}
				s.Subscribe(rec.add)
				runNested(t, s)
				var recs []*permlog.Record
				for _, d := range eventsOf[events.PermissionDecision](rec) {
					recs = append(recs, d.Record.(*permlog.Record))
				}
				if len(recs) != 2 || recs[0].Shape.Tool != "nester" || recs[1].Shape.Tool != "probe" || recs[1].ParentToolCallID != recs[0].ToolCallID {
					t.Fatalf("records %+v", recs)
				}
				for _, r := range recs {
					if r.TaskID != tc.task || (tc.task != "") != (r.Depth == 1) {
						t.Errorf("task %q depth %d, want %q", r.TaskID, r.Depth, tc.task)
					}
				}
			})
		})
	}
}

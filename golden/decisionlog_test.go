package golden_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// The decision log through the real server (seed 004, issue 27): one
// record per verdict with its effect and code, the permission_decision
// event only for a client that declared the capability, and none of the
// secrets in the calls' arguments in the log (the side effect: grep the
// file, case-insensitively).
func TestDecisionLogNoSecrets(t *testing.T) {
	markers := []string{"MARKER-ALPHA-sk-0a1b2c", "marker-bravo-ghp_9z8y", "MarkerCharlie", "marker-delta-AKIAXYZ", "marker-echo-pw"}
	calls := []string{
		bashCall(`{"command":"echo ` + markers[0] + ` > a.txt"}`),
		bashCall(`{"command":"curl -H 'Authorization: ` + markers[1] + `' https://example.invalid"}`),
		`{"name":"write","arguments":{"path":"notes-` + markers[2] + `.txt","content":"` + markers[3] + `"}}`,
		bashCall(`{"command":"sk9f8e7d6c5b4a3210ff --password ` + markers[4] + `"}`),
	}
	for _, capable := range []bool{false, true} {
		name := "no capability"
		if capable {
			name = "capability"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			logPath := filepath.Join(root, "data", "permission.log")
			r := golden.Start(t, golden.Config{
				Args:       []string{"--model", "fake/echo", "--permission-mode", "full-auto"},
				Env:        map[string]string{"AMA_SANDBOX": "off"},
				UserConfig: []byte(`{"permission":{"logPath":"` + logPath + `","deny":["bash(curl *)"]}}`),
				Script:     turns(calls...),
			})
			if capable {
				r.Send(`{"id":"c","type":"set_client_capabilities","capabilities":["permission_decisions"]}`)
				r.WaitFor("capabilities", 1, func(o *golden.Object) bool { return o.String("type") == "response" && o.String("id") == "c" })
			}
			settle(t, r)
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			lower := strings.ToLower(string(b))
			for _, m := range markers {
				if strings.Contains(lower, strings.ToLower(m)) {
					t.Errorf("marker %q reached the decision log", m)
				}
			}
			if strings.Contains(lower, "sk9f8e7d6c5b4a3210ff") {
				t.Errorf("a token-like command name reached the log")
			}
			var effects, codes []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var rec struct {
					Effect, Code string
					Shape        struct{ Tool string }
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				effects, codes = append(effects, rec.Effect), append(codes, rec.Code)
			}
			if got := strings.Join(effects, ","); got != "allow,deny,allow,allow" {
				t.Errorf("effects %s", got)
			}
			if codes[1] != "deny_rule" {
				t.Errorf("codes %q", codes)
			}
			n := 0
			for _, l := range r.Lines() {
				if strings.Contains(string(l), `"type":"permission_decision"`) {
					n++
					for _, m := range markers {
						if strings.Contains(strings.ToLower(string(l)), strings.ToLower(m)) {
							t.Errorf("marker %q in the event: %s", m, l)
						}
					}
				}
			}
			if want := map[bool]int{false: 0, true: 4}[capable]; n != want {
				t.Errorf("%d permission_decision events, want %d", n, want)
			}
		})
	}
}

// The golden of the records (test/fixtures/rpc/permission-decisions): an
// allow, a deny, a classifier decision, a cache hit and an ask answered,
// one record each; no record holds command text or the secret.
func TestDecisionGoldenHoldsNoText(t *testing.T) {
	b, err := os.ReadFile("../test/fixtures/rpc/permission-decisions/out.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"type":"permission_decision"`) {
			continue
		}
		n++
		for _, m := range []string{"sk-fixture-secret-42", "Authorization", "example.invalid", "scripts/gen.js", "--force", "-H"} {
			if strings.Contains(l, m) {
				t.Errorf("record holds %q: %s", m, l)
			}
		}
	}
	if n != 5 {
		t.Errorf("%d records, want 5", n)
	}
}

// Shadow and enforce differ only in enforcement (seed 004): the goldens
// permission-gate-shadow and -enforce run the same calls under the same
// candidate; what one enforces the other records as its shadow.
func TestGateGoldensMirror(t *testing.T) {
	type rec struct {
		Effect, Asked string
		Shadow        *struct{ Policy, Effect string }
	}
	read := func(name string) []rec {
		b, err := os.ReadFile("../test/fixtures/rpc/permission-gate-" + name + "/out.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		var out []rec
		for _, l := range strings.Split(string(b), "\n") {
			var m struct {
				Type   string
				Record rec
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Type == "permission_decision" {
				out = append(out, m.Record)
			}
		}
		return out
	}
	sh, en := read("shadow"), read("enforce")
	if len(sh) != 3 || len(en) != 3 {
		t.Fatalf("%d and %d records", len(sh), len(en))
	}
	for i := range sh {
		if sh[i].Shadow == nil || en[i].Shadow == nil || sh[i].Shadow.Policy != "candidate" || en[i].Shadow.Policy != "current" {
			t.Fatalf("record %d: shadows %+v %+v", i, sh[i].Shadow, en[i].Shadow)
		}
		if sh[i].Effect != en[i].Shadow.Effect {
			t.Errorf("record %d: shadow run decided %s, enforce run says the current policy would %s", i, sh[i].Effect, en[i].Shadow.Effect)
		}
		enforced := en[i].Effect
		if en[i].Asked != "" {
			enforced = "ask"
		}
		if sh[i].Shadow.Effect != enforced {
			t.Errorf("record %d: the shadow said %s, enforcement did %s", i, sh[i].Shadow.Effect, enforced)
		}
	}
}

// The records in the session's trace (issue 27): the session file's
// ama.trace step entries carry the step's records, and get_trace shows
// them on their calls with decisions:true (without it the trace keeps
// ama's shape). Neither holds a marker of the calls' arguments.
func TestDecisionRecordsInTrace(t *testing.T) {
	markers := []string{"MARKER-ALPHA-sk-0a1b2c", "marker-bravo-ghp_9z8y", "MarkerCharlie", "marker-delta-AKIAXYZ"}
	r := golden.Start(t, golden.Config{
		Args:       []string{"--model", "fake/echo", "--permission-mode", "full-auto"},
		Env:        map[string]string{"AMA_SANDBOX": "off"},
		UserConfig: []byte(`{"permission":{"deny":["bash(curl *)"]}}`),
		Script: turns(
			bashCall(`{"command":"echo `+markers[0]+` > a.txt"}`),
			bashCall(`{"command":"curl -H 'Authorization: `+markers[1]+`' https://example.invalid"}`),
			`{"name":"write","arguments":{"path":"notes-`+markers[2]+`.txt","content":"`+markers[3]+`"}}`),
	})
	r.Send(`{"id":"p","type":"prompt","message":"go"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.Send(`{"id":"t","type":"get_trace","decisions":true}`)
	r.Send(`{"id":"plain","type":"get_trace"}`)
	r.WaitFor("trace", 1, func(o *golden.Object) bool { return o.String("id") == "plain" })
	var traceLine, plainLine string
	for _, l := range r.Lines() {
		switch {
		case strings.Contains(string(l), `"id":"t"`):
			traceLine = string(l)
		case strings.Contains(string(l), `"id":"plain"`):
			plainLine = string(l)
		}
	}
	if strings.Contains(plainLine, `"decisions"`) {
		t.Errorf("get_trace without decisions:true shows them: %s", plainLine)
	}
	var resp struct {
		Data struct {
			Trace struct {
				Turns []struct {
					Steps []struct {
						Tools []struct {
							ID        string
							Decisions []struct {
								ToolCallID string
								Effect     string
								Code       string
								Votes      []struct{ Layer, Vote, Step string }
							}
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(traceLine), &resp); err != nil {
		t.Fatalf("%v: %s", err, traceLine)
	}
	var effects []string
	for _, turn := range resp.Data.Trace.Turns {
		for _, s := range turn.Steps {
			for _, tool := range s.Tools {
				if len(tool.Decisions) != 1 || tool.Decisions[0].ToolCallID != tool.ID || len(tool.Decisions[0].Votes) == 0 {
					t.Fatalf("tool %s: decisions %+v", tool.ID, tool.Decisions)
				}
				d := tool.Decisions[0]
				effects = append(effects, d.Effect+"/"+d.Code+"/"+d.Votes[0].Step)
			}
		}
	}
	if got := strings.Join(effects, ","); got != "allow//mode,deny/deny_rule/deny-rule,allow//mode" {
		t.Errorf("trace decisions %s", got)
	}
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	files, _ := filepath.Glob(filepath.Join(r.Home, ".local", "share", "ama", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"customType":"ama.trace"`) {
			continue
		}
		records += strings.Count(l, `"toolCallId"`)
		for _, m := range markers {
			if strings.Contains(strings.ToLower(l), strings.ToLower(m)) {
				t.Errorf("marker %q in a trace entry of the session file: %s", m, l)
			}
		}
	}
	if records != 3 {
		t.Errorf("%d records in the session file's trace entries, want 3", records)
	}
	for _, m := range markers {
		if strings.Contains(strings.ToLower(traceLine), strings.ToLower(m)) {
			t.Errorf("marker %q in get_trace: %s", m, traceLine)
		}
	}
}

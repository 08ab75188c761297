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

package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

func code(n int) *int { return &n }

func out(e Event, exit int, stdout, stderr string) Outcome {
	return Interpret(e, &Command{Command: "c"}, Proc{ExitCode: code(exit), Stdout: stdout, Stderr: stderr}, DefaultTimeout)
}

func TestParseOutput(t *testing.T) {
	for _, s := range []string{"", "hello", "[1]", "{bad", "  "} {
		if ParseOutput(s) != nil {
			t.Errorf("%q: want no output", s)
		}
	}
	o := ParseOutput(` {"decision":"maybe","reason":5,"updatedInput":null,"continue":false,"suppressOutput":true,"additionalContext":"x"} `)
	if o.Decision != "" || o.Reason != "" || !o.HasUpdatedInput || !o.Stop || !o.SuppressOutput || o.AdditionalContext != "x" || len(o.Warnings) != 2 {
		t.Fatalf("%+v", o)
	}
	if ParseOutput(`{"continue":"false"}`).Stop {
		t.Fatal("only the literal false stops")
	}
}

func TestInterpretExitCodes(t *testing.T) {
	if o := out(PreToolUse, 2, "{\"decision\":\"allow\"}", " nope \n"); o.Decision != Deny || o.Reason != "nope" || o.Output != nil {
		t.Fatalf("exit 2 PreToolUse: %+v", o)
	}
	if o := out(Stop, 2, "", ""); o.Decision != Block || !strings.Contains(o.Reason, "Stop hook") {
		t.Fatalf("exit 2 Stop: %+v", o)
	}
	for _, e := range []Event{Notification, SessionEnd, PostRewind, PostCompact} {
		if o := out(e, 2, "", "x"); o.Decision != "" {
			t.Fatalf("exit 2 %s must be ignored: %+v", e, o)
		}
	}
	o := out(PreToolUse, 1, `{"decision":"deny"}`, "a\nb\nc\nd\n")
	if o.Decision != "" || len(o.Warnings) != 1 || !strings.HasSuffix(o.Warnings[0], "b | c | d") {
		t.Fatalf("exit 1: %+v", o)
	}
	if o := out(PreToolUse, 0, `{"decision":"block"}`, ""); o.Decision != Deny {
		t.Fatalf("block→deny: %+v", o)
	}
	if o := out(UserPromptSubmit, 0, `{"decision":"deny"}`, ""); o.Decision != Block {
		t.Fatalf("deny→block: %+v", o)
	}
	if o := out(UserPromptSubmit, 0, `{"decision":"allow"}`, ""); o.Decision != "" || len(o.Warnings) != 1 {
		t.Fatalf("allow not accepted: %+v", o)
	}
	// Timeout: PreToolUse denies (fail safe), others only warn (checklist 2).
	to := Interpret(PreToolUse, &Command{Command: "sleep"}, Proc{TimedOut: true}, 50)
	if to.Decision != Deny || to.ExitCode != nil {
		t.Fatalf("PreToolUse timeout: %+v", to)
	}
	if to := Interpret(PostToolUse, &Command{Command: "sleep"}, Proc{TimedOut: true}, 50); to.Decision != "" || len(to.Warnings) != 1 {
		t.Fatalf("PostToolUse timeout: %+v", to)
	}
}

// Checklist 3 and 4, and the merge rules of §4.3.
func TestMerge(t *testing.T) {
	r := Merge([]Outcome{out(PreToolUse, 0, `{"decision":"allow"}`, ""), out(PreToolUse, 0, `{"decision":"ask","reason":"check"}`, "")})
	if r.Decision != Ask || r.Reason != "check" {
		t.Fatalf("allow+ask: %+v", r)
	}
	r = Merge([]Outcome{out(PreToolUse, 0, `{"decision":"allow"}`, ""), out(PreToolUse, 0, `{"decision":"ask","reason":"check"}`, ""), out(PreToolUse, 2, "", "stop it")})
	if r.Decision != Deny || r.Reason != "stop it" {
		t.Fatalf("+exit 2: %+v", r)
	}
	r = Merge([]Outcome{out(PreToolUse, 0, `{"decision":"ask"}`, ""), out(PreToolUse, 0, `{"decision":"ask","reason":"second"}`, "")})
	if r.Reason != "second" {
		t.Fatalf("first non-empty reason among equals: %+v", r)
	}
	r = Merge([]Outcome{out(PreToolUse, 0, `{"updatedInput":{"a":1}}`, ""), out(PreToolUse, 0, `{"updatedInput":{"a":2}}`, "")})
	if r.HasUpdatedInput || len(r.Warnings) != 1 {
		t.Fatalf("two updatedInput: %+v", r)
	}
	r = Merge([]Outcome{out(PreToolUse, 0, `{"updatedInput":{"a":1}}`, ""), out(PreToolUse, 1, `{"updatedInput":{"a":2}}`, "")})
	if !r.HasUpdatedInput || string(r.UpdatedInput) != `{"a":1}` {
		t.Fatalf("one updatedInput (non-zero exits do not count): %+v", r)
	}
	r = Merge([]Outcome{out(UserPromptSubmit, 0, `{"additionalContext":" x "}`, ""), out(UserPromptSubmit, 0, `{"additionalContext":""}`, ""), out(UserPromptSubmit, 0, `{"additionalContext":"y"}`, "")})
	if r.AdditionalContext != "x\n\ny" {
		t.Fatalf("context: %q", r.AdditionalContext)
	}
	r = Merge([]Outcome{out(UserPromptSubmit, 0, `{"updatedPrompt":"a"}`, ""), out(UserPromptSubmit, 0, `{"updatedPrompt":"b"}`, "")})
	if r.UpdatedPrompt != nil {
		t.Fatal("two updatedPrompt must be ignored")
	}
	r = Merge([]Outcome{out(Stop, 0, `{"continue":false,"reason":"enough"}`, ""), out(Stop, 0, `{"suppressOutput":true}`, "")})
	if !r.Stop || r.Reason != "enough" || !r.SuppressOutput {
		t.Fatalf("stop: %+v", r)
	}
}

func TestBuildInputKeyOrder(t *testing.T) {
	b, err := BuildInput(PreToolUse, Common{SessionID: "s", SessionFile: "/x.jsonl", Cwd: "/w", Model: Model{"fake", "echo"}, PermissionMode: "default", Host: "armadra"},
		ToolInput{ToolCallID: "fake_call_0", ToolName: "bash", ToolInput: json.RawMessage(`{"command":"ls"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionId":"s","sessionFile":"/x.jsonl","cwd":"/w","model":{"provider":"fake","id":"echo"},"permissionMode":"default","depth":0,"host":"armadra","toolCallId":"fake_call_0","toolName":"bash","toolInput":{"command":"ls"},"hookEventName":"PreToolUse"}` + "\n"
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	b, _ = BuildInput(Stop, Common{SessionID: "s", Cwd: "/w", Depth: 1}, StopInput{StopHookActive: true})
	if !strings.Contains(string(b), `"depth":1,"stopHookActive":true,"hookEventName":"Stop"}`) || strings.Contains(string(b), "host") || strings.Contains(string(b), "sessionFile") {
		t.Fatalf("stop input: %s", b)
	}
}

// Checklist 8.
func TestEnvAMAFile(t *testing.T) {
	c := Common{SessionID: "s", Cwd: "/w"}
	has := func(env []string, kv string) bool {
		for _, e := range env {
			if e == kv {
				return true
			}
		}
		return false
	}
	env := Env(nil, PreToolUse, c, "edit", json.RawMessage(`{"path":"a.ts"}`))
	if !has(env, "AMA_FILE=a.ts") || !has(env, "AMA_TOOL_NAME=edit") || !has(env, "AMA_HOOK_EVENT=PreToolUse") || !has(env, "AMA_SESSION_ID=s") || !has(env, "AMA_CWD=/w") {
		t.Fatalf("edit env: %v", env)
	}
	env = Env(nil, PreToolUse, c, "bash", json.RawMessage(`{"command":"ls","path":"a.ts"}`))
	for _, e := range env {
		if strings.HasPrefix(e, "AMA_FILE=") {
			t.Fatalf("bash must not set AMA_FILE: %v", env)
		}
	}
	if env := Env(nil, Stop, c, "", nil); len(env) != 3 {
		t.Fatalf("stop env: %v", env)
	}
}

func TestApplyToVerdict(t *testing.T) {
	modeAsk := approvals.Verdict{Decision: approvals.Ask, Layer: "mode", AskReason: "mode"}
	cases := []struct {
		name string
		v    approvals.Verdict
		d    Decision
		want approvals.Decision
		ask  string
	}{
		{"allow lifts a mode ask", modeAsk, Allow, approvals.Allow, ""},
		{"allow never lifts the dangerous list", approvals.Verdict{Decision: approvals.Ask, Layer: "dangerous", AskReason: "dangerous"}, Allow, approvals.Ask, "dangerous"},
		{"allow never lifts a deny rule", approvals.Verdict{Decision: approvals.Deny, Layer: "deny-rule"}, Allow, approvals.Deny, ""},
		{"allow does not lift auto's rule tier", approvals.Verdict{Decision: approvals.Ask, Layer: "auto-rule", AskReason: "mode"}, Allow, approvals.Ask, "mode"},
		{"ask turns an allow into an ask", approvals.Verdict{Decision: approvals.Allow, Layer: "mode"}, Ask, approvals.Ask, "hook"},
		{"ask before the classifier", approvals.Verdict{Decision: approvals.Ask, Layer: "classifier", Classify: true, AskReason: "mode"}, Ask, approvals.Ask, "hook"},
		{"ask on a mode ask keeps reason mode", modeAsk, Ask, approvals.Ask, "mode"},
		{"ask never lifts a deny", approvals.Verdict{Decision: approvals.Deny, Layer: "plan"}, Ask, approvals.Deny, ""},
	}
	for _, c := range cases {
		got := ApplyToVerdict(c.v, c.d, "r")
		if got.Decision != c.want || got.AskReason != c.ask || got.Classify {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

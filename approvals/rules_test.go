package approvals_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

func TestParseRule(t *testing.T) {
	valid := map[string][2]string{ // text → tool, pattern
		"bash":                 {"bash", ""},
		"bash(npm run *)":      {"bash", "npm run *"},
		"write(src/**)":        {"write", "src/**"},
		"canvas_*":             {"canvas_*", ""},
		"memory(/memories/**)": {"memory", "/memories/**"},
		"  read(**/.env)  ":    {"read", "**/.env"},
		"Bash(git status)":     {"bash", "git status"},
		"@bash(ls)":            {"bash", "ls"},
		"*":                    {"*", ""},
		"bash(echo (x))":       {"bash", "echo (x)"},
		"read({src,lib}/**)":   {"read", "{src,lib}/**"},
		"mcp__server__tool":    {"mcp__server__tool", ""},
		"task(explore)":        {"task", "explore"},
	}
	for text, want := range valid {
		r, err := approvals.ParseRule(text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		pat, _ := r.Pattern()
		if r.Tool() != want[0] || pat != want[1] || r.String() != strings.TrimSpace(text) {
			t.Errorf("%q: tool %q pattern %q string %q", text, r.Tool(), pat, r.String())
		}
	}
	invalid := []string{"", "bash()", "bash( )", "bash(", "bash(ls", "bash)ls(", "ba sh", "bash(ls))", "bash((ls)",
		"bash(x) y", "read([)", "b@d", "bash(" + strings.Repeat("x", approvals.MaxPatternLen+1) + ")", "write(src/[)"}
	for _, text := range invalid {
		r, err := approvals.ParseRule(text)
		if err == nil || !errors.Is(err, approvals.ErrInvalidRule) || r.Err() == nil {
			t.Errorf("%q: want ErrInvalidRule, got %v", text, err)
		}
	}
}

// Malformed deny rules fail closed, malformed allow rules match nothing.
func TestMalformedRules(t *testing.T) {
	cases := []struct {
		rule      string
		hits, not []approvals.Call
	}{
		{"bash(", []approvals.Call{bashCall("ls"), bashCall("echo hi")}, []approvals.Call{pathCall("read", approvals.ClassRead, "a")}},
		{"bash()", []approvals.Call{bashCall("ls")}, []approvals.Call{pathCall("write", approvals.ClassWrite, "a")}},
		{"write(src/[)", []approvals.Call{pathCall("write", approvals.ClassWrite, "lib/x")}, []approvals.Call{bashCall("ls")}},
		{"b@d(x", []approvals.Call{bashCall("ls"), pathCall("read", approvals.ClassRead, "a"), toolCall("todo", approvals.ClassExecute, nil)}, nil},
		{"", []approvals.Call{bashCall("ls")}, nil},
	}
	for _, c := range cases {
		r, err := approvals.ParseRule(c.rule)
		if err == nil {
			t.Fatalf("%q parsed", c.rule)
		}
		deny := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: []approvals.Rule{r}}
		allow := &approvals.Policy{Mode: approvals.ModeDefault, Allow: []approvals.Rule{r}}
		for _, call := range c.hits {
			if v := approvals.Decide(call, deny, nil); v.Decision != approvals.Deny {
				t.Errorf("deny %q on %s %s: %s", c.rule, call.Tool, call.Input, v.Decision)
			}
			if v := approvals.Decide(call, allow, nil); v.Layer == "allow-rule" {
				t.Errorf("allow %q matched %s", c.rule, call.Input)
			}
		}
		for _, call := range c.not {
			if v := approvals.Decide(call, deny, nil); v.Decision == approvals.Deny {
				t.Errorf("deny %q hit other tool %s", c.rule, call.Tool)
			}
		}
	}
}

// Bash patterns: deny rules hit the whole command, any segment, any nested
// layer and the normalised command; allow rules must cover every segment.
func TestBashRules(t *testing.T) {
	deny := []struct {
		rule string
		hit  []string
		miss []string
	}{
		{"bash(rm *)", []string{"rm x", "ls && rm x", "echo $(rm x)", "(rm x)", `bash -c "rm x"`, `\rm x`, "/bin/rm x",
			"sudo rm x", "env -i rm x", "nice -n 5 rm x", "xargs rm", "find . -exec rm {} +", "if a; then rm x; fi", "RM x"},
			[]string{"ls", "echo rm", "farm x", "rmdir x"}},
		{"bash(git push *)", []string{"git push origin x", "git push", "cd a && git push -f"}, []string{"git pull", "git pusher"}},
		{"bash(terraform*)", []string{"terraform apply", "terraformer"}, []string{"tf apply"}},
		{"bash(*secret*)", []string{"cat secret.txt", "echo x > topsecret"}, []string{"cat public"}},
		{"bash(curl ? x)", []string{"curl a x"}, []string{"curl ab x"}},
	}
	for _, d := range deny {
		p := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: mustRules(t, d.rule)}
		for _, cmd := range d.hit {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision != approvals.Deny || v.Layer != "deny-rule" {
				t.Errorf("%s on %q: %s/%s", d.rule, cmd, v.Decision, v.Layer)
			}
		}
		for _, cmd := range d.miss {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Layer == "deny-rule" {
				t.Errorf("%s hit %q", d.rule, cmd)
			}
		}
	}

	allow := []struct {
		rules []string
		yes   []string
		no    []string
	}{
		{[]string{"bash(git status*)"}, []string{"git status", "git status --short", "git statusx", "git status 2>/dev/null"},
			[]string{"git status && curl x", "GIT_DIR=x git status", "git status; ls", "(git status)", "git status $(x)",
				"git status > out.txt", "echo `git status`", "Git status", " git  log"}},
		{[]string{"bash(npm test*)", "bash(npm run lint*)"}, []string{"npm test", "npm test && npm run lint", "npm testx", "npm test | npm run lint"},
			[]string{"npm test && npm run build", "npm run lint -- --fix; rm x"}},
		{[]string{"bash(npm run build > *)"}, []string{"npm run build > log.txt"}, []string{"npm run build"}},
		{[]string{"bash(bash -c *)", "bash(ls)"}, []string{`bash -c "ls"`}, []string{`bash -c "pwd"`}},
		{[]string{"bash"}, []string{"anything goes", "echo $(date)", "(cd x && make)"}, []string{`echo "unterminated`}},
		{[]string{"bash(*)"}, []string{"ls", "make deploy"}, []string{"echo $(date)", "if a; then b; fi"}},
	}
	for _, a := range allow {
		p := &approvals.Policy{Mode: approvals.ModeDefault, Allow: mustRules(t, a.rules...)}
		for _, cmd := range a.yes {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision != approvals.Allow || v.Layer != "allow-rule" {
				t.Errorf("%v on %q: %s (%s)", a.rules, cmd, v.Decision, v.Reason)
			}
		}
		for _, cmd := range a.no {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision == approvals.Allow {
				t.Errorf("%v allowed %q", a.rules, cmd)
			}
		}
	}
}

// Oversized commands: deny rules match, allow rules do not.
func TestOversizedCommand(t *testing.T) {
	big := "echo " + strings.Repeat("a", approvals.MaxMatchInput+10)
	deny := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: mustRules(t, "bash(terraform *)")}
	if v := approvals.Decide(bashCall(big), deny, nil); v.Decision != approvals.Deny {
		t.Fatalf("deny: %s", v.Decision)
	}
	allow := &approvals.Policy{Mode: approvals.ModeDefault, Allow: mustRules(t, "bash(echo *)", "bash")}
	v := approvals.Decide(bashCall(big), allow, nil)
	if v.Decision != approvals.Ask || !hasID(v.Dangerous, approvals.DangerUnparsable) {
		t.Fatalf("allow: %s %v", v.Decision, v.Dangerous)
	}
	full := &approvals.Policy{Mode: approvals.ModeFullAuto}
	if v := approvals.Decide(bashCall(big), full, nil); v.Decision != approvals.Ask {
		t.Fatalf("full-auto: %s", v.Decision)
	}
}

// Path patterns (section 9.1).
func TestPathRules(t *testing.T) {
	cases := []struct {
		rule string
		yes  []string
		no   []string
	}{
		{"write(src/**)", []string{"src/a.ts", "src/deep/b.ts", cwd + "/src/c.ts", "./src/d.ts"}, []string{"lib/x", "/tmp/src/a", "srcx/a"}},
		{"write(*.md)", []string{"README.md"}, []string{"docs/a.md", "a.txt"}},
		{"write({src,test}/*.ts)", []string{"src/a.ts", "test/b.ts"}, []string{"lib/a.ts", "src/x/a.ts"}},
		{"write(/tmp/**)", []string{"/tmp/x", "/tmp/a/b"}, []string{"/var/tmp/x", "tmp/x"}},
		{"write(~/notes/**)", []string{"~/notes/a", home + "/notes/b/c"}, []string{"notes/a"}},
		{"write(**/.env)", []string{".env", "a/b/.env", "/etc/x/.env"}, []string{".env.local"}},
		{"write(**)", []string{"a", "a/b", ".", "/tmp/x"}, nil},
		{"write(.)", []string{"."}, []string{"a"}},
		{"write(src/?.ts)", []string{"src/a.ts"}, []string{"src/ab.ts"}},
	}
	for _, c := range cases {
		p := &approvals.Policy{Mode: approvals.ModeDefault, Allow: mustRules(t, c.rule)}
		for _, path := range c.yes {
			if v := approvals.Decide(pathCall("write", approvals.ClassWrite, path), p, nil); v.Decision != approvals.Allow {
				t.Errorf("%s on %q: %s", c.rule, path, v.Decision)
			}
		}
		for _, path := range c.no {
			if v := approvals.Decide(pathCall("write", approvals.ClassWrite, path), p, nil); v.Decision == approvals.Allow {
				t.Errorf("%s allowed %q", c.rule, path)
			}
		}
	}
	// A path tool without a path works on the cwd.
	p := &approvals.Policy{Mode: approvals.ModeAllowlist, Allow: mustRules(t, "glob(**)")}
	if v := approvals.Decide(toolCall("glob", approvals.ClassExecute, map[string]any{"pattern": "*.go"}), p, nil); v.Decision != approvals.Allow {
		t.Errorf("pathless glob: %s", v.Decision)
	}
	// Deny path rules ignore case.
	d := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: mustRules(t, "read(**/secrets/**)")}
	if v := approvals.Decide(pathCall("read", approvals.ClassRead, "x/SECRETS/a"), d, nil); v.Decision != approvals.Deny {
		t.Errorf("deny fold: %s", v.Decision)
	}
}

// Tool-name globs and tools without a path.
func TestToolRules(t *testing.T) {
	p := &approvals.Policy{Mode: approvals.ModeDefault, Allow: mustRules(t, "canvas_*", "fetch(x)")}
	if v := approvals.Decide(toolCall("canvas_send", approvals.ClassExecute, map[string]any{"text": "x"}), p, nil); v.Decision != approvals.Allow {
		t.Errorf("canvas_*: %s", v.Decision)
	}
	if v := approvals.Decide(toolCall("canvasx", approvals.ClassExecute, nil), p, nil); v.Decision == approvals.Allow {
		t.Error("canvas_* matched canvasx")
	}
	// A rule with a pattern never matches a tool without a path.
	if v := approvals.Decide(toolCall("fetch", approvals.ClassExecute, map[string]any{"url": "x"}), p, nil); v.Decision == approvals.Allow {
		t.Error("pattern matched a pathless tool")
	}
	// As a deny or ask rule it cannot be evaluated there, so it fails
	// closed: it hits every call of the tools it names, and no other.
	dp := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: mustRules(t, "mcp__db__*(prod*)")}
	if v := approvals.Decide(toolCall("mcp__db__drop", approvals.ClassExecute, map[string]any{"table": "users"}), dp, nil); v.Decision != approvals.Deny {
		t.Errorf("deny pattern on a pathless tool: %s", v.Decision)
	}
	if v := approvals.Decide(toolCall("mcp__web__get", approvals.ClassExecute, map[string]any{"url": "x"}), dp, nil); v.Decision != approvals.Allow {
		t.Errorf("deny pattern hit a tool it does not name: %s", v.Decision)
	}
	ap := &approvals.Policy{Mode: approvals.ModeFullAuto, Ask: mustRules(t, "mcp__db__drop(x)")}
	if v := approvals.Decide(toolCall("mcp__db__drop", approvals.ClassExecute, map[string]any{"table": "users"}), ap, nil); v.Decision != approvals.Ask {
		t.Errorf("ask pattern on a pathless tool: %s", v.Decision)
	}
	d := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: mustRules(t, "*")}
	if v := approvals.Decide(pathCall("read", approvals.ClassRead, "a"), d, nil); v.Decision != approvals.Deny {
		t.Errorf("deny *: %s", v.Decision)
	}
}

// memory tool (1.5): view is read, everything else execute; rules match
// the command name or the logical path.
func TestMemoryTool(t *testing.T) {
	mem := func(cmd, path string) approvals.Call {
		return toolCall("memory", approvals.ClassMemory, map[string]any{"command": cmd, "path": path})
	}
	def := &approvals.Policy{Mode: approvals.ModeDefault}
	if v := approvals.Decide(mem("view", "/memories/a"), def, nil); v.Decision != approvals.Allow {
		t.Errorf("view: %s", v.Decision)
	}
	for _, cmd := range []string{"create", "str_replace", "delete", "rename", "bogus", ""} {
		if v := approvals.Decide(mem(cmd, "/memories/a"), def, nil); v.Decision != approvals.Ask {
			t.Errorf("%q: %s", cmd, v.Decision)
		}
		if v := approvals.Decide(mem(cmd, "/memories/a"), &approvals.Policy{Mode: approvals.ModePlan}, nil); v.Decision != approvals.Deny {
			t.Errorf("plan %q: %s", cmd, v.Decision)
		}
	}
	rules := map[string][2]bool{ // rule → allows create /memories/user/x, allows create /memories/team/x
		"memory(create)":            {true, true},
		"memory(/memories/user/**)": {true, false},
		"memory(*)":                 {true, true},
		"memory(**)":                {true, true},
		"memory(delete)":            {false, false},
		"memory":                    {true, true},
	}
	for rule, want := range rules {
		p := &approvals.Policy{Mode: approvals.ModeDefault, Allow: mustRules(t, rule)}
		for i, path := range []string{"/memories/user/x", "/memories/team/x"} {
			got := approvals.Decide(mem("create", path), p, nil).Decision == approvals.Allow
			if got != want[i] {
				t.Errorf("%s on %s: %v", rule, path, got)
			}
		}
	}
	// Logical paths are not real paths: auto mode does not treat them as outside the project.
	if v := approvals.Decide(mem("create", "/memories/a"), &approvals.Policy{Mode: approvals.ModeAuto}, nil); !v.Classify {
		t.Errorf("auto memory create: %+v", v)
	}
	// A session grant covers every write command of the memory tool.
	m := approvals.NewMemory()
	m.Remember(mem("create", "/memories/a"))
	if !m.Covers(mem("delete", "/memories/zzz")) {
		t.Error("memory grant")
	}
}

// The zero Rule behaves like a malformed one.
func TestZeroRule(t *testing.T) {
	deny := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: []approvals.Rule{{}}}
	if v := approvals.Decide(pathCall("read", approvals.ClassRead, "a"), deny, nil); v.Decision != approvals.Deny {
		t.Errorf("zero deny rule: %s", v.Decision)
	}
	allow := &approvals.Policy{Mode: approvals.ModeDefault, Allow: []approvals.Rule{{}}}
	if v := approvals.Decide(bashCall("make"), allow, nil); v.Decision != approvals.Ask {
		t.Errorf("zero allow rule: %s", v.Decision)
	}
}

package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

func runExplain(t *testing.T, args []string, input string) []map[string]any {
	t.Helper()
	home := t.TempDir()
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{
		Args: append([]string{"explain"}, args...), Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, Cwd: t.TempDir(),
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad line %q", l)
		}
		res = append(res, m)
	}
	return res
}

func TestExplain(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		call     string
		decision string
		layer    string
	}{
		{"default asks for bash", nil, `{"tool":"bash","input":{"command":"npm test"}}`, "ask", "mode"},
		{"reads are allowed", nil, `{"tool":"read","input":{"path":"src/a.go"}}`, "allow", "mode"},
		{"allow rule lifts the ask", []string{"--allow", "bash(npm test*)"}, `{"tool":"bash","input":{"command":"npm test -- -v"}}`, "allow", "allow-rule"},
		{"deny rule wins", []string{"--permission-mode", "full-auto", "--deny", "bash(terraform *)"}, `{"tool":"bash","input":{"command":"terraform apply"}}`, "deny", "deny-rule"},
		{"dangerous asks even in full-auto", []string{"--permission-mode", "full-auto"}, `{"tool":"bash","input":{"command":"\\rm -rf ~"}}`, "ask", "dangerous"},
		{"unattended turns ask into deny", []string{"--unattended"}, `{"tool":"write","input":{"path":"a.txt","content":"x"}}`, "deny", "mode"},
		{"plan refuses writes", []string{"--permission-mode", "plan"}, `{"tool":"edit","input":{"path":"a.txt","edits":[]}}`, "deny", "plan"},
		{"unparsable command never allowed", []string{"--permission-mode", "full-auto"}, `{"tool":"bash","input":{"command":"echo 'unterminated"}}`, "ask", "dangerous"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runExplain(t, c.args, c.call+"\n")
			if len(got) != 1 || got[0]["decision"] != c.decision || got[0]["layer"] != c.layer {
				t.Fatalf("got %v, want %s by %s", got, c.decision, c.layer)
			}
		})
	}
}

func TestExplainBadLineKeepsGoing(t *testing.T) {
	got := runExplain(t, nil, "nope\n{\"tool\":\"ls\",\"input\":{}}\n")
	if len(got) != 2 || got[0]["error"] == nil || got[1]["decision"] != "allow" {
		t.Fatalf("got %v", got)
	}
}

// explain resolves calls like the server: the bash cwd argument and the
// symlinks of existing paths.
func TestExplainResolves(t *testing.T) {
	root := t.TempDir()
	proj, outside := root+"/proj", root+"/outside"
	for _, d := range []string{proj, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, proj+"/linkdir"); err != nil {
		t.Fatal(err)
	}
	input := strings.Join([]string{
		`{"tool":"write","input":{"path":"linkdir/pwned.txt","content":"x"}}`,
		`{"tool":"bash","input":{"command":"echo x > outside.txt","cwd":".."}}`,
		`{"tool":"bash","input":{"command":"echo x > linkdir/b"}}`,
		`{"tool":"write","input":{"path":"src/a.txt","content":"x"}}`,
	}, "\n") + "\n"
	got := runExplain(t, []string{"--permission-mode", "auto", "--cwd", proj}, input)
	want := []string{"ask", "ask", "ask", "allow"}
	for i, w := range want {
		if i >= len(got) || got[i]["decision"] != w {
			t.Errorf("line %d: %v, want %s", i+1, got, w)
		}
	}
}

// `explain --replay` refuses what it cannot do with documented codes:
// a missing or unrecognised input 5, hooks or arguments 2, a flag of
// --replay without it 2, --candidate without a candidate 3.
func TestExplainReplayErrors(t *testing.T) {
	dir := t.TempDir()
	notLog := dir + "/notes.txt"
	if err := os.WriteFile(notLog, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyLog := dir + "/permission.log"
	if err := os.WriteFile(emptyLog, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"missing file", []string{"--replay", dir + "/nope.log"}, app.ExitSession},
		{"not a log", []string{"--replay", notLog}, app.ExitSession},
		{"hooks", []string{"--replay", emptyLog, "--hooks", notLog}, app.ExitUsage},
		{"argument", []string{"--replay", emptyLog, "extra"}, app.ExitUsage},
		{"all without replay", []string{"--all"}, app.ExitUsage},
		{"bad mode", []string{"--replay", emptyLog, "--permission-mode", "yolo"}, app.ExitUsage},
		{"candidate without one", []string{"--replay", emptyLog, "--candidate"}, app.ExitConfig},
		{"relative path", []string{"--replay", "permission.log"}, app.ExitOK},
		{"empty log", []string{"--replay", emptyLog}, app.ExitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := app.Main(t.Context(), app.Env{Args: append([]string{"explain"}, c.args...), Stdin: strings.NewReader(""),
				Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
					if k == "HOME" {
						return dir
					}
					return ""
				}, Cwd: dir})
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out.String(), errb.String())
			}
		})
	}
}

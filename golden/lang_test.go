package golden_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/armadra/ama-rpc/app"
	"github.com/armadra/ama-rpc/golden"
)

// Interface language goldens (issue 33, spec i18n.md checklist 6 and 7):
// the same session run under AMA_LANG=en and AMA_LANG=zh differs in the
// human-readable text of a fixed-text error and nowhere else: every other
// output line, and every byte of every recorded model request, is the
// same; --help is recorded in both languages.

func cjk(b []byte) bool {
	return bytes.IndexFunc(b, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}

// langScript reads a file, reads a big one (its output is cut), reads a
// missing image, writes (denied by --deny write), calls an unknown tool,
// then answers.
const langScript = `{"responses":[
 {"steps":[
  {"toolCall":{"name":"read","arguments":{"path":"small.txt"},"id":"c1"}},
  {"toolCall":{"name":"read","arguments":{"path":"big.txt"},"id":"c2"}},
  {"toolCall":{"name":"read","arguments":{"path":"missing.png"},"id":"c3"}},
  {"toolCall":{"name":"write","arguments":{"path":"out.txt","content":"x"},"id":"c4"}},
  {"toolCall":{"name":"no_such_tool","arguments":{},"id":"c5"}}]},
 {"text":"done"}]}`

func langFiles() map[string]string {
	var big strings.Builder
	for i := range 3000 {
		big.WriteString("line " + strings.Repeat("x", i%50) + "\n")
	}
	return map[string]string{"small.txt": "hello\n", "big.txt": big.String()}
}

// langRun is one run's output lines, model requests and stderr, with the
// run's root written <root>.
type langRun struct {
	lines  []string
	record []byte
	stderr string
	code   int
}

func startLang(t *testing.T, lang string, args ...string) *golden.Run {
	return golden.Start(t, golden.Config{Args: args, Env: map[string]string{"AMA_LANG": lang},
		Script: []byte(langScript), Files: langFiles()})
}

func finishLang(t *testing.T, r *golden.Run) langRun {
	t.Helper()
	r.CloseStdin()
	code := r.Wait()
	rec, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := langRun{record: bytes.ReplaceAll(rec, []byte(r.Root), []byte("<root>")), code: code,
		stderr: strings.ReplaceAll(r.Stderr(), r.Root, "<root>")}
	for _, l := range golden.MergeDeltas(r.Lines()) {
		out.lines = append(out.lines, strings.ReplaceAll(string(l), r.Root, "<root>"))
	}
	if n := bytes.Count(out.record, []byte("\n")); n != 2 {
		t.Fatalf("%d model requests recorded, want 2 (the script did not run as meant)", n)
	}
	for _, want := range []string{"hello", "missing.png", `"c4"`, `"c5"`} {
		if !bytes.Contains(out.record, []byte(want)) {
			t.Fatalf("the recorded requests lack %s", want)
		}
	}
	return out
}

// compareLang checks that the model requests are byte-identical and
// that the output lines differ only where differ says (it is given each
// line: the English text and the Chinese text replacing it; an empty
// English text: a line the caller checks itself). Lines are compared as
// a multiset: parallel read-only calls finish in any order.
func compareLang(t *testing.T, en, zh langRun, differ func(line string) (enText, zhText string, ok bool)) {
	t.Helper()
	if !bytes.Equal(en.record, zh.record) {
		t.Errorf("the model requests differ between en and zh:\nen %s\nzh %s", en.record, zh.record)
	}
	if cjk(en.record) {
		t.Errorf("CJK in the model request: %s", en.record)
	}
	wantChange := differ != nil
	if differ == nil {
		differ = func(string) (string, string, bool) { return "", "", false }
	}
	changed := 0
	var enT, zhT []string
	for _, l := range en.lines {
		if enText, zhText, ok := differ(l); ok {
			if enText == "" {
				continue
			}
			if !strings.Contains(l, enText) {
				t.Errorf("en line lacks %q: %s", enText, l)
			}
			l = strings.Replace(l, enText, zhText, 1)
			changed++
		} else if cjk([]byte(l)) {
			t.Errorf("CJK in English: %s", l)
		}
		enT = append(enT, l)
	}
	for _, l := range zh.lines {
		if enText, _, ok := differ(l); ok && enText == "" {
			continue
		}
		zhT = append(zhT, l)
	}
	slices.Sort(enT)
	slices.Sort(zhT)
	if !slices.Equal(enT, zhT) {
		for i := range min(len(enT), len(zhT)) {
			if enT[i] != zhT[i] {
				t.Errorf("the lines differ beyond the translated text (%d en, %d zh lines):\nen %s\nzh %s", len(enT), len(zhT), enT[i], zhT[i])
				break
			}
		}
		if len(enT) != len(zhT) {
			t.Errorf("en wrote %d lines, zh %d", len(enT), len(zhT))
		}
	}
	if changed == 0 && wantChange {
		t.Errorf("no line carried the translated text")
	}
}

// Native protocol: an unknown command's error text changes, its code and
// every other line do not, nor the model requests.
func TestLangGoldenRPC(t *testing.T) {
	run := func(lang string) langRun {
		r := startLang(t, lang, "--model", "fake/echo", "--no-session", "--permission-mode", "default", "--deny", "write")
		r.Send(`{"id":"x","type":"no_such"}`)
		r.WaitFor("the unknown command's response", 1, func(o *golden.Object) bool { return o.String("id") == "x" })
		r.Send(`{"id":"p","type":"prompt","message":"go"}`)
		r.WaitFor("agent_settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
		return finishLang(t, r)
	}
	en, zh := run("en"), run("zh")
	compareLang(t, en, zh, func(l string) (string, string, bool) {
		if strings.Contains(l, `"id":"x"`) {
			if !strings.Contains(l, `"code":"invalid_arguments"`) {
				t.Errorf("the code changed: %s", l)
			}
			return `"error":"unknown command: no_such"`, `"error":"未知命令：no_such"`, true
		}
		return "", "", false
	})
}

// ACP: an unknown method's JSON-RPC message and the session's mode
// descriptions change; the codes, ids and every update of the prompt turn
// do not, nor the model requests.
func TestLangGoldenACP(t *testing.T) {
	run := func(lang string) langRun {
		r := startLang(t, lang, "--mode", "acp", "--model", "fake/echo", "--no-session", "--permission-mode", "default", "--deny", "write")
		sid := acpNewSession(t, r)
		r.Send(`{"jsonrpc":"2.0","id":3,"method":"no/such","params":{}}`)
		r.WaitFor("no/such", 1, acpResponse("3"))
		r.Send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"go"}]}}`)
		r.WaitFor("session/prompt", 1, acpResponse("4"))
		return finishLang(t, r)
	}
	en, zh := run("en"), run("zh")
	compareLang(t, en, zh, func(l string) (string, string, bool) {
		switch {
		case strings.Contains(l, `"id":3,`) || strings.HasSuffix(l, `"id":3}`):
			if !strings.Contains(l, `"code":-32601`) {
				t.Errorf("the code changed: %s", l)
			}
			return `"message":"method not found: no/such"`, `"message":"找不到方法：no/such"`, true
		case strings.Contains(l, `"availableModes"`) || strings.Contains(l, `"config_option_update"`):
			// Checked as a whole below: the descriptions and option names
			// change, ids and labels do not.
			return "", "", true
		}
		return "", "", false
	})
	for i, l := range en.lines {
		if !strings.Contains(l, `"availableModes"`) && !strings.Contains(l, `"config_option_update"`) {
			continue
		}
		z := zh.lines[i]
		for _, keep := range []string{`"name":"Manual"`, `"id":"default"`, `"currentModeId":"default"`, `"value":"fake/echo"`} {
			if strings.Contains(l, keep) && !strings.Contains(z, keep) {
				t.Errorf("zh line %d lost %s: %s", i+1, keep, z)
			}
		}
		if !strings.Contains(z, "写文件或运行命令之前先询问") || !strings.Contains(z, `"name":"权限模式"`) {
			t.Errorf("zh line %d is not translated: %s", i+1, z)
		}
	}
}

// Print mode: the denied-call line on stderr changes (checklist 8), the
// exit code, stdout and the model requests do not.
func TestLangGoldenPrint(t *testing.T) {
	run := func(lang string) langRun {
		r := startLang(t, lang, "-p", "go", "--model", "fake/echo", "--no-session", "--output-format", "stream-json")
		return finishLang(t, r)
	}
	en, zh := run("en"), run("zh")
	compareLang(t, en, zh, nil)
	if en.code != 7 || zh.code != 7 {
		t.Errorf("exit en %d zh %d, want 7 (a call was denied)", en.code, zh.code)
	}
	if !strings.Contains(en.stderr, "ama: 1 tool call denied: write ×1") || cjk([]byte(en.stderr)) {
		t.Errorf("en stderr:\n%s", en.stderr)
	}
	if !strings.Contains(zh.stderr, "ama: 1 次工具调用被拒：write ×1") {
		t.Errorf("zh stderr:\n%s", zh.stderr)
	}
}

// --help and a subcommand's -h, recorded in both languages
// (test/fixtures/lang; UPDATE_GOLDEN=1 rewrites them). The English files
// are the help as it was before the catalog held it.
func TestLangGoldenHelp(t *testing.T) {
	for _, tc := range []struct {
		file string
		lang string
		args []string
	}{
		{"help.en.txt", "en", []string{"--help"}},
		{"help.zh.txt", "zh", []string{"--help"}},
		{"explain-help.en.txt", "en", []string{"explain", "-h"}},
		{"explain-help.zh.txt", "zh", []string{"explain", "-h"}},
		{"usage-error.en.txt", "en", []string{"--mode", "nope"}},
		{"usage-error.zh.txt", "zh", []string{"--mode", "nope"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := map[string]string{"AMA_LANG": tc.lang, "HOME": t.TempDir()}
			app.Main(t.Context(), app.Env{Args: tc.args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return env[k] }, Cwd: "/work"})
			compareFile(t, filepath.Join("../test/fixtures/lang", tc.file), append(out.Bytes(), errb.Bytes()...))
		})
	}
}
